// streamProxy, failure paths: HTTP errors, reading errors and abort, protocol errors
//, events after the terminal one and the catch that overwrites a delivered result.
//
// Messages that come from the JavaScript runtime (fetch failed, the abort DOMException, JSON.parse's
// SyntaxError text, TypeErrors, undici's "terminated") are normalised to "<runtime error>" before the two
// implementations are compared (`runtimeError: true`): their wording belongs to V8/undici, not to the
// contract, and our Rust code may phrase them differently. The raw strings are printed as diagnostics
// (`# reference runtime error message: …`). Everything streamProxy writes itself is compared verbatim.
import assert from "node:assert/strict";
import { closedPortUrl } from "../../support/sse-server.mjs";
import { scenario, sseScript, E, USAGE, types, last } from "./harness.mjs";

const EMPTY_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** expect() for a request that failed before any event: one error event, empty content. */
function failedBeforeStream(message, reason = "error") {
	return (run) => {
		assert.deepEqual(types(run), ["error"]);
		assert.equal(last(run).reason, reason);
		assert.deepEqual(last(run).$keys, ["type", "reason", "error"]);
		const m = run.settled;
		assert.equal(m.stopReason, reason);
		if (message !== undefined) assert.equal(m.errorMessage, message);
		assert.deepEqual(m.content, []);
		assert.deepEqual(m.usage, EMPTY_USAGE);
		assert.deepEqual(Object.keys(m), ["role", "stopReason", "content", "api", "provider", "model", "usage", "timestamp", "errorMessage", "durationMs"]);
	};
}

// ----- HTTP errors ------------------------------------------------------------------------------------

scenario("HTTP 500 with {error: string} -> Proxy error: <error>", {
	script: { status: 500, json: { error: "upstream down" } },
	expect: failedBeforeStream("Proxy error: upstream down"),
});

scenario("HTTP 500 with {error: \"\"} (falsy) -> status line", {
	script: { status: 500, json: { error: "" } },
	expect: failedBeforeStream("Proxy error: 500 Internal Server Error"),
});

scenario("HTTP 502 with a text/html body -> Proxy error: 502 Bad Gateway", {
	script: { status: 502, body: "<html><body>Bad gateway from nginx</body></html>", headers: { "content-type": "text/html" } },
	expect: failedBeforeStream("Proxy error: 502 Bad Gateway"),
});

scenario("HTTP 401 JSON without `error` -> Proxy error: 401 Unauthorized", {
	script: { status: 401, json: { message: "bad token", code: 401 } },
	expect: failedBeforeStream("Proxy error: 401 Unauthorized"),
});

scenario("HTTP 429 with a custom status text and {error: 42} -> Proxy error: 42", {
	script: { status: 429, statusText: "Slow Down", json: { error: 42 } },
	expect: failedBeforeStream("Proxy error: 42"),
});

scenario("HTTP 404 with an empty body and a custom status text", {
	script: { status: 404, statusText: "No Such Proxy", body: "" },
	expect: failedBeforeStream("Proxy error: 404 No Such Proxy"),
});

scenario("HTTP 503 with an SSE body is still an HTTP error (the body is not streamed)", {
	script: { status: 503, lines: [E.start(), E.textStart(0), E.textDelta(0, "x"), E.done("stop")] },
	expect: failedBeforeStream("Proxy error: 503 Service Unavailable"),
});

// ----- network and body -----------------------------------------------------------------------------------

scenario("network failure: connection refused (closed port) -> runtime error, reason error", {
	noServer: true,
	runtimeError: true,
	proxyUrl: await closedPortUrl(),
	expect(run, impl) {
		failedBeforeStream(undefined)(run);
		if (impl === "reference") assert.equal(run.raw.errorMessage, "fetch failed");
	},
});

scenario("200 with a null body (204 No Content) -> runtime TypeError, reason error", {
	script: { status: 204 },
	runtimeError: true,
	expect(run, impl) {
		failedBeforeStream(undefined)(run);
		if (impl === "reference") assert.match(run.raw.errorMessage, /getReader/);
	},
});

