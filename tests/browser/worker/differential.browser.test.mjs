// The WorkerAgent against the in-page Agent, in headless Chromium: every scenario of scenarios.mjs runs with
// both, and the traces (events with the state each listener saw, hook calls in order, identity ordinals,
// final state) must be equal. The worker's stream function is the same script, run in the worker.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "worker/index.js"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");

test("WorkerAgent: same events and final state as the in-page Agent", { timeout: 180_000 }, async (t) => {
	const server = await startStaticServer({ "/pkg/": PKG, "/support/": join(REPO, "tests/js/support"), "/t/": fileURLToPath(new URL("./", import.meta.url)), "/": join(REPO, "tests") });
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(e));
		await page.goto(`${server.url}/t/page.html`);
		await page.waitForFunction(() => window.ready === true);
		for (const name of await page.evaluate(() => window.scenarioNames)) {
			await t.test(name, async () => {
				const inPage = await page.evaluate((n) => window.runScenario(n, "page"), name);
				const inWorker = await page.evaluate((n) => window.runScenario(n, "worker"), name);
				assert.deepEqual(inWorker, inPage);
			});
		}
		assert.deepEqual(errors, []);
	} finally {
		await browser.close();
		await server.close();
	}
});
