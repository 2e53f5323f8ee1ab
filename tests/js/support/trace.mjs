// Recording and normalisation of what an implementation does, so that two implementations can be
// compared with deepStrictEqual.
//
// Normalisation rules:
//  - `timestamp` values produced by a clock (>= 1e12, i.e. Date.now()) become "<now>"; the small fixed
//    timestamps written by the scripts are kept verbatim (so "copied from the script" vs "stamped by the
//    loop" stays visible).
//  - `durationMs` becomes `true` when it is a non-negative integer (present/absent is kept structurally;
//    any other value is kept as is so a bad value shows up).
//  - functions -> "[Function]", AbortSignal -> "[AbortSignal]"/"[AbortSignal aborted]", Set -> {"[Set]": [...]},
//    Map -> {"[Map]": [[k, v]...]}, Error -> {"[Error]": name, message}, cycles -> "[Circular]".
//  - object identity is recorded through ordinals: `tr.id(obj)` returns the same small number for the
//    same object and a new number (in first-seen order) for a new one. Two traces agree only if both
//    implementations share / copy the same objects at the same places.
//
// deepStrictEqual ignores key order, so `keyOrderDiff(a, b)` is used in addition: key order is part of
// the contract wherever objects end up in JSON (messages, tool results, events).

export const NOW_THRESHOLD = 1e12;

export function signalState(signal) {
	if (signal === undefined) return "none";
	if (signal === null) return "null";
	if (typeof AbortSignal !== "undefined" && signal instanceof AbortSignal) return signal.aborted ? "aborted" : "live";
	return `not-a-signal:${typeof signal}`;
}

export function errorText(e) {
	if (e instanceof Error) return { name: e.name, message: e.message };
	return { thrown: snap(e) };
}

/** Deep, normalised copy of a value (see the rules above). */
export function snap(value, seen = new Set()) {
	if (value === null || value === undefined) return value;
	const t = typeof value;
	if (t === "function") return "[Function]";
	if (t === "symbol") return `[Symbol ${value.description ?? ""}]`;
	if (t === "bigint") return `[BigInt ${value}]`;
	if (t !== "object") return value;
	if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) {
		return value.aborted ? "[AbortSignal aborted]" : "[AbortSignal]";
	}
	if (seen.has(value)) return "[Circular]";
	seen.add(value);
	try {
		if (Array.isArray(value)) {
			const out = new Array(value.length);
			for (let i = 0; i < value.length; i++) out[i] = i in value ? snap(value[i], seen) : "[hole]";
			return out;
		}
		if (value instanceof Error) return { "[Error]": value.name, message: value.message };
		if (value instanceof Set) return { "[Set]": [...value].map((v) => snap(v, seen)) };
		if (value instanceof Map) return { "[Map]": [...value].map(([k, v]) => [snap(k, seen), snap(v, seen)]) };
		if (value instanceof Promise) return "[Promise]";
		if (ArrayBuffer.isView(value)) return { "[Bytes]": Array.from(value) };
		const out = {};
		for (const key of Object.keys(value)) {
			let v;
			try {
				v = value[key];
			} catch (e) {
				out[key] = { "[getter threw]": e?.message ?? String(e) };
				continue;
			}
			if (key === "timestamp" && typeof v === "number" && v >= NOW_THRESHOLD) out[key] = "<now>";
			else if (key === "durationMs" && Number.isInteger(v) && v >= 0) out[key] = true;
			else out[key] = snap(v, seen);
		}
		return out;
	} finally {
		seen.delete(value);
	}
}

/** First path where the key order of two snapshots differs (assuming the key sets are equal), or undefined. */
export function keyOrderDiff(a, b, path = "$") {
	if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return undefined;
	if (Array.isArray(a) !== Array.isArray(b)) return undefined;
	if (Array.isArray(a)) {
		for (let i = 0; i < Math.min(a.length, b.length); i++) {
			const d = keyOrderDiff(a[i], b[i], `${path}[${i}]`);
			if (d) return d;
		}
		return undefined;
	}
	const ka = Object.keys(a);
	const kb = Object.keys(b);
	if (ka.length === kb.length && ka.every((k) => kb.includes(k)) && ka.join("\u0000") !== kb.join("\u0000")) {
		return { path, expected: ka, actual: kb };
	}
	for (const k of ka) {
		if (k in b) {
			const d = keyOrderDiff(a[k], b[k], `${path}.${k}`);
			if (d) return d;
		}
	}
	return undefined;
}