scenario("200 with an HTML body and no data lines -> connection closed before done", {
	script: { status: 200, body: "<html>\n<body>not a proxy</body>\n</html>\n", headers: { "content-type": "text/html" } },
	expect: failedBeforeStream("Connection closed by proxy server before the response completed"),
});

// ----- the stream ends early ----------------------------------------------------------------------------

scenario("connection closed cleanly before done", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "partial ans"), E.textEnd(0), E.done("stop")], { cutBefore: "terminal" }),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "error"]);
		assert.equal(last(run).reason, "error");
		assert.equal(run.settled.errorMessage, "Connection closed by proxy server before the response completed");
		assert.equal(run.settled.stopReason, "error");
		assert.equal(run.settled.content[0].text, "partial ans");
		assert.deepEqual(run.settled.usage, EMPTY_USAGE, "usage stays the initial one");
	},
});

scenario("cut after toolcall_delta keeps partialJson on the block", {
	script: sseScript([E.start(), E.toolStart(0, "c1", "t"), E.toolDelta(0, '{"a": [1, 2'), E.done("toolUse")], { cutBefore: "terminal" }),
	expect(run) {
		assert.deepEqual(run.settled.content, [{ type: "toolCall", id: "c1", name: "t", arguments: { a: [1, 2] }, partialJson: '{"a": [1, 2' }]);
	},
});

scenario("cut in the middle of a data line (no newline, invalid JSON at EOF) -> runtime JSON error", {
	script: {
		status: 200,
		body: 'data: {"type":"start"}\n\ndata: {"type":"text_start","contentIndex":0}\n\ndata: {"type":"text_delta","contentIndex":0,"delta":"ok"}\n\ndata: {"type":"done","rea',
	},
	runtimeError: true,
	snapshots: false,
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "error"]);
		assert.equal(run.settled.stopReason, "error");
		assert.equal(run.settled.content[0].text, "ok");
	},
});

scenario("the socket is destroyed mid-body -> runtime error (undici: terminated)", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "so far")], { end: "destroy" }),
	runtimeError: true,
	expect(run, impl) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "error"]);
		assert.equal(run.settled.stopReason, "error");
		assert.equal(run.settled.content[0].text, "so far");
		if (impl === "reference") assert.equal(run.raw.errorMessage, "terminated");
	},
});

// ----- abort ----------------------------------------------------------------------------------

scenario("abort before the request: no request is sent, reason aborted (runtime message)", {
	script: sseScript([E.start(), E.done("stop")]),
	abort: { before: true },
	runtimeError: true,
	expect(run, impl) {
		failedBeforeStream(undefined, "aborted")(run);
		assert.equal(run.postCount, 0, "fetch with an aborted signal never reaches the server");
		if (impl === "reference") assert.equal(run.raw.errorMessage, "This operation was aborted");
	},
});

scenario("abort while waiting for the response headers: reason aborted (runtime message)", {
	script: { ...sseScript([E.start(), E.done("stop")]), headersDelayMs: 2000 },
	abort: { afterMs: 100 },
	runtimeError: true,
	expect(run, impl) {
		failedBeforeStream(undefined, "aborted")(run);
		if (impl === "reference") assert.equal(run.raw.errorMessage, "This operation was aborted");
	},
});

scenario("abort mid-stream: Request aborted by user, reason aborted, the connection is closed", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "one "), E.textDelta(0, "two "), E.textDelta(0, "three"), E.textEnd(0), E.done("stop")], {
		delayMs: 40,
		end: "hang",
	}),
	abort: { afterEvents: 3 },
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "error"]);
		assert.equal(last(run).reason, "aborted");
		assert.equal(run.settled.stopReason, "aborted");
		assert.equal(run.settled.errorMessage, "Request aborted by user");
		assert.equal(run.settled.content[0].text, "one ");
		assert.deepEqual(run.clientClosed, [true], "the server sees the client go away");
	},
});

