// The demo with its switch "Run the agent in a Worker" on (?worker=1), its session across real
// reloads (the session writes from the worker): an answer cut by a reload comes back interrupted; an
// approval dialog comes back after a reload and Escape denies it (the dialog is modal: the composer
// waits behind it); the conversation survives the reloads. Screenshots: test-output/e2e/worker-session-*.png.
import test from "node:test";
import assert from "node:assert/strict";
import { ensureAppBuilt, launchChromium, newPage, screenshot, sendPrompt, startDemoServer, waitIdle } from "../../e2e/support.mjs";

const shot = (page, name) => screenshot(page, "worker-session", name);

test("the demo in Worker mode keeps its conversation across reloads", { timeout: 300_000 }, async (t) => {
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
		await page.goto(new URL("?worker=1", server.url).href);
		await page.waitForSelector('[data-testid="welcome"]');
		assert.equal(await page.locator('[data-testid="worker-switch"]').isChecked(), true);
		await sendPrompt(page, "hello");
		await page.waitForFunction(() => {
			const el = [...document.querySelectorAll('[data-testid="assistant-text"]')].pop();
			return el && el.textContent.length > 30 && document.querySelector('[data-testid="run-status"]').dataset.streaming === "true";
		});
		expectAbort();
		await reload();
		await page.waitForSelector('[data-testid="message-aborted"]');
		assert.match(await page.locator('[data-testid="message-aborted"]').innerText(), /Interrupted/);
		assert.equal(await count('[data-testid="user-message"]'), 1);
		assert.match(await page.locator('[data-testid="session-status"]').innerText(), /interrupted/);
		await waitIdle(page);
		await shot(page, "interrupted-answer");
	});

	await t.test("an approval comes back after a reload; Escape denies it and the model is told", async () => {
		await sendPrompt(page, "read the about page");
		await page.waitForSelector('[data-testid="approval-dialog"]');
		await reload();
		await page.waitForSelector('[data-testid="approval-dialog"]');
		await shot(page, "approval-again");
		await page.keyboard.press("Escape");
		await page.waitForSelector('[data-testid="approval-dialog"]', { state: "detached" });
		// The run goes on after the denial (the model answers it): idle only once that answer is there.
		await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="assistant-text"]')].some((el) => /you declined/.test(el.textContent)));
		await waitIdle(page);
		const card = page.locator('[data-testid="tool-card"][data-tool="fetch_page"]').last();
		assert.equal(await card.locator('[data-testid="tool-status"]').innerText(), "denied");
		assert.equal(await count('[data-testid="user-message"]'), 2);
		await shot(page, "denied");
	});

	await t.test("a reload keeps the conversation as it is", async () => {
		// The messages and the tool results (a card's status pill comes from the page's dialog, which a reload forgets).
		const texts = () => page.locator('[data-testid="user-message"], [data-testid="assistant-text"], [data-testid="tool-result"]').allInnerTexts();
		const before = await texts();
		await page.waitForTimeout(200);
		await reload();
		await page.waitForFunction((n) => document.querySelectorAll('[data-testid="user-message"]').length === n, 2);
		assert.deepEqual(await texts(), before);
	});

	await t.test("no page errors, no console errors, no failed requests", async () => {
		assert.deepEqual(problems, []);
	});
});
