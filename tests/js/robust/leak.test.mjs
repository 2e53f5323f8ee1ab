// Short soak (scripts/soak.mjs is the long one): 1,000 prompts on one Agent with
// tools, updates, aborts, failures, steering and follow-ups. After a warm-up of
// 200 prompts, the JS heap after GC must grow by less than 5 MB and the wasm
// linear memory by less than 512 KiB (it only grows, in 64 KiB pages: growth
// that keeps going is a leak in Rust: a `Closure`, a callback handle or a cache
// that is never released).
import { wasmMemoryBytes } from "./wasm-memory.mjs"; // must come before the package loads
import { test } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";

v8.setFlagsFromString("--expose-gc");
const gc = globalThis.gc ?? vm.runInNewContext("gc");

const pkg = await import("../../../pkg/index.js");
const { runSoak } = await import("../../browser/robust/soak-workload.mjs");

const HEAP_BOUND = 5 * 1024 * 1024;
const WASM_BOUND = 512 * 1024;
const mb = (n) => `${(n / 1048576).toFixed(2)} MB`;

async function measure() {
	for (let i = 0; i < 4; i++) {
		gc();
		await new Promise((r) => setImmediate(r));
	}
	return { heap: process.memoryUsage().heapUsed, wasm: wasmMemoryBytes() };
}

async function soak(t, freshTools, hooks = true) {
	const result = await runSoak(pkg, { prompts: 1000, sampleAt: [200, 600, 1000], measure, freshTools, hooks });
	if (!hooks) assert.ok(result.rendered > 0, "the UI listener read state.messages");
	const [start, mid, end] = result.samples;
	t.diagnostic(`heap ${mb(start.heap)} -> ${mb(mid.heap)} -> ${mb(end.heap)}; wasm ${mb(start.wasm)} -> ${mb(mid.wasm)} -> ${mb(end.wasm)}`);
	t.diagnostic(`tool results ${result.counts.toolResults}, aborted runs ${result.counts.aborted}`);
	assert.ok(result.counts.toolResults >= 1000 && result.counts.aborted >= 300, "the workload ran tools and aborts");
	assert.equal(typeof start.wasm, "number", "the wasm memory is reachable");
	assert.ok(end.heap - start.heap < HEAP_BOUND, `JS heap grew ${mb(end.heap - start.heap)} over 800 prompts (bound ${mb(HEAP_BOUND)})`);
	assert.ok(end.wasm - start.wasm < WASM_BOUND, `wasm memory grew ${mb(end.wasm - start.wasm)} over 800 prompts (bound ${mb(WASM_BOUND)})`);
}

test("leak: 1,000 prompts with the same tools: heap and wasm memory stay flat", { timeout: 90_000 }, async (t) => {
	await soak(t, false);
});

test("leak: 1,000 prompts with tools re-created every prompt (as UI code does): memory stays flat", { timeout: 90_000 }, async (t) => {
	await soak(t, true);
});

test("leak: 1,000 prompts with no hooks, a listener reading state.messages like a UI: memory stays flat", { timeout: 90_000 }, async (t) => {
	await soak(t, false, false);
});
