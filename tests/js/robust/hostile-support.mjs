// Case runner for the hostile-value suite: runs one Agent scenario on an
// implementation and summarises what happened as plain data that can be compared
// between ours and the reference (no timestamps, no durations, errors as text).
import { MODEL, strictCheck } from "../support/scripted.mjs";
import { snap as traceSnap } from "../support/trace.mjs";

/** trace.mjs's snap, except that a `__proto__` key stays an own data key (no prototype change). */
export function snap(value, seen = new Set()) {
	if (value === null || typeof value !== "object" || seen.has(value)) return traceSnap(value);
	if (Array.isArray(value) || value instanceof Error || value instanceof Map || value instanceof Set || ArrayBuffer.isView(value)) {
		if (!Array.isArray(value)) return traceSnap(value);
		seen.add(value);
		try {
			return value.map((v) => snap(v, seen));
		} finally {
			seen.delete(value);
		}
	}
	seen.add(value);
	try {
		const out = {};
		let keys;
		try {
			keys = Object.keys(value);
		} catch (e) {
			return { "[keys threw]": e?.message ?? String(e) };
		}
		for (const key of keys) {
			let v;
			try {
				v = value[key];
			} catch (e) {
				v = { "[getter threw]": e?.message ?? String(e) };
			}
			Object.defineProperty(out, key, { value: key === "timestamp" || key === "durationMs" ? typeof v : snap(v, seen), enumerable: true, writable: true, configurable: true });
		}
		return out;
	} finally {
		seen.delete(value);
	}
}
import { assistantMessage, describe, ours, reference, settle, trackUnhandled, within } from "./support.mjs";

export const REF_MS = 1500; // the reference may hang: give up on it after this
export const OURS_MS = 4000; // ours must never hang

/** Text of an error the way the loop reports it (an `Error`'s message, any other value described). */
export function errText(e) {
	return e instanceof Error ? e.message : describe(e);
}

function safe(fn, fallback = "[threw]") {
	try {
		return fn();
	} catch (e) {
		return `${fallback}: ${errText(e)}`;
	}
}

function blockSummary(b) {
	return safe(() => {
		if (!b || typeof b !== "object") return snap(b);
		if (b.type === "text") return { text: typeof b.text === "string" && b.text.length > 200 ? `<${b.text.length} chars>` : b.text };
		if (b.type === "toolCall") return { toolCall: snap(b.id), name: b.name };
		return { type: b.type };
	});
}

/** A transcript as comparable data. */
export function summariseMessages(messages) {
	return safe(() =>
		messages.map((m) =>
			safe(() => {
				switch (m?.role) {
					case "assistant":
						return {
							role: "assistant",
							stopReason: m.stopReason,
							errorMessage: m.errorMessage,
							content: Array.isArray(m.content) ? m.content.map(blockSummary) : snap(m.content),
						};
					case "toolResult":
						return {
							role: "toolResult",
							toolCallId: snap(m.toolCallId),
							toolName: m.toolName,
							isError: m.isError,
							content: Array.isArray(m.content) ? m.content.map(blockSummary) : snap(m.content),
						};
					case "system":
						return { role: "system", toolsAdded: m.toolsAdded?.length, toolsRemoved: m.toolsRemoved?.length };
					default:
						return { role: safe(() => m.role) };
				}
			}),
		),
	);
}

/**
 * Runs a case. `build(impl, rec)` returns
 *   { options?, tools?, initialState?, streamFn? | responses?, input?, after?(agent, rec) }
 * where `responses` is a list of content-block lists (or functions (context, options) => blocks)
 * and `rec` collects observations (rec.params: what each execute received).
 */
