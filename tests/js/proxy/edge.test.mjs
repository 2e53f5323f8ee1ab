// streamProxy, edges where a re-implementation easily drifts from the JavaScript semantics the reference
// gets for free: TextDecoder (BOM only at the very start, replacement of invalid sequences, flush),
// String.prototype.trim (which characters are whitespace), dynamic property access (contentIndex as a
// string), `+=` on undefined/non-string deltas, unusual field values, big lines, odd options.
import assert from "node:assert/strict";
import { scenario, sseScript, E, types, last } from "./harness.mjs";

const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const DONE = `data: ${JSON.stringify(E.done("stop", ZERO))}\n\n`;
const HEAD = 'data: {"type":"start"}\n\ndata: {"type":"text_start","contentIndex":0}\n\n';
const paced = (chunks) => ({ status: 200, chunks: chunks.map((data) => ({ data, delayMs: 8 })) });

// ----- TextDecoder ------------------------------------------------------------------------------------------

scenario("TextDecoder: a BOM split over the first three 1-byte reads is still dropped", {
	script: { status: 200, chunks: [Buffer.from([0xef]), Buffer.from([0xbb]), Buffer.from([0xbf]), HEAD, DONE].map((data) => ({ data, delayMs: 15 })) },
	snapshots: false,
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "done"]);
	},
});

scenario("TextDecoder: a BOM later in the body is kept (that line does not start with `data: ` and is ignored)", {
	script: paced([HEAD, '\uFEFFdata: {"type":"text_delta","contentIndex":0,"delta":"IGNORED"}\n\n', 'data: {"type":"text_delta","contentIndex":0,"delta":"kept"}\n\n', DONE]),
	expect(run) {
		assert.equal(run.settled.content[0].text, "kept");
	},
});

{
	// Each invalid sequence sits inside a JSON string; TextDecoder replaces maximal subparts with U+FFFD.
	const bad = [
		[0xc0, 0xaf], // overlong
		[0xed, 0xa0, 0x80], // UTF-16 surrogate encoded in UTF-8
		[0xf0, 0x9f, 0x98], // truncated 4-byte sequence, then ASCII
		[0x80], // lone continuation byte
		[0xf5, 0x80], // lead byte beyond U+10FFFF
		[0xe6, 0x97], // truncated 3-byte sequence at a chunk end (see below)
	];
	const parts = [];
	for (const b of bad) parts.push(Buffer.from('data: {"type":"text_delta","contentIndex":0,"delta":"<'), Buffer.from(b), Buffer.from('>"}\n\n'));
	const body = Buffer.concat([Buffer.from(HEAD), ...parts, Buffer.from(DONE)]);
	scenario("TextDecoder: invalid UTF-8 (overlong, surrogate, truncated, lone continuation, > U+10FFFF) becomes U+FFFD like WHATWG", {
		script: { status: 200, body, chunking: 5, delayMs: 0 },
		snapshots: false,
		expect(run) {
			assert.equal(
				run.settled.content[0].text,
				["<\uFFFD\uFFFD>", "<\uFFFD\uFFFD\uFFFD>", "<\uFFFD>", "<\uFFFD>", "<\uFFFD\uFFFD>", "<\uFFFD>"].join(""),
			);
		},
	});
}

scenario("TextDecoder: the last line (no newline) ends in a truncated character -> the flush adds U+FFFD -> JSON error", {
	script: paced([HEAD, 'data: {"type":"text_delta","contentIndex":0,"delta":"x"}\n\n', Buffer.concat([Buffer.from(DONE.trimEnd()), Buffer.from([0xf0, 0x9f])])]),
	runtimeError: true,
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "error"]);
		assert.equal(run.settled.stopReason, "error");
	},
});

// ----- String.prototype.trim --------------------------------------------------------------------------------

scenario("trim(): U+FEFF, U+00A0, U+3000, U+2028, \\v, \\f around the JSON are trimmed", {
	script: sseScript([
		E.start(),
		E.textStart(0),
		'data: \uFEFF\u00A0\u3000\u2028\v\f{"type":"text_delta","contentIndex":0,"delta":"trimmed"}\uFEFF\u00A0\u3000\u2029\v\f',
		"",
		"data: \u00A0\u3000\uFEFF",
		"",
		E.done("stop"),
	]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "done"]);
		assert.equal(run.settled.content[0].text, "trimmed");
	},
});

