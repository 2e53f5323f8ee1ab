#!/usr/bin/env node
// Soak: 10,000 prompts on one Agent (tools, updates, aborts, failures, steering,
// follow-ups; see tests/browser/robust/soak-workload.mjs), reporting the JS heap
// after GC and the wasm linear memory over time, in Node and in headless Chromium.
// It reports; it asserts nothing about time (tests/js/robust/leak.test.mjs is the
// short version that fails on growth).
//
//   node scripts/soak.mjs                       both, 10,000 prompts, 10 samples
//   node scripts/soak.mjs --prompts 2000 --node-only | --browser-only
//   node scripts/soak.mjs --fresh-tools         new tool objects (new schemas) every prompt
//
// Needs pkg/ built (node scripts/build.mjs [--dev]). The wasm memory is not exported by
// the package: tests/js/robust/wasm-memory.mjs wraps WebAssembly.Instance /
// instantiate before the package loads to see it. Node is re-run with --expose-gc;
// Chromium gets --js-flags=--expose-gc and --enable-precise-memory-info.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : fallback;
};
const PROMPTS = Number(opt("--prompts", 10000));
const SAMPLES = Number(opt("--samples", 10));
const FRESH = args.includes("--fresh-tools");
const doNode = !args.includes("--browser-only");
const doBrowser = !args.includes("--node-only");

if (!existsSync(join(ROOT, "pkg/index.js"))) {
	console.error("pkg/index.js is missing: run `node scripts/build.mjs --dev` (or the release build) first");
	process.exit(2);
}

// Re-run under --expose-gc (the Node half needs a real GC between samples).
if (doNode && typeof globalThis.gc !== "function") {
	const r = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), ...args], { stdio: "inherit" });
	process.exit(r.status ?? 1);
}

const sampleAt = [0, ...Array.from({ length: SAMPLES }, (_, k) => Math.round(((k + 1) * PROMPTS) / SAMPLES))];
const mb = (n) => (n === undefined ? "      n/a" : `${(n / 1048576).toFixed(2).padStart(9)}`);

function report(where, result, ms) {
	const { samples, counts } = result;
	console.log(`\n${where}: ${PROMPTS} prompts in ${(ms / 1000).toFixed(1)} s${FRESH ? " (fresh tools every prompt)" : ""}`);
	console.log(`  tool results ${counts.toolResults}, aborted runs ${counts.aborted}, error turns ${counts.errors}`);
	console.log("   prompt   heap MB   wasm MB");
	for (const s of samples) console.log(`  ${String(s.prompt).padStart(7)} ${mb(s.heap)} ${mb(s.wasm)}`);
	const first = samples[1] ?? samples[0]; // after the first tenth (warm)
	const mid = samples[Math.floor(samples.length / 2)];
	const last = samples.at(-1);
	console.log(`  start (prompt ${first.prompt}) / middle (${mid.prompt}) / end (${last.prompt}):`);
	console.log(`    heap  ${mb(first.heap)} / ${mb(mid.heap)} / ${mb(last.heap)} MB  (end - start ${((last.heap - first.heap) / 1048576).toFixed(2)} MB)`);
	if (last.wasm !== undefined) console.log(`    wasm  ${mb(first.wasm)} / ${mb(mid.wasm)} / ${mb(last.wasm)} MB  (end - start ${((last.wasm - first.wasm) / 1048576).toFixed(2)} MB)`);
	else console.log("    wasm  not reachable");
}

async function soakNode() {
	const { wasmMemoryBytes } = await import(pathToFileURL(join(ROOT, "tests/js/robust/wasm-memory.mjs")).href);
	const pkg = await import(pathToFileURL(join(ROOT, "pkg/index.js")).href);
	const { runSoak } = await import(pathToFileURL(join(ROOT, "tests/browser/robust/soak-workload.mjs")).href);
	const measure = async () => {
		for (let i = 0; i < 3; i++) {
			globalThis.gc();
			await new Promise((r) => setImmediate(r));
		}
		return { heap: process.memoryUsage().heapUsed, wasm: wasmMemoryBytes() };
	};
	for (const hooks of [true, false]) {
		const t0 = performance.now();
		const result = await runSoak(pkg, { prompts: PROMPTS, sampleAt, measure, freshTools: FRESH, hooks });
		report(`Node ${process.version}, ${hooks ? "tool hooks" : "no hooks, a UI reading state.messages"}`, result, performance.now() - t0);
	}
}

const MIME = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html", ".wasm": "application/wasm", ".json": "application/json" };
function serve() {
	const map = { "/pkg/": join(ROOT, "pkg"), "/robust-js/": join(ROOT, "tests/js/robust"), "/robust/": join(ROOT, "tests/browser/robust") };
	const server = http.createServer((req, res) => {
		const path = decodeURIComponent(req.url.split("?")[0]);
		if (path === "/favicon.ico") return void res.writeHead(204).end();
		const prefix = Object.keys(map).find((p) => path.startsWith(p));
		const file = prefix && normalize(join(map[prefix], path.slice(prefix.length)));
		if (!file || !file.startsWith(map[prefix]) || !existsSync(file)) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
	});
	return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server)));
}

async function soakBrowser() {
	const { chromium } = await import("playwright-core");
	const { CHROMIUM_ARGS, CHROMIUM_PATH } = await import("../tests/support/chromium.mjs");
	const server = await serve();
	const browser = await chromium.launch({
		executablePath: CHROMIUM_PATH,
		args: [...CHROMIUM_ARGS, "--js-flags=--expose-gc", "--enable-precise-memory-info"],
	});
	try {
		const page = await browser.newPage();
		page.on("pageerror", (e) => console.error(`[page error] ${e.message}`));
		page.on("console", (m) => {
			if (m.type() === "error") console.error(`[page console.error] ${m.text()}`);
		});
		await page.goto(`http://127.0.0.1:${server.address().port}/robust/soak.html`);
		await page.waitForFunction(() => window.soakReady === true);
		const version = browser.version();
		for (const hooks of [true, false]) {
			const t0 = performance.now();
			const result = await page.evaluate((o) => window.soak(o), { prompts: PROMPTS, sampleAt, freshTools: FRESH, hooks });
			report(`Chromium ${version}, ${hooks ? "tool hooks" : "no hooks, a UI reading state.messages"}`, result, performance.now() - t0);
		}
	} finally {
		await browser.close();
		server.close();
	}
}

if (doNode) await soakNode();
if (doBrowser) await soakBrowser();