scenario("abort mid-stream while the server hangs after a few events", {
	script: sseScript([E.start(), E.thinkingStart(0), E.thinkingDelta(0, "zzz")], { end: "hang", hangMs: 5000 }),
	abort: { afterMs: 250 },
	expect(run) {
		assert.deepEqual(types(run), ["start", "thinking_start", "thinking_delta", "error"]);
		assert.equal(run.settled.stopReason, "aborted");
		assert.equal(run.settled.errorMessage, "Request aborted by user");
		assert.deepEqual(run.clientClosed, [true]);
	},
});

scenario("abort right after done, connection still open, overwrites the result with aborted", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "done"), E.textEnd(0), E.done("stop")], { end: "hang", hangMs: 2000 }),
	abort: { afterTerminal: true },
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
		assert.equal(run.atEnd.stopReason, "stop");
		assert.equal(run.settled.stopReason, "aborted");
		assert.equal(run.settled.errorMessage, "Request aborted by user");
		assert.deepEqual(run.clientClosed, [true]);
	},
});

scenario("abort after completion changes nothing (the listener is removed)", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "done"), E.textEnd(0), E.done("stop")]),
	abort: { afterCompletion: true },
	expect(run) {
		assert.equal(run.settled.stopReason, "stop");
		assert.ok(!Object.hasOwn(run.settled, "errorMessage"));
		assert.deepEqual(run.settled, run.atEnd);
	},
});

// ----- malformed lines ------------------------------------------------------------------------------------

scenario("a malformed JSON line -> runtime JSON error, reason error", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "a"), "data: {not json}", "", E.done("stop")]),
	runtimeError: true,
	expect(run, impl) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "error"]);
		assert.equal(run.settled.stopReason, "error");
		if (impl === "reference") assert.match(run.raw.errorMessage, /JSON/);
	},
});

scenario("one line = one event (a multi-line data field is not joined) -> runtime JSON error", {
	script: sseScript([E.start(), 'data: {"type":', 'data: "text_start","contentIndex":0}', "", E.done("stop")]),
	runtimeError: true,
	expect(run) {
		assert.deepEqual(types(run), ["start", "error"]);
	},
});

scenario("`data: null` -> runtime TypeError", {
	script: sseScript([E.start(), "data: null", "", E.done("stop")]),
	runtimeError: true,
	expect(run) {
		assert.deepEqual(types(run), ["start", "error"]);
	},
});

// ----- deltas for the wrong block ---------------------------------------------------------------------------

const WRONG_BLOCK = [
	["text_delta for a missing index", [E.textDelta(0, "x")], "Received text_delta for non-text content"],
	["text_end on a thinking block", [E.thinkingStart(0), E.textEnd(0)], "Received text_end for non-text content"],
	["thinking_delta on a text block", [E.textStart(0), E.thinkingDelta(0, "x")], "Received thinking_delta for non-thinking content"],
	["thinking_end on a toolCall block", [E.toolStart(0, "c", "n"), E.thinkingEnd(0, "s")], "Received thinking_end for non-thinking content"],
	["toolcall_delta on a text block", [E.textStart(0), E.toolDelta(0, "{}")], "Received toolcall_delta for non-toolCall content"],
	["text_delta at index 1 when only 0 exists", [E.textStart(0), E.textDelta(1, "x")], "Received text_delta for non-text content"],
];
for (const [label, evs, message] of WRONG_BLOCK) {
	scenario(`${label} -> ${message}`, {
		script: sseScript([E.start(), ...evs, E.done("stop")]),
		expect(run) {
			assert.equal(last(run).type, "error");
			assert.equal(last(run).reason, "error");
			assert.equal(run.settled.stopReason, "error");
			assert.equal(run.settled.errorMessage, message);
			assert.equal(run.events.length, evs.length + 1, "start, the events before the offending one, error");
		},
	});
}

// ----- after the terminal event ------------------------------------------------------------------------------