scenario("trim(): U+0085 (NEL) is not JavaScript whitespace -> JSON error", {
	script: sseScript([E.start(), 'data: {"type":"text_start","contentIndex":0}\u0085', "", E.done("stop")]),
	runtimeError: true,
	expect(run) {
		assert.deepEqual(types(run), ["start", "error"]);
	},
});

scenario("`data: ` must be followed by the payload on the same line: `data: \\t{…}` (tab) is trimmed", {
	script: sseScript([E.start(), 'data: \t{"type":"text_start","contentIndex":0}', "", E.done("stop")]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "done"]);
	},
});

// ----- dynamic property access and `+=` ---------------------------------------------------------------------------

scenario("edge: contentIndex as a numeric string addresses the same block (content[\"1\"])", {
	script: sseScript([
		E.start(),
		{ type: "text_start", contentIndex: "0" },
		{ type: "text_delta", contentIndex: "0", delta: "str-index" },
		{ type: "text_end", contentIndex: 0 },
		{ type: "toolcall_start", contentIndex: "1", id: "c", toolName: "t" },
		{ type: "toolcall_delta", contentIndex: "1", delta: '{"k": 1}' },
		{ type: "toolcall_end", contentIndex: 1, toolCall: { type: "toolCall", id: "c", name: "t", arguments: { k: 1 } } },
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [
			{ type: "text", text: "str-index", textSignature: undefined },
			{ type: "toolCall", id: "c", name: "t", arguments: { k: 1 } },
		]);
		assert.equal(run.events[2].contentIndex, "0", "the event echoes the index as sent");
	},
});

scenario("edge: a missing or non-string delta is appended with JavaScript `+=` (\"undefined\", \"5\", \"null\")", {
	script: sseScript([
		E.start(),
		E.textStart(0),
		{ type: "text_delta", contentIndex: 0 },
		{ type: "text_delta", contentIndex: 0, delta: 5 },
		{ type: "text_delta", contentIndex: 0, delta: null },
		E.thinkingStart(1),
		{ type: "thinking_delta", contentIndex: 1, delta: true },
		E.done("stop"),
	]),
	expect(run) {
		assert.equal(run.settled.content[0].text, "undefined5null");
		assert.equal(run.settled.content[1].thinking, "true");
		assert.ok(Object.hasOwn(run.events[2], "delta") && run.events[2].delta === undefined, "the event's delta key is present");
	},
});

scenario("edge: a toolcall_delta without delta appends \"undefined\" to partialJson", {
	script: sseScript([E.start(), E.toolStart(0, "c", "t"), E.toolDelta(0, '{"a": "x'), { type: "toolcall_delta", contentIndex: 0 }, E.done("toolUse")]),
	expect(run) {
		assert.equal(run.settled.content[0].partialJson, '{"a": "xundefined');
		assert.deepEqual(run.settled.content[0].arguments, { a: "xundefined" });
	},
});

scenario("edge: toolcall_start without id/toolName sets both keys to undefined", {
	script: sseScript([E.start(), { type: "toolcall_start", contentIndex: 0 }, E.done("toolUse")]),
	expect(run) {
		const b = run.settled.content[0];
		assert.deepEqual(Object.keys(b), ["type", "id", "name", "arguments", "partialJson"]);
		assert.equal(b.id, undefined);
		assert.equal(b.name, undefined);
	},
});

scenario("edge: done without reason sets stopReason: undefined", {
	script: sseScript([E.start(), { type: "done", usage: ZERO }]),
	expect(run) {
		assert.ok(Object.hasOwn(run.settled, "stopReason"));
		assert.equal(run.settled.stopReason, undefined);
		assert.equal(last(run).reason, undefined);
	},
});

scenario("edge: server error event with an object errorMessage and a string usage", {
	script: sseScript([E.start(), { type: "error", reason: "error", errorMessage: { code: 42, detail: "x" }, usage: "n/a" }]),
	expect(run) {
		assert.deepEqual(run.settled.errorMessage, { code: 42, detail: "x" });
		assert.equal(run.settled.usage, "n/a");
	},
});

// ----- size ---------------------------------------------------------------------------------------------------------

{
	const big = "x".repeat(1 << 20) + "🦀";
	scenario("a 1 MiB text delta on one line, delivered in 64 KiB writes", {
		script: { status: 200, lines: [E.start(), E.textStart(0), E.textDelta(0, big), E.textEnd(0), E.done("stop")], chunking: 65536, delayMs: 0 },
		snapshots: false,
		timeoutMs: 20000,
		expect(run) {
			assert.equal(run.settled.content[0].text.length, big.length);
			assert.equal(run.settled.content[0].text, big);
		},
	});
}