/** Summary of an AssistantMessageEvent (the loop forwards the original object). */
function summarizeAme(ame, tr) {
	if (!ame || typeof ame !== "object") return snap(ame);
	const out = { type: ame.type, keys: Object.keys(ame) };
	for (const k of ["contentIndex", "delta", "content", "reason"]) if (k in ame) out[k] = snap(ame[k]);
	if ("toolCall" in ame) out.toolCall = snap(ame.toolCall);
	if ("partial" in ame) out.partialId = tr.id(ame.partial);
	if ("message" in ame) out.messageId = tr.id(ame.message);
	if ("error" in ame) out.errorId = tr.id(ame.error);
	return out;
}

export class Trace {
	constructor() {
		this.events = [];
		this.hooks = [];
		this.log = []; // interleaved order of events and hook calls: "ev:turn_end", "hook:finishTurn"
		this.notes = {};
		this._ids = new Map();
		this._next = 1;
	}

	/** Identity ordinal of an object (0 for non-objects). */
	id(obj) {
		if (obj === null || (typeof obj !== "object" && typeof obj !== "function")) return 0;
		let n = this._ids.get(obj);
		if (n === undefined) {
			n = this._next++;
			this._ids.set(obj, n);
		}
		return n;
	}

	/** A new ordinal that no object maps to (an object counted as new although it was seen before). */
	freshId() {
		return this._next++;
	}

	/**
	 * Records nothing (events, hooks, notes) after the first event of type `type`: for a scenario whose
	 * comparison with 1.4.0 ends there (what follows is a documented deviation, tested on its own).
	 */
	stopAfter(type) {
		this._stopAfter = type;
	}

	/** Record an AgentEvent. `extra` (already plain data) is merged in, e.g. Agent state at that moment. */
	event(ev, extra) {
		if (this._stopped) return { ignored: true };
		if (ev?.type === this._stopAfter) this._stopped = true;
		const rec = this.summarize(ev);
		if (extra) Object.assign(rec, extra);
		this.events.push(rec);
		this.log.push(`ev:${rec.type}${rec.message?.role ? `:${rec.message.role}` : ""}${rec.toolCallId ? `:${rec.toolCallId}` : ""}`);
		return rec;
	}

	summarize(ev) {
		if (!ev || typeof ev !== "object") return { bad: snap(ev) };
		const rec = { type: ev.type, keys: Object.keys(ev) };
		switch (ev.type) {
			case "message_start":
			case "message_end":
				rec.message = snap(ev.message);
				rec.messageId = this.id(ev.message);
				break;
			case "message_update":
				rec.message = snap(ev.message);
				rec.messageId = this.id(ev.message);
				rec.ame = summarizeAme(ev.assistantMessageEvent, this);
				rec.messageIsPartial = ev.message === ev.assistantMessageEvent?.partial;
				rec.sharesPartialContent = ev.message?.content === ev.assistantMessageEvent?.partial?.content;
				break;
			case "turn_end":
				rec.messageId = this.id(ev.message);
				rec.message = { role: ev.message?.role, stopReason: ev.message?.stopReason, errorMessage: ev.message?.errorMessage };
				rec.toolResultsId = this.id(ev.toolResults);
				rec.toolResultIds = Array.isArray(ev.toolResults) ? ev.toolResults.map((m) => this.id(m)) : snap(ev.toolResults);
				break;
			case "agent_end":
				rec.messagesId = this.id(ev.messages);
				rec.messageIds = Array.isArray(ev.messages) ? ev.messages.map((m) => this.id(m)) : snap(ev.messages);
				rec.roles = Array.isArray(ev.messages) ? ev.messages.map((m) => m?.role) : undefined;
				break;
			case "tool_execution_start":
				rec.toolCallId = ev.toolCallId;
				rec.toolName = ev.toolName;
				rec.args = snap(ev.args);
				rec.argsId = this.id(ev.args);
				break;
			case "tool_execution_update":
				rec.toolCallId = ev.toolCallId;
				rec.toolName = ev.toolName;
				rec.args = snap(ev.args);
				rec.argsId = this.id(ev.args);
				rec.partialResult = snap(ev.partialResult);
				rec.partialResultId = this.id(ev.partialResult);
				break;
			case "tool_execution_end":
				rec.toolCallId = ev.toolCallId;
				rec.toolName = ev.toolName;
				rec.result = snap(ev.result);
				rec.resultId = this.id(ev.result);
				rec.isError = ev.isError;
				if ("durationMs" in ev) rec.durationMs = snap({ durationMs: ev.durationMs }).durationMs;
				break;
			default: {
				// agent_start, turn_start and anything unexpected: keep every field
				const rest = { ...ev };
				delete rest.type;
				if (Object.keys(rest).length) rec.fields = snap(rest);
			}
		}
		return rec;
	}

