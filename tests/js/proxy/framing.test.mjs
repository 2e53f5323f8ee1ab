// streamProxy, the byte level: chunk boundaries anywhere (1-byte, 7-byte, seeded random),
// multi-byte UTF-8 split across reads, \r\n, SSE lines that are not `data: `, a final line without newline,
// BOM and invalid UTF-8 (TextDecoder semantics), unknown event types (console.warn), the URL join.
import test from "node:test";
import assert from "node:assert/strict";
import { scenario, sseScript, E, types, last, runnableImpls, runProxy, assertInvariants, comparable } from "./harness.mjs";
import { describeDiff } from "./normalize.mjs";

// ----- the same stream in every chunking ----------------------------------------------------------------------

const MIXED = [
	E.start(),
	E.thinkingStart(0),
	E.thinkingDelta(0, "Ünïcödé thinking: 🧠🧠"),
	E.thinkingEnd(0, "sig=="),
	E.textStart(1),
	E.textDelta(1, "日本語のテキスト "),
	E.textDelta(1, "and emoji 👩‍👩‍👧‍👦 and \u2028 separators"),
	E.textEnd(1, "tsig"),
	E.toolStart(2, "call_ü", "tööl"),
	E.toolDelta(2, '{"q": "caf'),
	E.toolDelta(2, 'é ☕", "n": [1, 2.5, -3e2]}'),
	E.toolEnd(2, { type: "toolCall", id: "call_ü", name: "tööl", arguments: { q: "café ☕", n: [1, 2.5, -300] }, thoughtSignature: "😀" }),
	E.done("toolUse", undefined, { providerThinkingLevel: "medium" }),
];

const CHUNKINGS = [
	["one event per write, paced (baseline)", { chunking: "item", delayMs: 8 }],
	["the whole body in one write", { chunking: "whole" }],
	["1-byte writes", { chunking: 1, delayMs: 0 }],
	["7-byte writes", { chunking: 7, delayMs: 0 }],
	["random writes, seed 1", { chunking: { random: 1, max: 13 }, delayMs: 0 }],
	["random writes, seed 42", { chunking: { random: 42, max: 5 }, delayMs: 0 }],
	["random writes, seed 1234, \\r\\n line endings", { chunking: { random: 1234, max: 23 }, delayMs: 0, eol: "\r\n" }],
];

test("chunking: the same stream cut into any chunks gives identical events and result", { timeout: 60000 }, async (t) => {
	const impls = await runnableImpls();
	const baselines = {};
	for (const impl of impls) {
		await t.test(impl.name, async (st) => {
			let baseline;
			for (const [label, chunking] of CHUNKINGS) {
				await st.test(label, async () => {
					const run = await runProxy(impl, { script: { status: 200, lines: MIXED, ...chunking } });
					assertInvariants(run);
					if (!baseline) {
						baseline = run;
						baselines[impl.name] = run;
						assert.equal(run.settled.content[1].text, "日本語のテキスト and emoji 👩‍👩‍👧‍👦 and \u2028 separators");
						assert.equal(run.settled.providerThinkingLevel, "medium");
						return;
					}
					// Snapshots of `partial` depend on how many events one read carries, so compare without them.
					const msg = describeDiff(comparable(baseline, { snapshots: false }), comparable(run, { snapshots: false }), `${label} vs baseline: `);
					if (msg) assert.fail(msg);
				});
			}
		});
	}
	if (baselines.reference && baselines.ours) {
		await t.test("ours matches reference (baseline, with snapshots)", () => {
			const msg = describeDiff(comparable(baselines.reference), comparable(baselines.ours));
			if (msg) assert.fail(msg);
		});
	} else if (impls.length === 2) {
		await t.test("ours matches reference (baseline, with snapshots)", () => assert.fail("one of the baseline runs failed"));
	}
});

// ----- UTF-8 ------------------------------------------------------------------------------------------------

/** Splits a string's UTF-8 bytes at the given byte offsets. */
function splitBytes(text, offsets) {
	const buf = Buffer.from(text);
	const out = [];
	let prev = 0;
	for (const o of offsets) {
		out.push(buf.subarray(prev, o));
		prev = o;
	}
	out.push(buf.subarray(prev));
	return out;
}