// ----- options -------------------------------------------------------------------------------------------------------

scenario("options.signal: null is accepted (no abort wiring)", {
	script: sseScript([E.start(), E.done("stop")]),
	options: { signal: null },
	expect(run) {
		assert.equal(run.settled.stopReason, "stop");
	},
});

scenario("options.proxyUrl undefined -> fetch(\"undefined/api/stream\") fails (runtime message)", {
	noServer: true,
	proxyUrl: () => undefined,
	runtimeError: true,
	expect(run, impl) {
		assert.deepEqual(types(run), ["error"]);
		assert.equal(run.settled.stopReason, "error");
		if (impl === "reference") assert.match(run.raw.errorMessage, /URL/);
	},
});

scenario("HTTP 500 whose body never finishes, aborted: the status-line message with reason aborted", {
	script: { status: 500, chunks: ['{"error": "never fini'], end: "hang", hangMs: 3000, headers: { "content-type": "application/json" } },
	abort: { afterMs: 200 },
	expect(run) {
		assert.deepEqual(types(run), ["error"]);
		assert.equal(last(run).reason, "aborted");
		assert.equal(run.settled.stopReason, "aborted");
		assert.equal(run.settled.errorMessage, "Proxy error: 500 Internal Server Error");
	},
});

// ----- tool-call state per content index -------------------------------------------------------------------------------
// The reference keeps the streamed text in block.partialJson and nothing else: a new toolcall_start at the same
// index starts from "", and after toolcall_end (which deletes partialJson) `partialJson += delta` starts from
// undefined (ours fails that delta, see deviations.test.mjs). An implementation that keeps its own parser
// state per index must reset it the same way.

scenario("edge: toolcall_start again at the same index restarts the arguments", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "c1", "first"),
		E.toolDelta(0, '{"a": 1, "keep": {"x": [1'),
		E.toolStart(0, "c2", "second"),
		E.toolDelta(0, '{"b": '),
		E.toolDelta(0, "2}"),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [{ type: "toolCall", id: "c2", name: "second", arguments: { b: 2 }, partialJson: '{"b": 2}' }]);
	},
});

scenario("edge: text block, then a tool call at the same index, then text again, then a tool call again", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "c1", "t"),
		E.toolDelta(0, '{"old": true'),
		E.textStart(0),
		E.textDelta(0, "text"),
		E.toolStart(0, "c2", "t"),
		E.toolDelta(0, '{"new": [1, 2]}'),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content[0].arguments, { new: [1, 2] });
	},
});

// A toolcall_delta after toolcall_end: 1.4.0 appends it to `undefined` and replaces the finished call's
// arguments; ours ends the stream with an error, as 1.5.0 and later do (deviations.test.mjs).

scenario("edge: toolcall_end twice at the same index (second one merges again, partialJson already gone)", {
	script: sseScript([
		E.start(),
		E.toolStart(0, "c1", "t"),
		E.toolDelta(0, '{"a": 1}'),
		E.toolEnd(0, { type: "toolCall", id: "c1", name: "t", arguments: { a: 1 } }),
		E.toolEnd(0, { type: "toolCall", id: "c1", name: "t2", thoughtSignature: "late-sig" }),
		E.done("toolUse"),
	]),
	expect(run) {
		assert.deepEqual(run.settled.content, [{ type: "toolCall", id: "c1", name: "t2", arguments: { a: 1 }, thoughtSignature: "late-sig" }]);
		assert.deepEqual(types(run).filter((x) => x === "toolcall_end").length, 2);
	},
});

// ----- delta lines read without JSON.parse ------------------------------------------------------------------
// Ours recognises text/thinking delta lines itself; whatever it takes must give what JSON.parse gives, and
// every near miss must fall back to JSON.parse (its value, or its error).

