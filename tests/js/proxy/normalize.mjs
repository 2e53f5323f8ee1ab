// Snapshots, normalisation and diffing for the streamProxy tests. No Node imports: the browser test loads
// this file in the page and in a Worker too.
//
// Normalisation (applied to both implementations alike):
//   - an assistant message's `timestamp` (Date.now() at request time) becomes "<timestamp>" when it is a
//     number; `durationMs` becomes "<durationMs>" when it is a non-negative integer (presence is kept,
//     a bad value stays visible);
//   - an `errorMessage` becomes "<runtime error>" only when the scenario says the message comes from the
//     JavaScript runtime (fetch failures, JSON.parse errors, TypeErrors, the body stream's "terminated"):
//     their wording is not ours to fix and may differ between V8/undici and our Rust code. Messages that
//     streamProxy itself writes ("Proxy error: …", "Request aborted by user", "Received … for …",
//     "Connection closed by proxy server …") are always compared verbatim.
// Snapshots keep holes of sparse arrays ("<hole>"), `undefined`-valued keys, key order, and mark
// functions and class instances, so that a difference in any of these shows up in the diff.

export const RUNTIME_ERROR = "<runtime error>";

/** Deep copy that keeps undefined-valued keys, array holes and key order; marks exotic values. */
export function snapshot(value, seen = new Set()) {
	if (value === null || value === undefined) return value;
	const t = typeof value;
	if (t === "function") return "<function>";
	if (t === "symbol") return `<symbol ${String(value.description)}>`;
	if (t === "bigint") return `<bigint ${value}>`;
	if (t !== "object") return value;
	if (seen.has(value)) return "<circular>";
	seen.add(value);
	try {
		if (Array.isArray(value)) {
			const out = new Array(value.length);
			for (let i = 0; i < value.length; i++) out[i] = i in value ? snapshot(value[i], seen) : "<hole>";
			const extra = Object.keys(value).filter((k) => !/^(0|[1-9]\d*)$/.test(k));
			if (extra.length) out.push({ "<non-index keys>": Object.fromEntries(extra.map((k) => [k, snapshot(value[k], seen)])) });
			return out;
		}
		const proto = Object.getPrototypeOf(value);
		const out = {};
		if (proto !== Object.prototype && proto !== null) {
			out["<class>"] = value?.constructor?.name ?? "?";
		}
		for (const key of Object.keys(value)) out[key] = snapshot(value[key], seen);
		return out;
	} finally {
		seen.delete(value);
	}
}

/** Normalises an assistant message snapshot in place (see the header) and returns it. */
export function normalizeMessage(m, { runtimeError = false } = {}) {
	if (!m || typeof m !== "object" || Array.isArray(m)) return m;
	if (typeof m.timestamp === "number") m.timestamp = "<timestamp>";
	if (Number.isInteger(m.durationMs) && m.durationMs >= 0) m.durationMs = "<durationMs>";
	if (runtimeError && typeof m.errorMessage === "string" && m.errorMessage.length > 0) m.errorMessage = RUNTIME_ERROR;
	return m;
}

const MESSAGE_FIELD = { done: "message", error: "error" };

/** The field of an event that carries the message (`partial`, `message` or `error`). */
export function messageField(ev) {
	if (ev && Object.hasOwn(MESSAGE_FIELD, ev.type) && ev[MESSAGE_FIELD[ev.type]] !== undefined) return MESSAGE_FIELD[ev.type];
	return "partial";
}

/**
 * Records one event at the moment the consumer receives it. `prevBlocks` is the content array (by identity)
 * seen at the previous event; the record lists the indices whose block object was replaced since then.
 * Returns { record, blocks } (blocks = the live block objects now, for the next call).
 */
