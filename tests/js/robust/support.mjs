// Shared helpers for the robustness suite (tests/js/robust/*.test.mjs).
//
// Everything here runs against the built package in pkg/ ("ours"); the reference
// (@earendil-works/pi-agent-core 1.4.0) is loaded too, for the comparisons the
// hostile-value suite makes where the reference neither hangs nor crashes.
//
//   - unhandled rejections and uncaught exceptions are collected per test
//     (`trackUnhandled()`), never left to crash the file;
//   - `transcriptProblems(messages)` lists every broken tool-call/tool-result
//     pairing in a transcript (the invariant the abort sweep checks at every k);
//   - `textStream(impl, text)` / `toolStream(...)` are small stream functions
//     for follow-up runs ("the agent can run again").
import assert from "node:assert/strict";
import { ours as loadedOurs, reference } from "../support/impls.mjs";
import { MODEL, scripted, strictCheck, text, zeroUsage } from "../support/scripted.mjs";

export { assert, reference, MODEL };

/** The package under test (pkg/index.js). The robust suite requires it. */
export const ours = loadedOurs;
if (!ours) throw new Error("tests/js/robust needs the built package: run `node scripts/build.mjs --dev` first");
export const pkg = ours.module;

// ---- unhandled rejections ------------------------------------------------------------

const unhandledLog = [];
let tracking = false;
process.on("unhandledRejection", (reason) => {
	unhandledLog.push(`unhandledRejection: ${describe(reason)}`);
});
process.on("uncaughtException", (error) => {
	unhandledLog.push(`uncaughtException: ${describe(error)}`);
	// never silent: a test file's own bug must still show (and fail the file)
	process.stderr.write(`[robust] uncaught exception: ${error?.stack ?? describe(error)}\n`);
	if (!tracking) process.exitCode = 1; // e.g. while a test file is still being evaluated

});

export function describe(v) {
	if (v instanceof Error) return `${v.name}: ${v.message}`;
	try {
		return typeof v === "symbol" ? v.toString() : typeof v === "bigint" ? `${v}n` : String(v);
	} catch {
		return Object.prototype.toString.call(v);
	}
}

/** Marks the log position; `take()` returns (and forgets) what was reported since. */
export function trackUnhandled() {
	tracking = true;
	const start = unhandledLog.length;
	return {
		take() {
			return unhandledLog.splice(start);
		},
	};
}

/** Lets pending microtasks, immediates and 0-ms timers run (where a late rejection would surface). */
export async function settle(rounds = 3) {
	for (let i = 0; i < rounds; i++) {
		await new Promise((r) => setImmediate(r));
		await new Promise((r) => setTimeout(r, 0));
	}
}

export function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

/** Rejects after `ms` (timer cleared when `p` settles). */
export function within(p, ms, label) {
	let timer;
	const t = new Promise((_, rej) => {
		timer = setTimeout(() => rej(new Error(`HANG: ${label} did not settle within ${ms} ms`)), ms);
	});
	return Promise.race([Promise.resolve(p), t]).finally(() => clearTimeout(timer));
}

/** Awaits `p` and reports how it settled: { ok: true, value } | { ok: false, error }. */
export async function outcome(p, ms = 5000, label = "operation") {
	try {
		return { ok: true, value: await within(p, ms, label) };
	} catch (error) {
		if (error instanceof Error && error.message.startsWith("HANG:")) throw error;
		return { ok: false, error };
	}
}

