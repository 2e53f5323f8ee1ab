// tests/js/robust/abort-stream.test.mjs in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core; nothing is downloaded): `abort()` ends the read of a stream that ignores the
// signal, for our own stream class, an async generator and a pull iterator, stalling before any
// event and after a few deltas, without hooks and with hooks. Skipped when pkg/ is not built.
import test from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";

const PKG = fileURLToPath(new URL("../../../pkg/", import.meta.url));

/** Runs in the page: every case, returning what each saw. */
async function cases() {
	const { Agent, createAssistantMessageEventStream, ready } = await import("/pkg/index.js");
	// Each case gives its stream 20 ms to stall before the abort: the wasm's loading is not part of it.
	await ready;
	const MODEL = { id: "m", name: "m", api: "a", provider: "p", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 };
	const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	const partial = (n) => ({ role: "assistant", content: [{ type: "text", text: "x".repeat(n) }], api: "a", provider: "p", model: "m", usage, stopReason: "stop", timestamp: 1 });
	const events = (d) => (d < 0 ? [] : [{ type: "start", partial: partial(0) }, ...Array.from({ length: d }, (_, i) => ({ type: "text_delta", contentIndex: 0, delta: "x", partial: partial(i + 1) }))]);
	const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
	const kinds = {
		ours(list) {
			const s = createAssistantMessageEventStream();
			for (const e of list) s.push(e);
			return s;
		},
		generator(list) {
			async function* g() {
				for (const e of list) yield e;
				await new Promise(() => {});
			}
			const it = g();
			it.result = () => new Promise(() => {});
			return it;
		},
		pull(list) {
			let i = 0;
			const it = {
				next: () => (i < list.length ? Promise.resolve({ value: list[i++], done: false }) : new Promise(() => {})),
				return: () => Promise.reject(new Error("return() failed")),
			};
			return { [Symbol.asyncIterator]: () => it, result: () => new Promise(() => {}) };
		},
	};
	const hooks = { beforeToolCall: async () => undefined, afterToolCall: async () => undefined, transformContext: async (m) => m };
	const unhandled = [];
	addEventListener("unhandledrejection", (e) => unhandled.push(String(e.reason)));
	const out = [];
	for (const kind of Object.keys(kinds)) {
		for (const d of [-1, 3]) {
			for (const withHooks of [false, true]) {
				const agent = new Agent({ initialState: { model: MODEL }, streamFn: () => kinds[kind](events(d)), ...(withHooks ? hooks : {}) });
				const types = [];
				agent.subscribe((e) => {
					types.push(e.type);
				});
				const run = agent.prompt("go");
				await sleep(20);
				const streaming = agent.state.isStreaming;
				agent.abort();
				const ended = await Promise.race([run.then(() => true), sleep(5000).then(() => false)]);
				await sleep(10);
				const last = agent.state.messages.at(-1);
				out.push({ label: `${kind} ${d} ${withHooks}`, streaming, ended, tail: types.slice(-3), ends: types.filter((t) => t === "agent_end").length, stopReason: last.stopReason, errorMessage: last.errorMessage, text: last.content[0]?.text, isStreaming: agent.state.isStreaming, d });
			}
		}
	}
	return { out, unhandled };
}

test("Chromium: abort ends the read of a stream that ignores it", { timeout: 120_000 }, async () => {
	const { chromium } = await import("playwright-core");
	const server = await startStaticServer({ "/pkg/": PKG }, { pages: { "/": "<!doctype html><title>abort-stream</title>" } });
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		const page = await browser.newPage();
		await page.goto(`${server.url}/`);
		const { out, unhandled } = await page.evaluate(cases);
		assert.equal(out.length, 12);
		for (const r of out) {
			assert.equal(r.streaming, true, `${r.label}: the stream stalls until the abort`);
			assert.equal(r.ended, true, `${r.label}: prompt() ends after the abort`);
			assert.deepEqual(r.tail, ["message_end", "turn_end", "agent_end"], r.label);
			assert.equal(r.ends, 1, r.label);
			assert.equal(r.stopReason, "aborted", r.label);
			assert.equal(r.errorMessage, "Request was aborted", r.label);
			assert.equal(r.text, r.d < 0 ? "" : "xxx", `${r.label}: the partial message is kept`);
			assert.equal(r.isStreaming, false, r.label);
		}
		assert.deepEqual(unhandled, []);
	} finally {
		await browser.close();
		await server.close();
	}
});