const THINK_HEAD = 'data: {"type":"thinking_start","contentIndex":1}\n';
const deltaLines = [
	// First of its read: a decoder that drops a leading BOM would lose it.
	'data: {"type":"text_delta","contentIndex":0,"delta":"\uFEFFbom|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"\\ufeffescaped bom|"}\r',
	'data: {"type":"text_delta","contentIndex":0,"delta":"plain|"}',
	'data: { "delta" :\t"spaced|" ,\r"contentIndex" : 0 , "type" : "text_delta" }',
	'data: {"contentIndex":0,"type":"text_delta","delta":"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041 \\u00E9 \\u20ac \\ud83d\\ude00 \\u0000|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"raw é € 😀 \u2028 \u007f|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":""}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"lone high \\ud800|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"lone low \\udc00|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"high then A \\ud83d\\u0041|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"high at end \\ud83d"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"first","delta":"duplicate wins|"}',
	'data: {"type":"text_delta","type":"text_delta","contentIndex":0,"delta":"duplicate type|"}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"extra member|","extra":[1,{"a":null}]}',
	'data: {"__proto__":{"x":1},"type":"text_delta","contentIndex":0,"delta":"proto member|"}',
	'data: {"type":"text_delta","contentIndex":0.0,"delta":"index 0.0|"}',
	'data: {"type":"text_delta","contentIndex":0e0,"delta":"index 0e0|"}',
	'data: {"type":"text_delta","contentIndex":-0,"delta":"index -0|"}',
	'data: {"type":"text\\u005fdelta","contentIndex":0,"delta":"escaped type|"}',
	'data: {"typ\\u0065":"text_delta","contentIndex":0,"delta":"escaped key|"}',
	'data: {"type":"thinking_delta","contentIndex":1,"delta":"think|"}',
	'data: {"delta":"think 2|","type":"thinking_delta","contentIndex":1}',
	'data: {"type":"text_delta","contentIndex":0,"delta":"text_delta","type":"text_delta"}',
	'data: {"type":"text_deltas","contentIndex":0,"delta":"not a delta type"}',
].join("\n\n");
for (const [name, chunking] of [["one write", "whole"], ["1-byte writes", 1], ["random writes", { random: 7, max: 40 }]]) {
	scenario(`delta lines: odd but valid JSON (order, spaces, escapes, surrogates, duplicates, extra keys, index forms), ${name}`, {
		script: { status: 200, body: `${HEAD}${THINK_HEAD}\n${deltaLines}\n\n${DONE}`, chunking, delayMs: 0 },
		snapshots: false,
		expect(run) {
			assert.equal(types(run).filter((t) => t === "text_delta").length, 21);
			assert.equal(types(run).filter((t) => t === "thinking_delta").length, 2);
			assert.equal(run.settled.content[1].thinking, "think|think 2|");
			assert.ok(run.settled.content[0].text.startsWith('\uFEFFbom|\uFEFFescaped bom|plain|spaced|esc " \\ / \b \f \n \r \t A é € 😀 \u0000|raw'));
		},
	});
}

const failing = [
	["a text_delta for a thinking block", '{"type":"text_delta","contentIndex":1,"delta":"x"}', false],
	["a thinking_delta for a text block", '{"type":"thinking_delta","contentIndex":0,"delta":"x"}', false],
	["a 9-digit index with no block", '{"type":"text_delta","contentIndex":999999999,"delta":"x"}', false],
	["a 10-digit index with no block", '{"type":"text_delta","contentIndex":4294967297,"delta":"x"}', false],
	["a leading zero in the index", '{"type":"text_delta","contentIndex":00,"delta":"x"}', true],
	["a raw tab in the delta", '{"type":"text_delta","contentIndex":0,"delta":"a\tb"}', true],
	["an invalid escape", '{"type":"text_delta","contentIndex":0,"delta":"a\\xb"}', true],
	["a short \\u escape", '{"type":"text_delta","contentIndex":0,"delta":"a\\u12"}', true],
	["text after the object", '{"type":"text_delta","contentIndex":0,"delta":"a"} x', true],
	["a missing closing brace", '{"type":"text_delta","contentIndex":0,"delta":"a"', true],
	["a trailing comma", '{"type":"text_delta","contentIndex":0,"delta":"a",}', true],
];
for (const [what, json, runtimeError] of failing) {
	scenario(`delta lines: ${what} ends the stream like the reference, after the deltas before it in the same read`, {
		script: {
			status: 200,
			body: `${HEAD}${THINK_HEAD}\ndata: {"type":"text_delta","contentIndex":0,"delta":"a"}\n\ndata: {"type":"thinking_delta","contentIndex":1,"delta":"b"}\n\ndata: ${json}\n\ndata: {"type":"text_delta","contentIndex":0,"delta":"never"}\n\n${DONE}`,
			chunking: "whole",
		},
		snapshots: false,
		runtimeError,
		expect(run) {
			assert.deepEqual(types(run), ["start", "text_start", "thinking_start", "text_delta", "thinking_delta", "error"]);
			assert.equal(run.settled.content[0].text, "a");
		},
	});
}
