// The worker entry in a Vite app (Vite's default config): the dev server, and `vite build` served
// statically, each opened in headless Chromium. The app (vite-app/) runs a WorkerAgent on its own one-module
// worker and one on the package's worker script named with `new URL("pi-agent-wasm/worker-script",
// import.meta.url)`. Vite and the package are installed into a scratch directory (npm, from the cache).
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "worker/index.js"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");
const VITE = "8.3.8"; // the demo's version

async function results(browser, url) {
	const page = await browser.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(e.message));
	await page.goto(url);
	const r = await page.evaluate(() => Promise.race([window.results, new Promise((res) => setTimeout(() => res("timeout"), 30000))]));
	await page.close();
	return { ...r, errors };
}

function check(r) {
	assert.deepEqual(r.errors, []);
	assert.equal(r.own.stopReason, "stop");
	assert.equal(r.own.text, "Hello from the worker");
	assert.deepEqual(r.own.types.filter((t) => t === "message_update").length, 5);
	assert.equal(r.own.types.at(-1), "agent_end");
	// The package's script ran streamProxy in the worker: a network error, as a failed run.
	assert.equal(r.pkgScript.stopReason, "error", JSON.stringify(r.pkgScript));
	assert.equal(r.pkgScript.types.at(-1), "agent_end");
}

test("pi-agent-wasm/worker in a Vite app: dev server and build", { timeout: 300_000 }, async (t) => {
	const dir = mkdtempSync(join(tmpdir(), "pi-worker-vite-"));
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		cpSync(fileURLToPath(new URL("./vite-app/", import.meta.url)), dir, { recursive: true });
		writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module", dependencies: { "pi-agent-wasm": `file:${PKG}`, vite: VITE } }));
		execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir, stdio: "inherit" });
		const { createServer, build } = await import(join(dir, "node_modules/vite/dist/node/index.js"));

		await t.test("vite dev (default config)", async () => {
			const server = await createServer({ root: dir, configFile: false, logLevel: "error", server: { host: "127.0.0.1", port: 0, fs: { allow: [dir, PKG] } } });
			await server.listen();
			try {
				check(await results(browser, server.resolvedUrls.local[0]));
			} finally {
				await server.close();
			}
		});

		await t.test("vite build (default config: workers built as iife), served statically", async () => {
			await build({ root: dir, configFile: false, logLevel: "error", build: { outDir: join(dir, "dist") } });
			const server = await startStaticServer({ "/": join(dir, "dist") });
			try {
				check(await results(browser, `${server.url}/index.html`));
			} finally {
				await server.close();
			}
		});
	} finally {
		await browser.close();
		rmSync(dir, { recursive: true, force: true });
	}
});