	hook(name, summary) {
		if (this._stopped) return;
		this.hooks.push(summary === undefined ? { name } : { name, ...summary });
		this.log.push(`hook:${name}`);
	}

	note(key, value) {
		if (this._stopped) return;
		this.notes[key] = value;
	}

	/** Plain data for comparison. */
	result(extra = {}) {
		// For agentLoop streams the consumer runs behind the producer: the interleaving of hook calls
		// and consumed events is scheduling, not contract, so it is not compared there.
		const log = this.observational ? "omitted: observational stream" : this.log;
		return { log, events: this.events, hooks: this.hooks, notes: this.notes, ...extra };
	}
}

/** Convenience: an emit sink that records every event into `tr` (and optionally runs `onEvent`). */
export function recordingSink(tr, onEvent) {
	return async (ev) => {
		tr.event(ev);
		if (onEvent) await onEvent(ev);
	};
}

/** Drain an agentLoop stream: records events as they are consumed, then the result. */
export async function drainStream(tr, stream) {
	const consumed = [];
	for await (const ev of stream) {
		consumed.push(ev);
		tr.event(ev);
	}
	const result = await stream.result();
	const last = consumed[consumed.length - 1];
	tr.note("resultId", tr.id(result));
	tr.note("resultIsAgentEndMessages", last?.type === "agent_end" && last.messages === result);
	tr.note("resultRoles", Array.isArray(result) ? result.map((m) => m?.role) : snap(result));
	return { consumed, result };
}

/** Type sequence of recorded events (for hand-written checks). */
export function types(trace) {
	return trace.events.map((e) => e.type);
}

/** Compact one-line labels: "message_start:user", "tool_execution_end:call_1", ... */
export function labels(trace) {
	return trace.events.map((e) => {
		if (e.type.startsWith("message_")) return `${e.type}:${e.message?.role}`;
		if (e.type.startsWith("tool_execution_")) return `${e.type}:${e.toolCallId}`;
		return e.type;
	});
}

const isIdKey = (k) => k === "ids" || k.endsWith("Id") || k.endsWith("Ids");

/**
 * Renumber identity ordinals by first appearance in a deterministic walk of the plain trace, so that
 * ids do not depend on when an object was first seen (e.g. a hook running before the consumer of an
 * observational stream saw the event). The mapping is a bijection, so equalities between ids survive.
 */
export function canonicalIds(plain) {
	const map = new Map();
	const remap = (n) => {
		if (n === 0) return 0;
		if (!map.has(n)) map.set(n, map.size + 1);
		return map.get(n);
	};
	const walk = (v) => {
		if (Array.isArray(v)) {
			v.forEach(walk);
			return;
		}
		if (!v || typeof v !== "object") return;
		for (const k of Object.keys(v)) {
			const x = v[k];
			if (isIdKey(k) && typeof x === "number") v[k] = remap(x);
			else if (isIdKey(k) && Array.isArray(x) && x.every((e) => typeof e === "number")) v[k] = x.map(remap);
			else walk(x);
		}
	};
	// events first: they define the natural numbering; then everything else in key order
	if (plain && typeof plain === "object" && !Array.isArray(plain) && Array.isArray(plain.events)) {
		walk(plain.events);
		for (const k of Object.keys(plain)) {
			if (k === "events") continue;
			if (isIdKey(k) && typeof plain[k] === "number") plain[k] = remap(plain[k]);
			else if (isIdKey(k) && Array.isArray(plain[k]) && plain[k].every((e) => typeof e === "number")) plain[k] = plain[k].map(remap);
			else walk(plain[k]);
		}
	} else {
		walk(plain);
	}
	return plain;
}