export function recordEvent(ev, prevBlocks, opts = {}) {
	const field = messageField(ev);
	const msg = ev?.[field];
	const record = {};
	for (const key of Object.keys(ev ?? {})) {
		if (key === field) record[key] = normalizeMessage(snapshot(msg), opts);
		else record[key] = snapshot(ev[key]);
	}
	record["$keys"] = Object.keys(ev ?? {});
	const content = Array.isArray(msg?.content) ? msg.content : [];
	const blocks = Array.from({ length: content.length }, (_, i) => content[i]);
	const replaced = [];
	for (let i = 0; i < blocks.length; i++) {
		if (prevBlocks && i < prevBlocks.length && prevBlocks[i] !== undefined && blocks[i] !== prevBlocks[i]) replaced.push(i);
	}
	record["$replacedBlocks"] = replaced;
	if (ev?.type === "toolcall_end") record["$toolCallIsLiveBlock"] = ev.toolCall === content[ev.contentIndex];
	return { record, blocks, message: msg };
}

/** The event record without the message snapshot (for comparisons that must not depend on chunk timing). */
export function withoutSnapshot(record) {
	const out = { ...record };
	delete out.partial;
	delete out["$replacedBlocks"];
	if (out.type !== "done" && out.type !== "error") return out;
	delete out.message;
	delete out.error;
	return out;
}

/** Key-order signature: every object's keys, in order, with their paths. */
export function keyOrder(value, path = "$", out = []) {
	if (value && typeof value === "object") {
		if (Array.isArray(value)) value.forEach((v, i) => keyOrder(v, `${path}[${i}]`, out));
		else {
			out.push(`${path}: ${Object.keys(value).join(",")}`);
			for (const k of Object.keys(value)) keyOrder(value[k], `${path}.${k}`, out);
		}
	}
	return out;
}

function show(v) {
	if (v === undefined) return "undefined";
	try {
		const s = JSON.stringify(v);
		return s === undefined ? String(v) : s.length > 300 ? s.slice(0, 300) + "…" : s;
	} catch {
		return String(v);
	}
}

/**
 * The first difference between two snapshots (depth-first, keys of `expected` first), as
 * { path, expected, actual } or undefined. Distinguishes missing keys from undefined values.
 */
export function firstDiff(expected, actual, path = "$") {
	if (Object.is(expected, actual)) return undefined;
	const te = typeof expected;
	const ta = typeof actual;
	if (te !== "object" || ta !== "object" || expected === null || actual === null) {
		return { path, expected: show(expected), actual: show(actual) };
	}
	if (Array.isArray(expected) !== Array.isArray(actual)) {
		return { path, expected: Array.isArray(expected) ? "an array" : "an object", actual: Array.isArray(actual) ? "an array" : "an object" };
	}
	if (Array.isArray(expected)) {
		const n = Math.min(expected.length, actual.length);
		for (let i = 0; i < n; i++) {
			const d = firstDiff(expected[i], actual[i], `${path}[${i}]`);
			if (d) return d;
		}
		if (expected.length !== actual.length) {
			return {
				path: `${path}.length`,
				expected: `${expected.length}${expected.length > n ? ` (next: ${show(expected[n])})` : ""}`,
				actual: `${actual.length}${actual.length > n ? ` (next: ${show(actual[n])})` : ""}`,
			};
		}
		return undefined;
	}
	for (const k of Object.keys(expected)) {
		if (!Object.hasOwn(actual, k)) return { path: `${path}.${k}`, expected: show(expected[k]), actual: "<missing key>" };
		const d = firstDiff(expected[k], actual[k], `${path}.${k}`);
		if (d) return d;
	}
	for (const k of Object.keys(actual)) {
		if (!Object.hasOwn(expected, k)) return { path: `${path}.${k}`, expected: "<missing key>", actual: show(actual[k]) };
	}
	return undefined;
}

/** firstDiff on values, then on key order. Returns a one-line description or undefined. */
export function describeDiff(expected, actual, label = "") {
	const d = firstDiff(expected, actual);
	if (d) return `${label}first difference at ${d.path}: expected ${d.expected}, actual ${d.actual}`;
	const ke = keyOrder(expected);
	const ka = keyOrder(actual);
	for (let i = 0; i < Math.max(ke.length, ka.length); i++) {
		if (ke[i] !== ka[i]) return `${label}key order differs: expected "${ke[i]}", actual "${ka[i]}"`;
	}
	return undefined;
}
