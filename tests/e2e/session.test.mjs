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
	const { page, problems, expectAbort } = await newPage(browser);
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
		expectAbort();
		await reload();
		await page.waitForSelector('[data-testid="message-aborted"]');
		assert.match(await page.locator('[data-testid="message-aborted"]').innerText(), /Interrupted/);
		const cut = page.locator('[data-testid="assistant-message"]').last();
		assert.equal(await cut.getAttribute("data-outcome"), "interrupted");
		assert.match(await cut.locator('[data-testid="message-meta"]').innerText(), /^interrupted · .*usage unknown/, "not 0 in / 0 out");
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
		assert.equal(await card.locator('[data-testid="tool-status"]').innerText(), "interrupted", "one word: interrupted, not failed");
		assert.equal(await page.locator('[data-testid="tool-card"][data-tool="long_task"]').count(), 1);
		await shot(page, "interrupted-tool");
	});

	let logPath;
	await t.test("Export run downloads the log of this page's runs: a denial and an aborted long task", async () => {
		await sendPrompt(page, "read the about page");
		await page.waitForSelector('[data-testid="approval-dialog"]');
		await page.click('[data-testid="deny"]');
		await waitIdle(page);
		assert.equal(await page.locator('[data-testid="tool-card"][data-tool="fetch_page"] [data-testid="tool-status"]').last().innerText(), "denied");
		await sendPrompt(page, "hello");
		await waitIdle(page);
		await sendPrompt(page, "run a long task for 10 seconds");
		await page.waitForSelector('[data-testid="tool-card"][data-tool="long_task"][data-status="running"] [data-testid="tool-progress"]');
		await page.waitForTimeout(600);
		await page.click('[data-testid="abort"]');
		await waitIdle(page);
		await page.click('[data-testid="menu-button"]');
		const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="export-run"]')]);
		logPath = await download.path();
		const log = JSON.parse(readFileSync(logPath, "utf8"));
		assert.equal(log.pi, "replay");
		assert.equal(log.v, 2);
		// The denied call's request, the answer after the denial, hello's, the long task's call; none after the
		// aborted batch (the run ends with it).
		assert.equal(log.requests.length, 4);
		// The conversation this page restored, then the three prompts and the abort.
		assert.deepEqual(log.inputs.map((i) => i.op).filter((op) => op !== "model" && op !== "clearAllQueues"), ["messages", "prompt", "prompt", "prompt", "abort"]);
		assert.match(log.calls.at(-1).error, /^Demo task aborted after \d+\.\d s \(step \d+ of 40\)$/);
	});

	await t.test("Replay opens the log and plays it: the denial and the long task's own abort result included", async () => {
		// textContent, not innerText: the answers' blocks off screen are not rendered (content-visibility), and
		// the replayed page is scrolled elsewhere.
		const before = await page.locator('[data-testid="assistant-text"]').allTextContents();
		const tasks = await page.locator('[data-testid="tool-card"][data-tool="long_task"] [data-testid="tool-result"]').allTextContents();
		await page.setInputFiles('[data-testid="replay-file"]', logPath);
		await page.waitForURL(/\?replay/);
		await page.waitForSelector('[data-testid="session-status"][data-replay="done"]', { timeout: 60_000 });
		assert.equal(await count('[data-testid="session-error"]'), 0);
		assert.deepEqual(await page.locator('[data-testid="assistant-text"]').allTextContents(), before);
		assert.deepEqual(await page.locator('[data-testid="tool-card"][data-tool="long_task"] [data-testid="tool-result"]').allTextContents(), tasks);
		assert.match(tasks.at(-1), /^Demo task aborted after \d+\.\d s \(step \d+ of 40\)$/);
		assert.equal(
			await page.locator('[data-testid="tool-card"][data-tool="fetch_page"] [data-testid="tool-status"]').last().innerText(),
			"denied",
			"a replayed denial reads denied, not failed",
		);
		await shot(page, "replayed");
		await page.click('[data-testid="exit-replay"]');
		await page.waitForSelector('[data-testid="session-status"]');
		assert.equal(await count('[data-testid="user-message"]'), 6, "the saved conversation is still there");
	});

	await t.test("no page errors, no console errors, no failed requests", async () => {
		assert.deepEqual(problems, []);
	});
});