export async function runCase(impl, build, ms) {
	const rec = { params: [], notes: [] };
	const unhandled = trackUnhandled();
	const out = { impl: impl.name };
	const consoleErrors = [];
	const originalError = console.error;
	console.error = (...args) => consoleErrors.push(args.map(describe).join(" "));
	let agent;
	try {
		const c = build(impl, rec);
		const streamFn = c.streamFn ?? responsesStream(impl, c.responses ?? [], { strict: c.strict });
		try {
			agent = new impl.Agent({
				initialState: { model: MODEL, tools: c.tools ?? [], ...(c.initialState ?? {}) },
				streamFn,
				...(c.options ?? {}),
			});
		} catch (e) {
			out.constructorThrew = { name: e?.name, message: errText(e) };
			return out;
		}
		const events = [];
		// Ours answers every unanswered tool call of a failed run before its failure
		// events (a documented deviation); those answers are counted, not compared.
		agent.subscribe((e) => {
			if (isRepair(e)) {
				out.repairs = (out.repairs ?? 0) + 1;
				return;
			}
			events.push(e.type);
		});
		out.events = events;
		try {
			await within(Promise.resolve().then(() => agent.prompt(c.input ?? "go")), ms, `${impl.name} prompt()`);
			out.settled = "resolved";
		} catch (e) {
			if (e instanceof Error && e.message.startsWith("HANG:")) out.settled = "hang";
			else out.settled = { rejected: errText(e) };
		}
		if (out.settled !== "hang") {
			try {
				await within(agent.waitForIdle(), ms, "waitForIdle");
			} catch {
				out.idleHang = true;
			}
		}
		out.isStreaming = agent.state.isStreaming;
		out.messages = summariseMessages(agent.state.messages.filter((m) => !isRepairMessage(m)));
		out.params = rec.params;
		if (c.after) out.after = await c.after(agent, rec);
	} finally {
		await settle();
		console.error = originalError;
		out.unhandled = unhandled.take();
		out.consoleErrors = consoleErrors;
	}
	return out;
}

/**
 * Stream function answering with the given content lists, in order, then "done"; every context it gets
 * must be valid for a strict provider unless `strict` is false.
 */
export function responsesStream(impl, responses, { strict = true } = {}) {
	let i = 0;
	return (model, context, options) => {
		if (strict !== false) strictCheck(context);
		const entry = responses[i++];
		const stream = impl.createAssistantMessageEventStream();
		const content = entry === undefined ? [{ type: "text", text: "done" }] : typeof entry === "function" ? entry(context, options) : entry;
		const hasCall = Array.isArray(content) && content.some((c) => c && c.type === "toolCall");
		const message = assistantMessage(model, content, hasCall ? "toolUse" : "stop");
		queueMicrotask(() => {
			stream.push({ type: "start", partial: { ...message, content: [] } });
			stream.push({ type: "done", reason: message.stopReason, message });
		});
		return stream;
	};
}

export const toolCall = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });

/** A tool recording what execute receives (`rec.params`) and returning `result(params)`. */
export function recTool(rec, name, { parameters = { type: "object" }, result, ...rest } = {}) {
	return {
		name,
		label: name,
		description: `${name} tool`,
		parameters,
		async execute(id, params) {
			rec.params.push(snap(params));
			return result ? result(params, id) : { content: [{ type: "text", text: `${name} ok` }], details: {} };
		},
		...rest,
	};
}

/** What ours must never do: a wasm trap / panic report anywhere in the outcome. */
export function trapProblems(out) {
	const text = JSON.stringify(out, (k, v) => (typeof v === "bigint" ? `${v}n` : v));
	const problems = [];
	if (/unreachable|RuntimeError|panicked|internal error \(a bug/i.test(text)) problems.push(`wasm trap or panic: ${text.slice(0, 400)}`);
	return problems;
}

/** The run of ours ended cleanly: resolved, not streaming, agent_end last, no unhandled rejection, no trap. */
export function cleanEndProblems(out) {
	const p = trapProblems(out);
	if (out.constructorThrew) return p;
	if (out.settled === "hang") p.push("prompt() hung");
	if (out.idleHang) p.push("waitForIdle() hung");
	if (out.isStreaming) p.push("isStreaming still true");
	// prompt() may reject (as the reference does for a revoked Proxy input, or when even the failure
	// handling throws); it must settle, and the agent must be idle.
	const rejected = out.settled?.rejected !== undefined;
	if (out.events && !rejected && out.events.at(-1) !== "agent_end") p.push(`last event ${out.events.at(-1)}, expected agent_end`);
	if (out.unhandled?.length) p.push(`unhandled: ${out.unhandled.join(" | ")}`);
	return p;
}

/** The comparable part of an outcome. */
export function comparable(out) {
	const { impl, unhandled, consoleErrors, repairs, ...rest } = out;
	return rest;
}

const REPAIR_TEXT = "Tool call was not completed: the run ended early";
const isRepairResult = (r) => {
	try {
		const t = r?.content?.[0]?.text;
		return typeof t === "string" && t.startsWith(REPAIR_TEXT);
	} catch {
		return false;
	}
};
function isRepairMessage(m) {
	try {
		return m?.role === "toolResult" && isRepairResult(m);
	} catch {
		return false;
	}
}
function isRepair(e) {
	if (e.type === "message_start" || e.type === "message_end") return isRepairMessage(e.message);
	if (e.type === "tool_execution_end") return isRepairResult(e.result);
	return false;
}

export { ours, reference };
