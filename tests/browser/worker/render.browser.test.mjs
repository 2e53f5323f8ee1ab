// Render counts of pi-agent-wasm/react on a WorkerAgent in headless Chromium, while 2,000 deltas stream from
// the worker over many frames: rows of finished messages render once, the streaming row at most once per
// animation frame. React comes from tests/browser/ui's prefix (installed with npm ci there when missing).
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { entryFile } from "../../support/package-entry.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = join(REPO, "pkg");
const UI = join(REPO, "tests/browser/ui");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "worker/index.js"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");

test("useAgent on a WorkerAgent: finished rows render once, the streaming row at most once per frame", { timeout: 120_000 }, async () => {
	if (!existsSync(join(UI, "node_modules/react"))) execFileSync("npm", ["ci", "--prefix", UI, "--no-audit", "--no-fund", "--loglevel=error"], { stdio: "inherit" });
	const out = mkdtempSync(join(tmpdir(), "pi-worker-render-"));
	const { build } = await import("esbuild");
	await build({
		entryPoints: [fileURLToPath(new URL("./render-app.jsx", import.meta.url))],
		bundle: true, format: "esm", outfile: join(out, "app.js"), jsx: "automatic", logLevel: "error",
		nodePaths: [join(UI, "node_modules")],
		define: { "process.env.NODE_ENV": '"production"' },
		plugins: [{
			name: "pkg",
			setup(b) {
				b.onResolve({ filter: /^pi-agent-wasm\/(worker|react)$/ }, (a) => ({ path: entryFile(PKG, a.path) }));
			},
		}],
	});
	writeFileSync(join(out, "page.html"), `<!doctype html><meta charset="utf-8"><div id="app"></div><script type="module" src="./app.js"></script>`);
	const server = await startStaticServer({ "/pkg/": PKG, "/t/": fileURLToPath(new URL("./", import.meta.url)), "/app/": out });
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(e.message));
		await page.goto(`${server.url}/app/page.html`);
		await page.waitForFunction(() => window.ready === true);
		const r = await page.evaluate(() => window.run());
		assert.deepEqual(errors, []);
		assert.deepEqual(r.historyRenders, [1, 1, 1, 1, 1, 1, 1, 1], "finished rows never re-render");
		assert.equal(r.finalRenders, 1);
		assert.equal(r.userRenders, 1);
		assert.ok(r.streamRenders >= 5, `the streaming row rendered while streaming (${r.streamRenders})`);
		assert.ok(r.streamRenders <= r.frames + 3, `${r.streamRenders} streaming renders in ${r.frames} frames`);
		assert.equal(r.maxPerFrame, 1, "never two streaming renders in one frame");
		assert.equal(r.finalText, Array.from({ length: 2000 }, (_, i) => `w${i} `).join("").length);
	} finally {
		await browser.close();
		await server.close();
		rmSync(out, { recursive: true, force: true });
	}
});
