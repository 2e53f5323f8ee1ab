// Scenario registration for the differential suite (node:test).
//
//   scenario("canonical order", async (impl) => trace, { check(trace, impl) { ... } })
//
// Every scenario is written once and run against every available implementation (reference first).
// The test fails when
//   - a run throws or exceeds its time budget,
//   - `check` (hand-written contract facts) fails for any implementation,
//   - the traces of ours and the reference differ (deepStrictEqual, then key order).
//
//   deviation("deviation: ...", async (impl) => { asserts })
// runs only against ours (the reference would hang or lose results there); skipped when pkg/ is absent.
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { test } from "node:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadImpls, loadOurs, only } from "./impls.mjs";
import { resetTimestamps, withTimeout } from "./scripted.mjs";
import { canonicalIds, keyOrderDiff } from "./trace.mjs";

const DEFAULT_BUDGET_MS = 3000;

// Unhandled rejections are collected per run instead of crashing the file, and become part of the trace.
let currentUnhandled = null;
process.on("unhandledRejection", (reason) => {
	const text = reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
	if (currentUnhandled) currentUnhandled.push(text);
	else process.emitWarning(`unhandled rejection outside a scenario: ${text}`);
});

async function settle() {
	for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

function toPlain(tr) {
	return tr && typeof tr.result === "function" ? tr.result() : tr;
}

async function runOne(name, run, impl, budget) {
	resetTimestamps();
	impl.setDefaultStreamFn?.(undefined);
	const unhandled = [];
	currentUnhandled = unhandled;
	try {
		const out = await withTimeout(Promise.resolve().then(() => run(impl)), budget, `${name} [${impl.name}]`);
		await settle();
		const plain = canonicalIds(toPlain(out));
		if (unhandled.length) {
			if (plain && typeof plain === "object") plain.unhandledRejections = unhandled.slice();
			else return { value: plain, unhandledRejections: unhandled.slice() };
		}
		return plain;
	} finally {
		currentUnhandled = null;
		impl.setDefaultStreamFn?.(undefined);
	}
}

const j = (v) => {
	const s = JSON.stringify(v, (k, x) => (x === undefined ? "<undefined>" : x));
	return s && s.length > 1600 ? `${s.slice(0, 1600)}…` : s;
};

/** Human-readable first difference between two plain traces, or undefined. */
export function firstDifference(expected, actual, path = "trace") {
	if (isDeepStrictEqual(expected, actual)) return undefined;
	if (Array.isArray(expected) && Array.isArray(actual)) {
		const n = Math.max(expected.length, actual.length);
		const lbl = (e) => (e && typeof e === "object" && "type" in e ? ` (${e.type})` : e && e.name ? ` (${e.name})` : "");
		for (let i = 0; i < n; i++) {
			if (i >= expected.length) return `${path}[${i}]: unexpected extra entry${lbl(actual[i])} ${j(actual[i])}`;
			if (i >= actual.length) return `${path}[${i}]: missing entry${lbl(expected[i])} ${j(expected[i])}`;
			if (!isDeepStrictEqual(expected[i], actual[i])) {
				const inner = firstDifference(expected[i], actual[i], `${path}[${i}]${lbl(expected[i])}`);
				return inner;
			}
		}
		return `${path}: arrays differ (length ${expected.length} vs ${actual.length})`;
	}
	if (expected && actual && typeof expected === "object" && typeof actual === "object" && !Array.isArray(expected) && !Array.isArray(actual)) {
		const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
		for (const k of keys) {
			if (!(k in actual)) return `${path}.${k}: missing in ours; expected ${j(expected[k])}`;
			if (!(k in expected)) return `${path}.${k}: unexpected in ours: ${j(actual[k])}`;
			if (!isDeepStrictEqual(expected[k], actual[k])) return firstDifference(expected[k], actual[k], `${path}.${k}`);
		}
	}
	return `${path}: expected ${j(expected)}\n      actual   ${j(actual)}`;
}

export function assertSameTrace(ref, ours, name) {
	const diff = firstDifference(ref, ours);
	if (diff) assert.fail(`[${name}] ours differs from the reference:\n  ${diff}`);
	const order = keyOrderDiff(ref, ours, "trace");
	if (order) {
		assert.fail(`[${name}] key order differs at ${order.path}:\n  expected ${order.expected.join(", ")}\n  actual   ${order.actual.join(", ")}`);
	}
}

/** Register one differential scenario. */
export function scenario(name, run, opts = {}) {
	const budget = opts.timeout ?? DEFAULT_BUDGET_MS;
	test(name, { timeout: budget * 3 + 1000 }, async (t) => {
		const impls = await loadImpls();
		const results = [];
		for (const impl of impls) {
			const trace = await runOne(name, run, impl, budget);
			// the reference must satisfy the hand-checked contract facts (this keeps the harness honest)
			if (opts.check && impl.name === "reference") await opts.check(trace, impl);
			results.push({ impl, trace });
		}
		if (process.env.PI_DIFF_DUMP) {
			mkdirSync(process.env.PI_DIFF_DUMP, { recursive: true });
			const file = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 120);
			for (const r of results) {
				writeFileSync(join(process.env.PI_DIFF_DUMP, `${file}.${r.impl.name}.json`), JSON.stringify(r.trace, (k, v) => (v === undefined ? "<undefined>" : v), 2));
			}
		}
		const ref = results.find((r) => r.impl.name === "reference");
		const ours = results.find((r) => r.impl.name === "ours");
		// ours: first the precise difference to the reference, then the contract facts
		if (ref && ours) assertSameTrace(ref.trace, ours.trace, name);
		if (ours && opts.check) await opts.check(ours.trace, ours.impl);
		if (!(ref && ours) && !opts.check) t.diagnostic("single implementation and no contract check: harness exercised only");
	});
}

/** Register a test of a deliberate deviation: runs only against ours. */
export function deviation(name, run, opts = {}) {
	const budget = opts.timeout ?? DEFAULT_BUDGET_MS;
	test(name, { timeout: budget + 2000 }, async (t) => {
		if (only() === "reference") return t.skip("PI_DIFF_ONLY=reference");
		const impl = await loadOurs();
		if (!impl) return t.skip("pkg/index.js not built");
		if (process.env.PI_DIFF_SELFTEST === "1") return t.skip("self-test: ours is the reference, which does not deviate");
		const out = await runOne(name, run, impl, budget);
		if (out && out.unhandledRejections) assert.deepEqual(out.unhandledRejections, [], "unhandled rejections");
	});
}

export { assert };
