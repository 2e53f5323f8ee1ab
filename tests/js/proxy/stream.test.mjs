// streamProxy, successful streams: reconstruction of the assistant message from proxy events.
// Every scenario runs against the reference and, when pkg/ is built, ours, and compares event by event
// (type, fields, a snapshot of `partial` at that moment) plus the final message and the request.
import test from "node:test";
import assert from "node:assert/strict";
import { scenario, sseScript, E, USAGE, types, last, runnableImpls, runProxy } from "./harness.mjs";

const TEXT = ["Hello", ", wor", "ld! ", "🦀 日本語 ", "é\u0301 \u2028 \"q\" \\ end"];

scenario("text: start, text_start/delta/end, done", {
	script: sseScript([E.start(), E.textStart(0), ...TEXT.map((d) => E.textDelta(0, d)), E.textEnd(0), E.done("stop")]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", ...TEXT.map(() => "text_delta"), "text_end", "done"]);
		const final = run.settled;
		assert.deepEqual(final.content, [{ type: "text", text: TEXT.join(""), textSignature: undefined }]);
		assert.ok(Object.hasOwn(final.content[0], "textSignature"), "text_end sets textSignature even when undefined");
		assert.equal(final.stopReason, "stop");
		assert.deepEqual(final.usage, USAGE);
		assert.deepEqual(Object.keys(final), ["role", "stopReason", "content", "api", "provider", "model", "usage", "timestamp", "durationMs"]);
		assert.equal(final.api, "openai-completions");
		assert.equal(final.provider, "openai");
		assert.equal(final.model, "gpt-test-1");
		// the first snapshot is the initial partial.
		assert.deepEqual(run.events[0].partial, {
			role: "assistant",
			stopReason: "pending",
			content: [],
			api: "openai-completions",
			provider: "openai",
			model: "gpt-test-1",
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			timestamp: "<timestamp>",
		});
		// Deltas are reported as sent, and partial grows with them.
		const deltas = run.events.filter((e) => e.type === "text_delta");
		assert.deepEqual(deltas.map((e) => e.delta), TEXT);
		assert.deepEqual(deltas.map((e) => e.partial.content[0].text), TEXT.map((_, i) => TEXT.slice(0, i + 1).join("")));
		const end = run.events.find((e) => e.type === "text_end");
		assert.equal(end.content, TEXT.join(""));
		assert.deepEqual(end.$keys, ["type", "contentIndex", "content", "partial"]);
		assert.deepEqual(last(run).$keys, ["type", "reason", "message"]);
		assert.equal(last(run).reason, "stop");
	},
});

