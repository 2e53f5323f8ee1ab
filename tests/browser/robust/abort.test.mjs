// Stop always stops, and exactly one agent_end, in headless Chromium and in Node: the checks of
// abort-checks.mjs (the browser form of tests/js/robust/abort-hooks.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { runAbortChecks } from "./abort-checks.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

test("abort checks in Node", { timeout: 120_000 }, async () => {
	const { count, failures } = await runAbortChecks(await import("../../../pkg/index.js"));
	assert.ok(count > 90, `ran ${count} cases`);
	assert.deepEqual(failures, []);
});

test("abort checks in Chromium", { timeout: 180_000 }, async () => {
	const server = await startStaticServer({ "/pkg/": join(ROOT, "pkg"), "/robust/": join(ROOT, "tests/browser/robust"), "/support/": join(ROOT, "tests/support") });
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(e.message));
		await page.goto(`${server.url}/robust/abort.html`);
		await page.waitForFunction(() => window.abortReady === true);
		const { count, failures } = await page.evaluate(() => window.runAbortChecks());
		assert.ok(count > 90, `ran ${count} cases`);
		assert.deepEqual(failures, []);
		assert.deepEqual(errors, [], "no page error");
	} finally {
		await browser.close();
		await server.close();
	}
});
