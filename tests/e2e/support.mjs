// Shared helpers of the end-to-end tests: prepare www/ (deps, build), start its server on a free port of
// 127.0.0.1 as `npm run demo` does (a child process), launch Debian's Chromium through playwright-core
// (nothing is downloaded), save screenshots under test-output/e2e/.
import { spawn, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
export { launchChromium } from "../support/chromium.mjs";
import { stopProcess } from "../support/process.mjs";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const WWW = join(REPO, "www");
export const PKG = join(REPO, "pkg");
export const DIST = join(WWW, "dist");
export const SHOTS = join(REPO, "test-output", "e2e");

export { CHROMIUM_ARGS } from "../support/chromium.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function newestMtime(path) {
	if (!existsSync(path)) return 0;
	const st = statSync(path);
	if (!st.isDirectory()) return st.mtimeMs;
	let newest = st.mtimeMs;
	for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
	return newest;
}

/** A cross-process lock (mkdir is atomic), so test files running at once do not build twice. */
async function withLock(fn) {
	const dir = join(tmpdir(), `pi-agent-wasm-e2e-${createHash("sha1").update(REPO).digest("hex").slice(0, 12)}.lock`);
	const deadline = Date.now() + 300_000;
	for (;;) {
		try {
			mkdirSync(dir);
			break;
		} catch {
			// A lock left by a killed run: older than 5 minutes.
			try {
				if (Date.now() - statSync(dir).mtimeMs > 300_000) rmSync(dir, { recursive: true, force: true });
			} catch {}
			if (Date.now() > deadline) throw new Error(`timed out waiting for the e2e build lock ${dir}`);
			await sleep(250);
		}
	}
	try {
		return await fn();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

function run(cmd, args, cwd) {
	execFileSync(cmd, args, { cwd, stdio: ["ignore", "inherit", "inherit"], timeout: 300_000 });
}

/** www/node_modules, installed from the lock when missing or older than the lock. */
export async function ensureWwwDeps() {
	if (!existsSync(join(PKG, "index.js"))) throw new Error("pkg/ is not built: run `node scripts/build.mjs` first");
	await withLock(async () => {
		const marker = join(WWW, "node_modules", ".package-lock.json");
		if (!existsSync(marker) || statSync(join(WWW, "package-lock.json")).mtimeMs > statSync(marker).mtimeMs) {
			run("npm", ["ci", "--prefix", WWW, "--no-audit", "--no-fund", "--loglevel=error"], REPO);
		}
	});
}

/** www/dist, rebuilt when missing or older than any of its inputs (the app's sources or pkg/). */
export async function ensureAppBuilt() {
	await ensureWwwDeps();
	await withLock(async () => {
		const stamp = join(DIST, ".built");
		const inputs = Math.max(
			newestMtime(join(WWW, "src")),
			newestMtime(join(WWW, "public")),
			newestMtime(join(WWW, "index.html")),
			newestMtime(join(WWW, "vite.config.js")),
			newestMtime(join(WWW, "package-lock.json")),
			newestMtime(PKG),
		);
		if (!existsSync(stamp) || statSync(stamp).mtimeMs < inputs) {
			run(process.execPath, [join(WWW, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "warn"], WWW);
			writeFileSync(stamp, `${new Date().toISOString()}\n`);
		}
	});
}

/**
 * Starts `node www/server.mjs` on a free port of 127.0.0.1 with a clean environment (no provider keys
 * from the caller's shell) plus `env`. Returns { url, origin, port, proc, output(), close() }.
 */
export async function startDemoServer(env = {}, { timeoutMs = 20_000 } = {}) {
	// Every context the demo server is sent must be valid for a strict provider (it refuses one that is not).
	const strict = join(REPO, "tests/support/strict-transcript.mjs");
	const childEnv = { PATH: process.env.PATH, HOME: process.env.HOME ?? "/tmp", PORT: "0", PI_DEMO_STRICT_CHECK: strict, ...env };
	const proc = spawn(process.execPath, [join(WWW, "server.mjs")], { cwd: WWW, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
	let out = "";
	proc.stdout.on("data", (d) => (out += d));
	proc.stderr.on("data", (d) => (out += d));
	const exited = new Promise((r) => proc.once("exit", (code, signal) => r({ code, signal })));
	const deadline = Date.now() + timeoutMs;
	let url;
	while (!url) {
		const m = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/)/.exec(out);
		if (m) url = m[1];
		else if (proc.exitCode !== null) throw new Error(`server exited early:\n${out}`);
		else if (Date.now() > deadline) {
			proc.kill("SIGKILL");
			throw new Error(`server did not start within ${timeoutMs} ms:\n${out}`);
		} else await sleep(50);
	}
	const port = Number(new URL(url).port);
	return {
		url,
		origin: url.replace(/\/$/, ""),
		port,
		proc,
		output: () => out,
		close: () => stopProcess(proc, exited),
	};
}


/** The two sizes every layout check runs at: a laptop and a phone. */
export const VIEWPORTS = [
	{ name: "desktop", width: 1280, height: 800 },
	{ name: "phone", width: 390, height: 844 },
];

/**
 * A page that records uncaught errors, console errors and failed requests (checked at the end of a test).
 * A /api/stream request may end as net::ERR_ABORTED only where the test said it would (`expectAbort()`
 * before a Stop or a reload that cuts a stream): a finished stream must finish.
 */
export async function newPage(browser, { viewport = { width: 1100, height: 820 }, colorScheme = "light", context: shared } = {}) {
	const context = shared ?? (await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme }));
	const page = await context.newPage();
	page.setDefaultTimeout(20_000);
	const problems = [];
	page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
	page.on("console", (m) => {
		if (m.type() === "error") problems.push(`console.error: ${m.text()}`);
	});
	// Aborting a run (or reloading while it streams) cancels its /api/stream request: those are expected.
	let abortsExpected = 0;
	page.on("requestfailed", (r) => {
		const why = r.failure()?.errorText ?? "";
		if (why === "net::ERR_ABORTED" && r.url().endsWith("/api/stream") && abortsExpected > 0) abortsExpected -= 1;
		else problems.push(`request failed: ${r.method()} ${r.url()} ${why}`);
	});
	page.on("response", (r) => {
		if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
	});
	return { page, context, problems, expectAbort: (n = 1) => void (abortsExpected += n) };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Runs axe-core on the page as it is now and fails on any serious or critical violation (`label` names the
 * state in the message). Evaluated through the DevTools protocol, so the demo's CSP does not block it.
 */
export async function assertAccessible(page, label) {
	if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE_SOURCE);
	const violations = await page.evaluate(async () => {
		const result = await window.axe.run(document, { resultTypes: ["violations"] });
		return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}: ${n.failureSummary}`) }));
	});
	const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
	if (bad.length > 0) throw new Error(`axe-core, ${label}: ${JSON.stringify(bad, null, 2)}`);
	return violations;
}

/** The bounding box of the first element matching `selector` (or null), in CSS pixels. */
export const box = (page, selector) =>
	page.evaluate((sel) => {
		const el = document.querySelector(sel);
		if (!el) return null;
		const r = el.getBoundingClientRect();
		return { x: r.x, y: r.y, width: r.width, height: r.height, right: r.right, bottom: r.bottom };
	}, selector);

/** Whether the page scrolls sideways (it must not, at any width). */
export const overflowsX = (page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);

let shotCounter = 0;
const cleaned = new Set();
/** Saves test-output/e2e/<prefix>-<NN>-<name>.png (the prefix's old shots are removed first); returns the path. */
export async function screenshot(page, prefix, name) {
	mkdirSync(SHOTS, { recursive: true });
	if (!cleaned.has(prefix)) {
		cleaned.add(prefix);
		for (const f of readdirSync(SHOTS)) if (f.startsWith(`${prefix}-`) && f.endsWith(".png")) rmSync(join(SHOTS, f), { force: true });
	}
	shotCounter += 1;
	const file = join(SHOTS, `${prefix}-${String(shotCounter).padStart(2, "0")}-${name}.png`);
	await page.screenshot({ path: file, fullPage: false });
	return file;
}

/** Records every distinct text of the last element matching each selector, as it changes. */
export async function recordTexts(page, selectors) {
	await page.evaluate((sels) => {
		const rec = (window.__rec = Object.fromEntries(sels.map((s) => [s, []])));
		const sample = () => {
			for (const s of sels) {
				const all = document.querySelectorAll(s);
				const text = all.length ? all[all.length - 1].textContent : null;
				const list = rec[s];
				if (text !== null && list[list.length - 1] !== text) list.push(text);
			}
		};
		window.__recObserver?.disconnect();
		window.__recObserver = new MutationObserver(sample);
		window.__recObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
		sample();
	}, selectors);
	return {
		get: (selector) => page.evaluate((s) => window.__rec[s].slice(), selector),
		reset: () => page.evaluate(() => Object.values(window.__rec).forEach((l) => (l.length = 0))),
	};
}

/** Waits until the agent is idle (the composer's status says so). */
export async function waitIdle(page, timeout = 30_000) {
	await page.waitForSelector('[data-testid="run-status"][data-streaming="false"]', { timeout });
}

export async function waitBusy(page, timeout = 10_000) {
	await page.waitForSelector('[data-testid="run-status"][data-streaming="true"]', { timeout });
}

/** Sends a prompt and waits until it is in the transcript (the run has started; it may even be over). */
export async function sendPrompt(page, text) {
	const before = await page.locator('[data-testid="user-message"]').count();
	await page.fill('[data-testid="composer-input"]', text);
	await page.click('[data-testid="send"]');
	await page.waitForFunction((n) => document.querySelectorAll('[data-testid="user-message"]').length > n, before);
}