scenario("text: contentSignature becomes textSignature; the server's `content` field is ignored", {
	script: sseScript([
		E.start(),
		E.textStart(0),
		E.textDelta(0, "abc"),
		E.textEnd(0, "sig-text-1", { content: "SERVER SAYS SOMETHING ELSE" }),
		E.done("stop"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [{ type: "text", text: "abc", textSignature: "sig-text-1" }]);
		assert.equal(run.events.find((e) => e.type === "text_end").content, "abc");
	},
});

scenario("thinking with signatures, then text", {
	script: sseScript([
		E.start(),
		E.thinkingStart(0),
		E.thinkingDelta(0, "Let me "),
		E.thinkingDelta(0, "think… 🤔"),
		E.thinkingEnd(0, "sig-think-AAA=="),
		E.textStart(1),
		E.textDelta(1, "Answer."),
		E.textEnd(1, "sig-text-BBB"),
		E.done("stop"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [
			{ type: "thinking", thinking: "Let me think… 🤔", thinkingSignature: "sig-think-AAA==" },
			{ type: "text", text: "Answer.", textSignature: "sig-text-BBB" },
		]);
		const te = run.events.find((e) => e.type === "thinking_end");
		assert.equal(te.content, "Let me think… 🤔");
		assert.equal(te.contentIndex, 0);
	},
});

scenario("thinking without a signature sets thinkingSignature: undefined", {
	script: sseScript([E.start(), E.thinkingStart(0), E.thinkingDelta(0, "hmm"), E.thinkingEnd(0), E.done("stop")]),
	expect(run) {
		assert.deepEqual(run.settled.content, [{ type: "thinking", thinking: "hmm", thinkingSignature: undefined }]);
		assert.ok(Object.hasOwn(run.settled.content[0], "thinkingSignature"));
	},
});

const WEATHER_DELTAS = ['{"city": "Par', 'is", "units"', ': "metric", "days": [1, 2', ", 3], ", '"nested": {"deep": [true, null, {"x": "y"}]}}'];
const WEATHER_ARGS = { city: "Paris", units: "metric", days: [1, 2, 3], nested: { deep: [true, null, { x: "y" }] } };

scenario("tool call: toolcall_start/delta/end; the server toolCall adds thoughtSignature", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "call_1", "get_weather"),
		...WEATHER_DELTAS.map((d) => E.toolDelta(0, d)),
		E.toolEnd(0, { type: "toolCall", id: "call_1", name: "get_weather", arguments: WEATHER_ARGS, thoughtSignature: "ts-abc" }),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [
			{ type: "toolCall", id: "call_1", name: "get_weather", arguments: WEATHER_ARGS, thoughtSignature: "ts-abc" },
		]);
		assert.equal(run.settled.stopReason, "toolUse");
		const start = run.events.find((e) => e.type === "toolcall_start");
		assert.deepEqual(start.partial.content[0], { type: "toolCall", id: "call_1", name: "get_weather", arguments: {}, partialJson: "" });
		assert.deepEqual(start.$keys, ["type", "contentIndex", "partial"]);
		const deltas = run.events.filter((e) => e.type === "toolcall_delta");
		assert.deepEqual(deltas.map((e) => e.partial.content[0].partialJson), WEATHER_DELTAS.map((_, i) => WEATHER_DELTAS.slice(0, i + 1).join("")));
		assert.deepEqual(deltas[0].partial.content[0].arguments, { city: "Par" });
		assert.deepEqual(deltas[1].partial.content[0].arguments, { city: "Paris" });
		// a new block object per delta.
		assert.deepEqual(deltas.map((e) => e.$replacedBlocks), deltas.map(() => [0]));
		const end = run.events.find((e) => e.type === "toolcall_end");
		assert.equal(end.$toolCallIsLiveBlock, true, "toolcall_end.toolCall is the block in partial.content");
		assert.ok(!Object.hasOwn(end.toolCall, "partialJson"), "partialJson is deleted at toolcall_end");
		assert.deepEqual(end.$keys, ["type", "contentIndex", "toolCall", "partial"]);
	},
});

scenario("two tool calls interleaved (after a text block)", {
	script: sseScript([
		E.start(),
		E.textStart(0),
		E.textDelta(0, "Calling two tools."),
		E.textEnd(0),
		E.toolStart(1, "call_a", "read"),
		E.toolStart(2, "call_b", "write"),
		E.toolDelta(1, '{"pa'),
		E.toolDelta(2, '{"path": "out.txt", '),
		E.toolDelta(1, 'th": "in.txt"'),
		E.toolDelta(2, '"text": "hi\\nthere"}'),
		E.toolDelta(1, "}"),
		E.toolEnd(2, { type: "toolCall", id: "call_b", name: "write", arguments: { path: "out.txt", text: "hi\nthere" } }),
		E.toolEnd(1, { type: "toolCall", id: "call_a", name: "read", arguments: { path: "in.txt" }, thoughtSignature: "sig-a" }),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [
			{ type: "text", text: "Calling two tools.", textSignature: undefined },
			{ type: "toolCall", id: "call_a", name: "read", arguments: { path: "in.txt" }, thoughtSignature: "sig-a" },
			{ type: "toolCall", id: "call_b", name: "write", arguments: { path: "out.txt", text: "hi\nthere" } },
		]);
		const deltas = run.events.filter((e) => e.type === "toolcall_delta");
		assert.deepEqual(deltas.map((e) => e.$replacedBlocks), [[1], [2], [1], [2], [1]], "only the addressed block is replaced");
		// Block 1 is untouched while block 2 streams.
		assert.deepEqual(deltas[1].partial.content[1].partialJson, '{"pa');
		assert.deepEqual(deltas[1].partial.content[2].arguments, { path: "out.txt" });
	},
});

