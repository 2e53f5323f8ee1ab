// Render counts of the React, Svelte and Vue adapters in headless Chromium (playwright-core driving Debian's
// /usr/bin/chromium; nothing is downloaded). A small React app (pi-agent-wasm/react, useAgent) and a small
// Svelte 5 app (pi-agent-wasm/svelte, agentStore) and a small Vue 3 app (pi-agent-wasm/vue, useAgent) render the transcript while a scripted 2,000-delta stream
// runs across many animation frames (app/harness.js). Checked, per framework:
//   1. rows of finished messages never re-render (render count per row, plus DOM mutations inside each row);
//   2. the streaming row renders at most once per animation frame (frames numbered by a requestAnimationFrame
//      wrapper installed before the app; renders <= frames + slack, and never two in one frame);
//   3. with { coalesce: false } the streaming row renders far more often (the check above would fail);
//   4. the final text is fully rendered.
//
// Pages are bundled by bundle.mjs (React, Svelte and Vue from this directory's own prefix). Fails when pkg/ is
// not built. PI_BROWSER_PKG_DIR=<dir> tests another build of pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { bundlePages } from "./bundle.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));
const APP = join(HERE, "app");
const PKG_DIR = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");

// Renders allowed above the number of frames the run spanned (the first notification, the last one).
const FRAME_SLACK = 3;


const loadPlaywright = async () => (await import("playwright-core")).chromium;

async function runPage(browser, base, app, coalesce) {
	const page = await browser.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
	try {
		await page.goto(`${base}/app/page.html?app=${app}&coalesce=${coalesce ? 1 : 0}`);
		await page.waitForFunction(() => window.__ready || window.__error, null, { timeout: 30000 });
		const loadError = await page.evaluate(() => window.__error);
		assert.equal(loadError, undefined, `page failed to load: ${loadError}`);
		const result = await page.evaluate(() => window.__run());
		assert.deepEqual(errors, [], "no page errors");
		return result;
	} finally {
		await page.close();
	}
}

const summary = (r) =>
	`${r.coalesce ? "coalesced" : "coalesce:false"}: ${r.streamRenders} streaming-row renders over ${r.frames} frames ` +
	`(${r.streamFrames} while deltas were pushed; max ${r.maxRendersInOneFrame} in one frame), ${Math.round(r.ms)} ms`;

/** The checks of the coalesced run; returns the problems found (empty when the run passes). */
export function problemsOf(r) {
	const problems = [];
	for (const row of r.history) {
		if (row.rendersBefore !== 1) problems.push(`history row ${row.id} rendered ${row.rendersBefore}x on mount`);
		if (row.rendersAfter !== row.rendersBefore) problems.push(`finished row ${row.id} re-rendered during the stream (${row.rendersBefore} -> ${row.rendersAfter})`);
		if (row.mutations !== 0) problems.push(`finished row ${row.id}: ${row.mutations} DOM mutations during the stream`);
	}
	// Same message objects, same rows: a row remounted under a new key would also be a re-render.
	const finalIds = r.rows.map((row) => row.id);
	const kept = r.history.map((row) => row.id);
	if (finalIds.slice(0, kept.length).join() !== kept.join()) problems.push(`finished rows were replaced: ${kept.join()} -> ${finalIds.join()}`);
	for (const [id, n] of Object.entries(r.rowRenders)) if (n !== 1) problems.push(`row ${id} rendered ${n}x (want exactly once)`);
	if (r.streamRenders > r.frames + FRAME_SLACK) problems.push(`streaming row rendered ${r.streamRenders}x in ${r.frames} frames`);
	if (r.maxRendersInOneFrame > 1) problems.push(`streaming row rendered ${r.maxRendersInOneFrame}x in one frame`);
	return problems;
}

function checkCommon(r) {
	// The run spans many frames and the streaming row really streamed (else "once per frame" is vacuous).
	assert.ok(r.streamFrames >= 10, `stream spanned only ${r.streamFrames} frames`);
	assert.ok(r.streamRenders >= 5, `streaming row rendered only ${r.streamRenders}x`);
	// 4. The final text is fully rendered: last row is the final assistant message, complete, streaming row gone.
	assert.equal(r.isStreaming, false);
	assert.equal(r.finalRole, "assistant");
	assert.equal(r.finalText, r.expectedText);
	assert.equal(r.messageCount, 1 + 8 + 2, "system + 8 history + prompt + answer");
	assert.equal(r.rows.length, r.messageCount);
	assert.equal(r.rows.at(-1).id, r.finalId);
	assert.equal(r.rows.at(-1).text, `assistant: ${r.expectedText}`);
	assert.equal(r.streamingRowLeft, 0);
	assert.equal(r.mountedRows, 9);
}

test("React, Svelte and Vue adapters: finished rows never re-render, the streaming row at most once per frame", { timeout: 120000 }, async (t) => {
	if (!existsSync(join(PKG_DIR, "index.js")) || !existsSync(join(PKG_DIR, "ui/react.js"))) throw new Error("pkg/ is not built: run node scripts/build.mjs");
	const cleanups = [];
	try {
		const outDir = mkdtempSync(join(tmpdir(), "pi-ui-render-"));
		cleanups.push(() => rmSync(outDir, { recursive: true, force: true }));
		await bundlePages({ react: join(APP, "react-app.jsx"), svelte: join(APP, "svelte-app.js"), vue: join(APP, "vue-app.js") }, outDir, PKG_DIR);
		const server = await startStaticServer({ "/pkg/": PKG_DIR, "/app/": APP, "/build/": outDir });
		cleanups.push(() => server.close());
		const chromium = await loadPlaywright();
		const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
		cleanups.push(() => browser.close());

		for (const app of ["react", "svelte", "vue"]) {
			await t.test(app, async (st) => {
				const on = await runPage(browser, server.url, app, true);
				st.diagnostic(summary(on));
				// 1 and 2.
				assert.deepEqual(problemsOf(on), []);
				checkCommon(on);

				// 3. Without coalescing the same checks fail: the streaming row renders far more often.
				const off = await runPage(browser, server.url, app, false);
				st.diagnostic(summary(off));
				checkCommon(off);
				assert.ok(off.streamRenders > 4 * (on.frames + FRAME_SLACK), `coalesce:false rendered only ${off.streamRenders}x`);
				assert.ok(off.maxRendersInOneFrame > 1);
				assert.ok(problemsOf(off).some((p) => p.startsWith("streaming row rendered")), "the per-frame check catches coalesce:false");
				// Finished rows stay untouched even without coalescing (memo / keyed each on stable message objects).
				assert.deepEqual(problemsOf(off).filter((p) => !p.startsWith("streaming row")), []);
			});
		}
	} finally {
		for (const c of cleanups.reverse()) await c();
	}
});
