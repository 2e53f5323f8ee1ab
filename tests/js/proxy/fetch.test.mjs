// streamProxy and the global fetch: it is looked up at call time (so test mocks such as a patched
// globalThis.fetch work), called with the reference's exact init, and whatever it returns or throws is
// handled like the reference does: Response-like objects are duck-typed, a non-Error rejection becomes
// String(value), an Error's message is used as is (streamProxy: `error instanceof Error ? error.message : String(error)`).
// These runs need no server: the mock answers.
import test from "node:test";
import assert from "node:assert/strict";
import { scenario, E, types, last, runnableImpls, runProxy, sseScript } from "./harness.mjs";
import { snapshot, describeDiff } from "./normalize.mjs";

const PROXY = "http://proxy.invalid";
const enc = new TextEncoder();

/** Installs `mock` as globalThis.fetch for the duration of `run()`. */
function withFetch(mock) {
	return async (run) => {
		const real = globalThis.fetch;
		globalThis.fetch = mock;
		try {
			return await run();
		} finally {
			globalThis.fetch = real;
		}
	};
}

/** A Response whose body yields exactly these chunks (Uint8Array views, strings encoded), then closes or fails. */
function streamResponse(chunks, { fail, status = 200 } = {}) {
	let i = 0;
	const body = new ReadableStream({
		async pull(c) {
			await new Promise((r) => setTimeout(r, 5));
			if (i < chunks.length) {
				const x = chunks[i++];
				c.enqueue(typeof x === "string" ? enc.encode(x) : x);
			} else if (fail !== undefined) c.error(fail);
			else c.close();
		},
	});
	return new Response(body, { status, headers: { "content-type": "text/event-stream" } });
}

const line = (ev) => `data: ${JSON.stringify(ev)}\n\n`;
const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

// ----- the call itself ---------------------------------------------------------------------------------------

test("fetch: looked up at call time and called with the reference's exact (url, init)", { timeout: 30000 }, async (t) => {
	const records = {};
	for (const impl of await runnableImpls()) {
		await t.test(impl.name, async () => {
			const calls = [];
			const real = globalThis.fetch;
			const signal = new AbortController().signal;
			const run = await withFetch((url, init) => {
				calls.push({ url, init, initKeys: Object.keys(init), headerKeys: Object.keys(init.headers), signalIsOption: init.signal === signal });
				return real(url, init);
			})(() => runProxy(impl, { script: sseScript([E.start(), E.done("stop", ZERO)]), options: { signal, temperature: 1 } }));
			assert.equal(calls.length, 1);
			const c = calls[0];
			assert.equal(typeof c.url, "string");
			assert.ok(c.url.endsWith("/api/stream"));
			assert.deepEqual(c.initKeys, ["method", "headers", "body", "signal"]);
			assert.equal(c.init.method, "POST");
			assert.deepEqual(c.init.headers, { Authorization: "Bearer tok-123", "Content-Type": "application/json" });
			assert.deepEqual(c.headerKeys, ["Authorization", "Content-Type"]);
			assert.equal(typeof c.init.body, "string");
			assert.equal(c.init.body, run.request.rawBody);
			assert.equal(c.signalIsOption, true, "init.signal is options.signal itself");
			records[impl.name] = { ...snapshot({ ...c, url: "<url>", init: { ...c.init, signal: "<signal>" } }), settled: run.settled };
		});
	}
	if (records.reference && records.ours) {
		await t.test("ours matches reference", () => {
			const msg = describeDiff(records.reference, records.ours);
			if (msg) assert.fail(msg);
		});
	}
});

scenario("fetch: without options.signal, init.signal is undefined (key present)", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(async (url, init) => {
		assert.ok(Object.hasOwn(init, "signal"));
		assert.equal(init.signal, undefined);
		return streamResponse([line(E.start()), line(E.done("stop", ZERO))]);
	}),
	expect(run) {
		assert.equal(run.settled.stopReason, "stop");
	},
});

// ----- exact chunks from a mocked body -------------------------------------------------------------------------------