scenario("toolcall_end: server fields win (arguments, name, namespace); no deltas before it", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "call_x", "client_name"),
		E.toolDelta(0, '{"a": 1}'),
		E.toolEnd(0, { type: "toolCall", id: "call_x", name: "server_name", arguments: { a: 2, b: [] }, namespace: "mcp.files" }),
		E.toolStart(1, "call_y", "noargs"),
		E.toolEnd(1, { type: "toolCall", id: "call_y", name: "noargs", arguments: {} }),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [
			{ type: "toolCall", id: "call_x", name: "server_name", arguments: { a: 2, b: [] }, namespace: "mcp.files" },
			{ type: "toolCall", id: "call_y", name: "noargs", arguments: {} },
		]);
	},
});

scenario("toolcall_end for a non-toolCall block or a missing index: no event, no error", {
	script: sseScript([
		E.start(),
		E.textStart(0),
		E.textDelta(0, "x"),
		E.toolEnd(0, { type: "toolCall", id: "c", name: "n", arguments: { q: 1 } }),
		E.toolEnd(5, { type: "toolCall", id: "c", name: "n", arguments: {} }),
		E.textEnd(0),
		E.done("stop"),
	]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
		assert.deepEqual(run.settled.content, [{ type: "text", text: "x", textSignature: undefined }]);
	},
});

// Intermediate `arguments` come from pi-ai's parseStreamingJson (partial-json + repair). These deltas stop
// at awkward places: inside a number, a literal, an escape, a \u escape, a raw control character.
const EDGE_DELTAS = [
	'{"n": 1.',
	"5e",
	'3, "t": tr',
	'ue, "f": fa',
	'lse, "z": nu',
	'll, "s": "a\\',
	'"b\\u00',
	'e9\\q',
	"\u0001 raw\nline",
	'", "arr": [1, {"k": "v',
	'"}, [2',
	"]]}",
];

scenario("tool arguments: partial numbers, literals, escapes, raw control characters (repair)", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "call_e", "edge"),
		...EDGE_DELTAS.map((d) => E.toolDelta(0, d)),
		E.toolEnd(0, { type: "toolCall", id: "call_e", name: "edge", arguments: { server: true } }),
		E.done("toolUse"),
	]),
	expect(run) {
		const deltas = run.events.filter((e) => e.type === "toolcall_delta");
		assert.deepEqual(deltas[0].partial.content[0].arguments, {}, '{"n": 1. parses to {} (member dropped)');
		const lastArgs = deltas.at(-1).partial.content[0].arguments;
		assert.deepEqual(lastArgs, { n: 1.5e3, t: true, f: false, z: null, s: 'a"bé\\q\u0001 raw\nline', arr: [1, { k: "v" }, [2]] });
		// toolcall_end's toolCall replaces the arguments wholesale.
		assert.deepEqual(run.settled.content[0].arguments, { server: true });
	},
});

scenario("tool arguments that are not objects: 42, [1, 2], null, false", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "c0", "num"),
		E.toolDelta(0, "4"),
		E.toolDelta(0, "2"),
		E.toolStart(1, "c1", "arr"),
		E.toolDelta(1, "[1, "),
		E.toolDelta(1, "2]"),
		E.toolStart(2, "c2", "nul"),
		E.toolDelta(2, "nul"),
		E.toolDelta(2, "l"),
		E.toolStart(3, "c3", "fal"),
		E.toolDelta(3, "false"),
		E.done("toolUse"),
	]),
	expect(run) {
		const c = run.settled.content;
		// parseStreamingJson(...) || {}: truthy non-objects stay, falsy ones become {}.
		assert.equal(c[0].arguments, 42);
		assert.deepEqual(c[1].arguments, [1, 2]);
		assert.deepEqual(c[2].arguments, {});
		assert.deepEqual(c[3].arguments, {});
		assert.equal(c[0].partialJson, "42", "no toolcall_end: partialJson stays on the block");
	},
});

