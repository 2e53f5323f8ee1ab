// Stop always stops, and exactly one agent_end, in headless Chromium and in Node: the checks of
// abort-checks.mjs (the browser form of tests/js/robust/abort-hooks.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { runAbortChecks } from "./abort-checks.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const MIME = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html", ".wasm": "application/wasm" };

function serve() {
	const map = { "/pkg/": join(ROOT, "pkg"), "/robust/": join(ROOT, "tests/browser/robust") };
	const server = http.createServer((req, res) => {
		const path = decodeURIComponent(req.url.split("?")[0]);
		const prefix = Object.keys(map).find((p) => path.startsWith(p));
		const file = prefix && normalize(join(map[prefix], path.slice(prefix.length)));
		if (!file || !file.startsWith(map[prefix]) || !existsSync(file)) return void res.writeHead(404).end();
		res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
	});
	return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server)));
}

test("abort checks in Node", { timeout: 120_000 }, async () => {
	const { count, failures } = await runAbortChecks(await import("../../../pkg/index.js"));
	assert.ok(count > 90, `ran ${count} cases`);
	assert.deepEqual(failures, []);
});

test("abort checks in Chromium", { timeout: 180_000 }, async () => {
	const server = await serve();
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(e.message));
		await page.goto(`http://127.0.0.1:${server.address().port}/robust/abort.html`);
		await page.waitForFunction(() => window.abortReady === true);
		const { count, failures } = await page.evaluate(() => window.runAbortChecks());
		assert.ok(count > 90, `ran ${count} cases`);
		assert.deepEqual(failures, []);
		assert.deepEqual(errors, [], "no page error");
	} finally {
		await browser.close();
		server.close();
	}
});