/** True when `e` (or its message) is a wasm trap, i.e. a Rust panic under panic=abort. */
export function isWasmTrap(e) {
	const text = e instanceof Error ? `${e.name}: ${e.message}` : describe(e);
	return /RuntimeError|unreachable|panicked|internal error \(a bug/i.test(text) || (typeof WebAssembly !== "undefined" && e instanceof WebAssembly.RuntimeError);
}

// ---- console.error capture (the panic hook reports through console.error) -------------

/** Captures console.error while `fn` runs; returns [result, lines]. */
export async function withConsoleErrors(fn) {
	const original = console.error;
	const lines = [];
	console.error = (...args) => lines.push(args.map(describe).join(" "));
	try {
		return [await fn(), lines];
	} finally {
		console.error = original;
	}
}

// ---- transcript invariants -----------------------------------------------------------

const TERMINAL_FAILURE = new Set(["error", "aborted"]);

/**
 * Problems with tool-call/result pairing in `messages`:
 *  - an assistant message that ended normally (stopReason not error/aborted) must have exactly one
 *    toolResult per toolCall block, placed after it and before the next assistant message;
 *  - an assistant message that failed or was aborted never runs its calls: no results for them
 *    (`strictFailed`), or at most one each (default: streamProxy may mark a message aborted after the fact);
 *  - no toolResult may answer an unknown id.
 */
export function transcriptProblems(messages, { strictFailed = false } = {}) {
	const problems = [];
	const assistants = [];
	messages.forEach((m, i) => {
		if (m && m.role === "assistant") assistants.push(i);
	});
	const seenResults = new Map();
	messages.forEach((m, i) => {
		if (m && m.role === "toolResult") seenResults.set(i, m);
	});
	const claimed = new Set();
	for (let a = 0; a < assistants.length; a++) {
		const idx = assistants[a];
		const end = a + 1 < assistants.length ? assistants[a + 1] : messages.length;
		const msg = messages[idx];
		const calls = Array.isArray(msg.content) ? msg.content.filter((c) => c && c.type === "toolCall") : [];
		const window = [];
		for (let j = idx + 1; j < end; j++) if (messages[j]?.role === "toolResult") window.push(j);
		for (const callBlock of calls) {
			const matches = window.filter((j) => messages[j].toolCallId === callBlock.id);
			matches.forEach((j) => claimed.add(j));
			if (TERMINAL_FAILURE.has(msg.stopReason)) {
				// Normally none (a failed or aborted answer runs no calls). streamProxy can rewrite a message to "aborted" after its `done` was
				// delivered and its tools ran (as 1.4.0 does: an abort after `done` rewrites the proxy's message), so at most one is allowed.
				if (matches.length > (strictFailed ? 0 : 1)) problems.push(`message ${idx} (${msg.stopReason}) call ${String(callBlock.id)}: ${matches.length} result(s), expected ${strictFailed ? "none" : "at most 1"}`);
			} else if (matches.length !== 1) {
				problems.push(`message ${idx} call ${String(callBlock.id)} (${callBlock.name}): ${matches.length} toolResult(s), expected exactly 1`);
			}
		}
	}
	for (const [j, m] of seenResults) {
		if (!claimed.has(j)) problems.push(`toolResult ${j} (${String(m.toolCallId)}) answers no tool call of the preceding assistant message`);
	}
	return problems;
}

/** Event-level invariants of one Agent run (the list of event objects one listener saw). */
export function eventProblems(events) {
	const problems = [];
	const types = events.map((e) => e.type);
	const ends = types.filter((t) => t === "agent_end").length;
	if (ends !== 1) problems.push(`${ends} agent_end events, expected 1`);
	if (types.at(-1) !== "agent_end") problems.push(`last event is ${types.at(-1)}, expected agent_end`);
	const open = new Map();
	for (const e of events) {
		if (e.type === "tool_execution_start") open.set(e.toolCallId, (open.get(e.toolCallId) ?? 0) + 1);
		if (e.type === "tool_execution_end") {
			const n = open.get(e.toolCallId) ?? 0;
			if (n === 0) problems.push(`tool_execution_end for ${String(e.toolCallId)} without a start`);
			else open.set(e.toolCallId, n - 1);
		}
	}
	for (const [id, n] of open) if (n > 0) problems.push(`tool_execution_start for ${String(id)} without tool_execution_end`);
	return problems;
}

// ---- stream functions ---------------------------------------------------------------

/** A stream function answering every request with `reply` (a plain text message). */
export function textStream(impl, reply = "again") {
	return (model, context) => {
		strictCheck(context);
		const stream = impl.createAssistantMessageEventStream();
		const message = {
			role: "assistant",
			content: [{ type: "text", text: reply }],
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage: zeroUsage(),
			stopReason: "stop",
			timestamp: Date.now(),
		};
		queueMicrotask(() => {
			stream.push({ type: "start", partial: { ...message, content: [] } });
			stream.push({ type: "done", reason: "stop", message });
		});
		return stream;
	};
}

/** A final assistant message with the given content blocks (for stream functions built by hand). */
export function assistantMessage(model, content, stopReason = "stop", extra = {}) {
	return {
		role: "assistant",
		content,
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: zeroUsage(),
		stopReason,
		timestamp: Date.now(),
		...extra,
	};
}

/** A stream function playing `responses` in order (then plain text), each a list of content blocks or a function. */
export function blocksStream(impl, responses, fallback = "done") {
	let i = 0;
	const fn = (model, context, options) => {
		strictCheck(context);
		const entry = responses[i++];
		const stream = impl.createAssistantMessageEventStream();
		const content = entry === undefined ? [{ type: "text", text: fallback }] : typeof entry === "function" ? entry(context, options) : entry;
		const hasCall = Array.isArray(content) && content.some((c) => c && c.type === "toolCall");
		const message = assistantMessage(model, content, hasCall ? "toolUse" : "stop");
		queueMicrotask(() => {
			stream.push({ type: "start", partial: { ...message, content: [] } });
			stream.push({ type: "done", reason: message.stopReason, message });
		});
		return stream;
	};
	fn.calls = () => i;
	return fn;
}

/** Runs one plain prompt on `agent` (with `streamFn` swapped in if given) and checks it ended normally. */
export async function assertRunsAgain(agent, label = "follow-up run", ms = 5000) {
	const before = agent.state.messages.length;
	const events = [];
	const off = agent.subscribe((e) => {
		events.push(e.type);
	});
	try {
		await within(agent.prompt("are you still there?"), ms, label);
		await within(agent.waitForIdle(), ms, `${label}: waitForIdle`);
	} finally {
		off();
	}
	assert.equal(events.at(-1), "agent_end", `${label}: ends with agent_end (got ${events.join(",")})`);
	assert.equal(agent.state.isStreaming, false, `${label}: isStreaming false`);
	const last = agent.state.messages.at(-1);
	assert.ok(agent.state.messages.length > before, `${label}: transcript grew`);
	assert.equal(last.role, "assistant", `${label}: last message is the assistant's`);
	assert.equal(last.stopReason, "stop", `${label}: stopReason stop (errorMessage ${last.errorMessage})`);
}

export { scripted, text, zeroUsage };