scenario("tool arguments that are not JSON at all", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "c0", "bad"),
		E.toolDelta(0, '{"a": no'),
		E.toolDelta(0, 'pe, "b": 1}'),
		E.toolStart(1, "c1", "garbage"),
		E.toolDelta(1, "garbage"),
		E.toolStart(2, "c2", "trailing"),
		E.toolDelta(2, '{"a": 1} {"b": 2}'),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content[1].arguments, {});
	},
});

scenario("many small deltas (400 text deltas, unpaced, one write)", {
	script: {
		status: 200,
		lines: [E.start(), E.textStart(0), ...Array.from({ length: 400 }, (_, i) => E.textDelta(0, `${i % 10}`)), E.textEnd(0), E.done("stop")],
	},
	snapshots: false,
	expect(run) {
		assert.equal(run.events.length, 404);
		assert.equal(run.settled.content[0].text, Array.from({ length: 400 }, (_, i) => `${i % 10}`).join(""));
	},
});

scenario("sparse content indices leave holes", {
	script: sseScript([E.start(), E.textStart(2), E.textDelta(2, "third"), E.textEnd(2), E.done("stop")]),
	expect(run) {
		assert.equal(run.settled.content.length, 3);
		assert.equal(run.settled.content[0], "<hole>");
		assert.equal(run.settled.content[1], "<hole>");
		assert.deepEqual(run.settled.content[2], { type: "text", text: "third", textSignature: undefined });
	},
});

scenario("a second *_start at the same index replaces the block", {
	script: sseScript([
		E.start(),
		E.textStart(0),
		E.textDelta(0, "first"),
		E.thinkingStart(0),
		E.thinkingDelta(0, "now thinking"),
		E.thinkingEnd(0, "s"),
		E.done("stop"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [{ type: "thinking", thinking: "now thinking", thinkingSignature: "s" }]);
	},
});

// ----- usage, stop reasons, providerThinkingLevel (done/error) --------------------------------------------------

const BIG_USAGE = {
	input: 1000,
	output: 2000,
	cacheRead: 300,
	cacheWrite: 40,
	cacheWrite1h: 5,
	reasoning: 1500,
	totalTokens: 3340,
	cost: { input: 0.001, output: 0.02, cacheRead: 0.00003, cacheWrite: 0.00004, total: 0.02107 },
};

scenario("done: reason length; usage (with cacheWrite1h, reasoning) replaces the initial usage", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "trunc"), E.done("length", BIG_USAGE)]),
	expect(run) {
		assert.equal(run.settled.stopReason, "length");
		assert.equal(last(run).reason, "length");
		assert.deepEqual(run.settled.usage, BIG_USAGE);
		assert.deepEqual(run.settled.content, [{ type: "text", text: "trunc" }], "no text_end: no textSignature key");
	},
});

scenario("done: reason toolUse with zero usage", {
	script: sseScript([E.start(), E.done("toolUse", { ...USAGE, input: 0, output: 0, totalTokens: 0 })]),
	expect(run) {
		assert.equal(run.settled.stopReason, "toolUse");
		assert.equal(run.settled.usage.totalTokens, 0);
	},
});

scenario("done without usage sets usage to undefined (key kept)", {
	script: sseScript([E.start(), { type: "done", reason: "stop" }]),
	expect(run) {
		assert.ok(Object.hasOwn(run.settled, "usage"));
		assert.equal(run.settled.usage, undefined);
	},
});

scenario("done with an unexpected reason string passes it through", {
	script: sseScript([E.start(), E.done("deferred")]),
	expect(run) {
		assert.equal(run.settled.stopReason, "deferred");
		assert.equal(last(run).reason, "deferred");
	},
});