{
	const text = line(E.start()) + line(E.textStart(0)) + line(E.textDelta(0, "ü🦀x")) + line(E.textEnd(0)) + line(E.done("stop", ZERO));
	const all = enc.encode(text);
	const crab = text.indexOf("🦀");
	const crabByte = enc.encode(text.slice(0, crab)).length;
	// Views into a larger buffer (non-zero byteOffset), an empty chunk, a split inside 🦀.
	const big = new Uint8Array(all.length + 20);
	big.set(all, 10);
	const view = (a, b) => big.subarray(10 + a, 10 + b);
	const chunks = [view(0, 30), new Uint8Array(0), view(30, crabByte + 2), view(crabByte + 2, crabByte + 3), new Uint8Array(0), view(crabByte + 3, all.length)];
	scenario("mocked body: Uint8Array views with byteOffset, empty chunks, a character split over three reads", {
		noServer: true,
		proxyUrl: PROXY,
		around: withFetch(async () => streamResponse(chunks)),
		snapshots: false,
		expect(run) {
			assert.equal(run.settled.content[0].text, "ü🦀x");
			assert.equal(last(run).type, "done");
		},
	});
}

scenario("mocked body: the stream errors with an Error -> its message", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(async () => streamResponse([line(E.start()), line(E.textStart(0))], { fail: new Error("socket hang up (mock)") })),
	expect(run) {
		assert.deepEqual(types(run), ["start", "text_start", "error"]);
		assert.equal(run.settled.errorMessage, "socket hang up (mock)");
	},
});

scenario("mocked body: the stream errors with a string -> String(value)", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(async () => streamResponse([line(E.start())], { fail: "kaput" })),
	expect(run) {
		assert.equal(run.settled.errorMessage, "kaput");
	},
});

// ----- what fetch rejects with ------------------------------------------------------------------------------------

const REJECTIONS = [
	["an Error subclass", () => new RangeError("range (mock)"), "range (mock)"],
	["a string", () => "plain string rejection", "plain string rejection"],
	["an object with a message (not an Error)", () => ({ message: "looks like an error" }), "[object Object]"],
	["an object with toString", () => ({ toString: () => "custom toString" }), "custom toString"],
	["null", () => null, "null"],
	["undefined", () => undefined, "undefined"],
	["a number", () => 404, "404"],
	["a DOMException", () => new DOMException("dom (mock)", "NetworkError"), "dom (mock)"],
	["an Error with an empty message", () => new Error(""), ""],
];
for (const [label, make, message] of REJECTIONS) {
	scenario(`fetch rejects with ${label} -> errorMessage ${JSON.stringify(message)}`, {
		noServer: true,
		proxyUrl: PROXY,
		around: withFetch(() => Promise.reject(make())),
		expect(run) {
			assert.deepEqual(types(run), ["error"]);
			assert.equal(last(run).reason, "error");
			assert.equal(run.raw.errorMessage, message);
		},
	});
}

scenario("fetch throws synchronously -> error event (never a throw from streamProxy)", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(() => {
		throw new TypeError("sync throw (mock)");
	}),
	expect(run) {
		assert.deepEqual(types(run), ["error"]);
		assert.equal(run.settled.errorMessage, "sync throw (mock)");
	},
});

// ----- Response-like objects (duck typing) ------------------------------------------------------------------------------

scenario("fetch resolves to a plain object {ok:false, status, statusText, json()} -> Proxy error: <error>", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(async () => ({ ok: false, status: 418, statusText: "I'm a teapot", json: async () => ({ error: "brew failed" }) })),
	expect(run) {
		assert.equal(run.settled.errorMessage, "Proxy error: brew failed");
	},
});

scenario("fetch resolves to a plain object whose json() throws -> status line", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(async () => ({ ok: false, status: 503, statusText: "Busy", json: () => { throw new Error("no json"); } })),
	expect(run) {
		assert.equal(run.settled.errorMessage, "Proxy error: 503 Busy");
	},
});

scenario("fetch resolves to a plain object {ok:true, body: ReadableStream} -> streamed normally", {
	noServer: true,
	proxyUrl: PROXY,
	around: withFetch(async () => ({ ok: true, status: 200, body: streamResponse([line(E.start()), line(E.done("length", ZERO))]).body })),
	expect(run) {
		assert.equal(run.settled.stopReason, "length");
	},
});