scenario("done followed by garbage overwrites the delivered result (runtime JSON error)", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "hi"), E.textEnd(0), E.done("stop"), "data: garbage{", ""]),
	runtimeError: true,
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "text_end", "done"]);
		assert.equal(last(run).message.stopReason, "stop", "the done event is delivered with stopReason stop");
		assert.equal(run.atEnd.stopReason, "stop");
		assert.equal(run.settled.stopReason, "error", "…then the catch overwrites the (already resolved) result");
		assert.equal(run.settled.errorMessage, "<runtime error>");
	},
});

scenario("done followed by a delta for a missing block overwrites the result", {
	script: sseScript([E.start(), E.done("stop"), E.textDelta(3, "late")]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "done"]);
		assert.equal(run.settled.stopReason, "error");
		assert.equal(run.settled.errorMessage, "Received text_delta for non-text content");
	},
});

scenario("events after a server error are applied to partial but not delivered", {
	script: sseScript([E.start(), E.error("error", "model overloaded"), E.textStart(0), E.textDelta(0, "ghost")]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "error"]);
		assert.equal(run.atEnd.errorMessage, "model overloaded");
		assert.deepEqual(run.settled.content, [{ type: "text", text: "ghost" }], "the extra block lands in the resolved result");
		assert.equal(run.settled.stopReason, "error");
	},
});

scenario("a second done mutates the result (reason, usage) without a second event", {
	script: sseScript([
		E.start(),
		E.done("stop", USAGE),
		E.done("length", { ...USAGE, output: 999 }, { providerThinkingLevel: "low" }),
	]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "done"]);
		assert.equal(run.atEnd.stopReason, "stop");
		assert.equal(run.settled.stopReason, "length");
		assert.equal(run.settled.usage.output, 999);
		assert.equal(run.settled.providerThinkingLevel, "low");
	},
});

// ----- server error events (`error`) -------------------------------------------------------------------------------

scenario("server error event: reason error with errorMessage and usage", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "par"), E.error("error", "Upstream overloaded", { ...USAGE, output: 3 })]),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "text_delta", "error"]);
		assert.equal(run.settled.errorMessage, "Upstream overloaded");
		assert.equal(run.settled.usage.output, 3);
		assert.deepEqual(last(run).$keys, ["type", "reason", "error"]);
	},
});

scenario("server error event: reason aborted without errorMessage (key set to undefined)", {
	script: sseScript([E.start(), E.error("aborted", undefined)]),
	expect(run) {
		assert.equal(last(run).reason, "aborted");
		assert.equal(run.settled.stopReason, "aborted");
		assert.ok(Object.hasOwn(run.settled, "errorMessage"));
		assert.equal(run.settled.errorMessage, undefined);
	},
});

// ----- abort with a reason ------------------------------------------------------------------------------------------
// fetch rejects with signal.reason itself; streamProxy turns it into a message with
// `error instanceof Error ? error.message : String(error)`. Mid-stream the reader is cancelled first and
// the message is always "Request aborted by user".

const REASONS = [
	["an Error", new Error("user pressed stop"), "user pressed stop"],
	["a string", "bye", "bye"],
	["an object", { why: 1 }, "[object Object]"],
];
for (const [label, reason, message] of REASONS) {
	scenario(`abort before the request with ${label} as reason -> errorMessage ${JSON.stringify(message)}`, {
		script: sseScript([E.start(), E.done("stop")]),
		abort: { before: true, reason },
		expect(run) {
			failedBeforeStream(message, "aborted")(run);
			assert.equal(run.postCount, 0);
		},
	});
}

scenario("abort while waiting for headers with an Error reason -> its message, reason aborted", {
	script: { ...sseScript([E.start(), E.done("stop")]), headersDelayMs: 2000 },
	abort: { afterMs: 100, reason: new Error("took too long") },
	expect: failedBeforeStream("took too long", "aborted"),
});

scenario("abort mid-stream with a reason -> still Request aborted by user", {
	script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "a"), E.textDelta(0, "b")], { end: "hang" }),
	abort: { afterEvents: 3, reason: new Error("ignored reason") },
	expect(run) {
		assert.equal(run.settled.errorMessage, "Request aborted by user");
		assert.equal(run.settled.stopReason, "aborted");
	},
});