scenario("providerThinkingLevel on done is copied to the message", {
	script: sseScript([E.start(), E.thinkingStart(0), E.thinkingDelta(0, "…"), E.thinkingEnd(0), E.done("stop", USAGE, { providerThinkingLevel: "high" })]),
	expect(run) {
		assert.equal(run.settled.providerThinkingLevel, "high");
		assert.deepEqual(Object.keys(run.settled), ["role", "stopReason", "content", "api", "provider", "model", "usage", "timestamp", "providerThinkingLevel", "durationMs"]);
	},
});

scenario("providerThinkingLevel: null is copied (only undefined is skipped)", {
	script: sseScript([E.start(), E.done("stop", USAGE, { providerThinkingLevel: null })]),
	expect(run) {
		assert.ok(Object.hasOwn(run.settled, "providerThinkingLevel"));
		assert.equal(run.settled.providerThinkingLevel, null);
	},
});

scenario("providerThinkingLevel on a server error event", {
	script: sseScript([E.start(), E.error("error", "boom", USAGE, { providerThinkingLevel: "low" })]),
	expect(run) {
		assert.equal(run.settled.providerThinkingLevel, "low");
		assert.equal(run.settled.errorMessage, "boom");
		assert.deepEqual(Object.keys(run.settled), ["role", "stopReason", "content", "api", "provider", "model", "usage", "timestamp", "errorMessage", "providerThinkingLevel", "durationMs"]);
	},
});

// ----- consuming the stream ---------------------------------------------------------------------------

const SIMPLE = [E.start(), E.textStart(0), E.textDelta(0, "queued"), E.textEnd(0), E.done("stop")];

scenario("result() alone, without iterating, resolves to the final message", {
	script: sseScript(SIMPLE),
	consume: "result-only",
	expect(run) {
		assert.deepEqual(run.events, []);
		assert.equal(run.settled.content[0].text, "queued");
		assert.equal(run.settled.stopReason, "stop");
	},
});

scenario("iterating after result() resolved still yields every queued event, then ends", {
	script: sseScript(SIMPLE),
	consume: "after-result",
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
		// Every event carries the live partial, which is final by now.
		for (const e of run.events) assert.equal((e.partial ?? e.message).content[0].text, "queued");
	},
});

// ----- independence of concurrent calls ----------------------------------------------------------------------------

test("two concurrent streamProxy calls do not share state (same content index, interleaved tool deltas)", { timeout: 30000 }, async (t) => {
	const scriptFor = (tag) =>
		sseScript(
			[
				E.start(),
				E.toolStart(0, `call_${tag}`, `tool_${tag}`),
				...['{"who": "', tag, '", "n": [', tag === "A" ? "1, 2" : "3", "]}"].map((d) => E.toolDelta(0, d)),
				E.toolEnd(0, { type: "toolCall", id: `call_${tag}`, name: `tool_${tag}` }),
				E.done("toolUse"),
			],
			{ delayMs: tag === "A" ? 7 : 11 },
		);
	for (const impl of await runnableImpls()) {
		await t.test(impl.name, async () => {
			const [a, b] = await Promise.all([runProxy(impl, { script: scriptFor("A") }), runProxy(impl, { script: scriptFor("B") })]);
			assert.deepEqual(a.settled.content, [{ type: "toolCall", id: "call_A", name: "tool_A", arguments: { who: "A", n: [1, 2] } }]);
			assert.deepEqual(b.settled.content, [{ type: "toolCall", id: "call_B", name: "tool_B", arguments: { who: "B", n: [3] } }]);
		});
	}
});

scenario("leaving the for-await loop early (break) does not stop the stream: result() still completes", {
	script: sseScript(SIMPLE),
	breakAfterEvents: 2,
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start"]);
		assert.equal(run.settled.stopReason, "stop");
		assert.equal(run.settled.content[0].text, "queued");
	},
});
