// The demo's durable session and run log in headless Chromium (offline demo model, real IndexedDB,
// real reloads): an answer cut by a reload shows as interrupted, a pending approval comes back after a
// reload, a tool cut by a reload gets one interrupted result, "Export run" downloads a log and
// "Replay" plays it. Screenshots: test-output/e2e/session-*.png.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ensureAppBuilt, launchChromium, newPage, screenshot, sendPrompt, startDemoServer, waitIdle } from "./support.mjs";

const shot = (page, name) => screenshot(page, "session", name);

test("the demo survives reloads and replays an exported run", { timeout: 300_000 }, async (t) => {
	await ensureAppBuilt();
	const server = await startDemoServer();
	t.after(() => server.close());
	const browser = await launchChromium();
	t.after(() => browser.close());
	const { page, problems } = await newPage(browser);
	const count = (sel) => page.locator(sel).count();
	const reload = async () => {
		await page.reload();
		await page.waitForSelector('[data-testid="session-status"]');
	};

	await t.test("an answer cut by a reload comes back, marked interrupted", async () => {
		await page.goto(server.url);
		await page.waitForSelector('[data-testid="welcome"]');
		await sendPrompt(page, "hello");
		await page.waitForFunction(() => {
			const el = [...document.querySelectorAll('[data-testid="assistant-text"]')].pop();
			return el && el.textContent.length > 30 && document.querySelector('[data-testid="run-status"]').dataset.streaming === "true";
		});
		await reload();
		await page.waitForSelector('[data-testid="message-aborted"]');
		assert.match(await page.locator('[data-testid="message-aborted"]').innerText(), /Interrupted/);
		assert.equal(await count('[data-testid="user-message"]'), 1);
		assert.match(await page.locator('[data-testid="session-status"]').innerText(), /interrupted/);
		await waitIdle(page);
		await shot(page, "interrupted-answer");
	});

	await t.test("a pending approval comes back after a reload and runs when approved", async () => {
		await sendPrompt(page, "read the about page");
		await page.waitForSelector('[data-testid="approval-dialog"]');
		await page.waitForTimeout(200);
		await reload();
		await page.waitForSelector('[data-testid="approval-dialog"]');
		await shot(page, "approval-again");
		await page.click('[data-testid="approve"]');
		await waitIdle(page);
		await page.waitForSelector('[data-testid="tool-card"][data-tool="fetch_page"][data-status="done"]');
		assert.equal(await count('[data-testid="user-message"]'), 2);
	});

	await t.test("a tool cut by a reload gets one interrupted result", async () => {
		await sendPrompt(page, "run a long task for 10 seconds");
		await page.waitForSelector('[data-testid="tool-card"][data-tool="long_task"] [data-testid="tool-progress"]');
		await page.waitForTimeout(200);
		await reload();
		const card = page.locator('[data-testid="tool-card"][data-tool="long_task"]').last();
		await card.locator('[data-testid="tool-result"]').waitFor();
		assert.match(await card.locator('[data-testid="tool-result"]').innerText(), /interrupted before it finished/);
		assert.equal(await page.locator('[data-testid="tool-card"][data-tool="long_task"]').count(), 1);
		await shot(page, "interrupted-tool");
	});

	let logPath;
	await t.test("Export run downloads the log of this page's runs, an aborted long task included", async () => {
		await sendPrompt(page, "hello");
		await waitIdle(page);
		await sendPrompt(page, "run a long task for 10 seconds");
		await page.waitForSelector('[data-testid="tool-card"][data-tool="long_task"][data-status="running"] [data-testid="tool-progress"]');
		await page.waitForTimeout(600);
		await page.click('[data-testid="abort"]');
		await waitIdle(page);
		const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="export-run"]')]);
		logPath = await download.path();
		const log = JSON.parse(readFileSync(logPath, "utf8"));
		assert.equal(log.pi, "replay");
		assert.equal(log.v, 2);
		// hello; the long task's call; the request after its aborted result (which ends the run)
		assert.equal(log.requests.length, 3);
		// The conversation this page restored, then the two prompts and the abort.
		assert.deepEqual(log.inputs.map((i) => i.op).filter((op) => op !== "model" && op !== "clearAllQueues"), ["messages", "prompt", "prompt", "abort"]);
		assert.match(log.calls.at(-1).error, /^Demo task aborted after \d+\.\d s \(step \d+ of 40\)$/);
	});

	await t.test("Replay opens the log and plays it, the long task's own abort result included", async () => {
		const before = await page.locator('[data-testid="assistant-text"]').allInnerTexts();
		const tasks = await page.locator('[data-testid="tool-card"][data-tool="long_task"] [data-testid="tool-result"]').allInnerTexts();
		await page.setInputFiles('[data-testid="replay-file"]', logPath);
		await page.waitForURL(/\?replay/);
		await page.waitForSelector('[data-testid="session-status"][data-replay="done"]', { timeout: 60_000 });
		assert.equal(await count('[data-testid="session-error"]'), 0);
		assert.deepEqual(await page.locator('[data-testid="assistant-text"]').allInnerTexts(), before);
		assert.deepEqual(await page.locator('[data-testid="tool-card"][data-tool="long_task"] [data-testid="tool-result"]').allInnerTexts(), tasks);
		assert.match(tasks.at(-1), /^Demo task aborted after \d+\.\d s \(step \d+ of 40\)$/);
		await shot(page, "replayed");
		await page.click('[data-testid="exit-replay"]');
		await page.waitForSelector('[data-testid="session-status"]');
		assert.equal(await count('[data-testid="user-message"]'), 5, "the saved conversation is still there");
	});

	await t.test("no page errors, no console errors, no failed requests", async () => {
		assert.deepEqual(problems, []);
	});
});