{
	const body =
		'data: {"type":"start"}\n\ndata: {"type":"text_start","contentIndex":0}\n\n' +
		'data: {"type":"text_delta","contentIndex":0,"delta":"🦀日本"}\n\n' +
		'data: {"type":"text_end","contentIndex":0}\n\ndata: {"type":"done","reason":"stop","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}\n\n';
	const crab = Buffer.from(body).indexOf(Buffer.from("🦀"));
	const ri = Buffer.from(body).indexOf(Buffer.from("日"));
	scenario("UTF-8: a 4-byte and a 3-byte character split across reads (TextDecoder stream mode)", {
		// Splits after the 1st and 3rd byte of 🦀 and after the 2nd byte of 日, 30 ms apart.
		script: { status: 200, chunks: splitBytes(body, [crab + 1, crab + 3, ri + 2]).map((data) => ({ data, delayMs: 30 })) },
		snapshots: false,
		expect(run) {
			assert.equal(run.settled.content[0].text, "🦀日本");
			assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
		},
	});
}

scenario("UTF-8: a BOM at the start of the body is dropped by TextDecoder", {
	script: sseScript(["\uFEFF" + 'data: {"type":"start"}', "", E.textStart(0), E.textDelta(0, "x"), E.textEnd(0), E.done("stop")]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
	},
});

scenario("UTF-8: invalid bytes become U+FFFD", {
	script: {
		status: 200,
		chunks: [
			'data: {"type":"start"}\n\ndata: {"type":"text_start","contentIndex":0}\n\n',
			Buffer.concat([Buffer.from('data: {"type":"text_delta","contentIndex":0,"delta":"a'), Buffer.from([0xff, 0xc3]), Buffer.from('b"}\n\n')]),
			'data: {"type":"text_end","contentIndex":0}\n\n',
			'data: {"type":"done","reason":"stop","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}\n\n',
		].map((data) => ({ data, delayMs: 8 })),
	},
	expect(run) {
		assert.equal(run.settled.content[0].text, "a\uFFFD\uFFFDb");
	},
});

scenario("UTF-8: a body that ends inside a multi-byte character (decoder flush)", {
	script: {
		status: 200,
		chunks: [
			'data: {"type":"start"}\n\ndata: {"type":"text_start","contentIndex":0}\n\n',
			'data: {"type":"text_delta","contentIndex":0,"delta":"z"}\n\n',
			'data: {"type":"done","reason":"stop","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}\n',
			Buffer.from("🦀").subarray(0, 2),
		].map((data) => ({ data, delayMs: 8 })),
	},
	expect(run) {
		// The flushed "\uFFFD" is a non-empty final line that does not start with "data: ": ignored.
		assert.equal(last(run).type, "done");
		assert.equal(run.settled.stopReason, "stop");
	},
});

// ----- line endings and SSE lines that are not `data: ` ----------------------------------------------------------------

scenario("\\r\\n line endings", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "crlf"), E.textEnd(0), E.done("length")], { eol: "\r\n" }),
	expect(run) {
		assert.equal(run.settled.content[0].text, "crlf");
		assert.equal(run.settled.stopReason, "length");
	},
});

scenario("bare \\r line endings are not line breaks (everything is one line)", {
	script: {
		status: 200,
		body: 'data: {"type":"start"}\r\rdata: {"type":"done","reason":"stop","usage":null}\r\r',
	},
	runtimeError: true,
	expect(run, impl) {
		// `data: {"type":"start"}\r\rdata: …` is one line; trim() keeps the inner \r\r -> JSON error.
		assert.deepEqual(types(run), ["error"]);
		if (impl === "reference") assert.match(run.raw.errorMessage, /JSON/);
	},
});

