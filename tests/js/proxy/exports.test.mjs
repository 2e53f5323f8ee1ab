// The package must export streamProxy (a drop-in replacement of @earendil-works/pi-agent-core). While it
// does not, this is the one failing test; the scenarios skip `ours` instead of failing each time.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { PKG_ENTRY, loadImpls } from "./harness.mjs";

test("ours: pkg/index.js exports streamProxy as a function", { timeout: 20000 }, async (t) => {
	if (process.env.PI_DIFF_ONLY === "reference") return t.skip("PI_DIFF_ONLY=reference");
	if (!existsSync(PKG_ENTRY) && !process.env.PI_PROXY_OURS_MODULE) return t.skip("pkg/ not built");
	const ours = (await loadImpls()).find((i) => i.name === "ours");
	if (ours.loadError) throw ours.loadError;
	assert.equal(ours.missing, undefined, ours.missing);
	assert.equal(typeof ours.streamProxy, "function");
	assert.equal(ours.streamProxy.length, 3, "streamProxy(model, context, options)");
});