scenario("comments, event:, id:, retry:, blank lines, `data:` without a space, other casings are ignored", {
	script: sseScript([
		": this is a comment",
		":",
		"event: message",
		"id: 1",
		"retry: 1000",
		"",
		E.start(),
		"event: text_start",
		E.textStart(0),
		'data:{"type":"text_delta","contentIndex":0,"delta":"IGNORED (no space)"}',
		'DATA: {"type":"text_delta","contentIndex":0,"delta":"IGNORED (upper case)"}',
		' data: {"type":"text_delta","contentIndex":0,"delta":"IGNORED (leading space)"}',
		"data: ",
		"data:     ",
		'data:   {"type":"text_delta","contentIndex":0,"delta":"kept (extra spaces are trimmed)"}',
		'data: {"type":"text_delta","contentIndex":0,"delta":" and trailing spaces"}    \t',
		"\t",
		E.textEnd(0),
		": keep-alive",
		E.done("stop"),
		": after done",
	]),
	expect(run) {
		assert.equal(run.settled.content[0].text, "kept (extra spaces are trimmed) and trailing spaces");
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]);
		assert.deepEqual(run.warnings, []);
	},
});

scenario("the final line without a newline at EOF is processed", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "eof"), E.textEnd(0), E.done("stop")], { finalNewline: false }),
	expect(run) {
		assert.equal(last(run).type, "done");
		assert.equal(run.settled.stopReason, "stop");
	},
});

scenario("the final line without a newline at EOF, in one write with everything else", {
	script: { status: 200, lines: [E.start(), E.textStart(0), E.textDelta(0, "eof"), E.done("stop")], finalNewline: false, eol: "\r\n" },
	snapshots: false,
	expect(run) {
		assert.equal(last(run).type, "done");
		assert.equal(run.settled.content[0].text, "eof");
	},
});

// ----- unknown events (console.warn) ---------------------------------------------------------------------------

scenario("unknown event types: console.warn, no event, the stream continues", {
	script: sseScript([
		E.start(),
		{ type: "ping" },
		{ type: "text_start_v2", contentIndex: 0 },
		{ noType: true },
		"data: 42",
		"",
		'data: "start"',
		"",
		E.textStart(0),
		E.textDelta(0, "ok"),
		E.textEnd(0),
		E.done("stop"),
	]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
		assert.deepEqual(run.warnings, [
			["Unhandled proxy event type: ping"],
			["Unhandled proxy event type: text_start_v2"],
			["Unhandled proxy event type: undefined"],
			["Unhandled proxy event type: undefined"],
			["Unhandled proxy event type: undefined"],
		]);
	},
});

// ----- the URL ----------------------------------------------------------------------------------------------------

scenario("proxyUrl with a trailing slash posts to //api/stream (plain concatenation)", {
	routes: { "//api/stream": sseScript([E.start(), E.done("stop")]) },
	proxyUrl: (url) => `${url}/`,
	expect(run) {
		assert.equal(run.request.path, "//api/stream");
		assert.equal(run.settled.stopReason, "stop");
	},
});

scenario("proxyUrl with a path prefix", {
	routes: { "/tenant/42/api/stream": sseScript([E.start(), E.done("stop")]) },
	proxyUrl: (url) => `${url}/tenant/42`,
	expect(run) {
		assert.equal(run.request.path, "/tenant/42/api/stream");
	},
});

// ----- several events in one read ------------------------------------------------------------------------------------
// All lines of one read are processed (and pushed) synchronously before the consumer runs, so every event of
// that read shows `partial` as it is after the whole read.

scenario("several events in one read: each snapshot shows partial after the whole read", {
	script: {
		status: 200,
		chunks: [
			{ data: [E.start(), E.textStart(0), E.textDelta(0, "one "), E.textDelta(0, "two ")].map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""), delayMs: 5 },
			{ data: [E.textDelta(0, "three"), E.textEnd(0, "s"), E.done("stop")].map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""), delayMs: 40 },
		],
	},
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
		assert.deepEqual(run.events.slice(0, 4).map((e) => e.partial.content[0]?.text), ["one two ", "one two ", "one two ", "one two "]);
		assert.deepEqual(run.events.slice(4, 6).map((e) => e.partial.content[0].text), ["one two three", "one two three"]);
	},
});
