// The demo app in headless Chromium against its own server and the offline demo model: streamed text
// and thinking, tool calls whose arguments stream, approval and denial through beforeToolCall, two
// tools in parallel, steering and a follow-up while a long tool runs, abort, a provider error, model
// output shown as text, a reload that keeps the conversation, and New chat. Screenshots: test-output/e2e/chat-*.png.
import test from "node:test";
import assert from "node:assert/strict";
import {
	ensureAppBuilt,
	launchChromium,
	newPage,
	recordTexts,
	screenshot,
	sendPrompt,
	startDemoServer,
	waitIdle,
} from "./support.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const shot = (page, name) => screenshot(page, "chat", name);

test("the chat demo in headless Chromium (offline demo model)", { timeout: 420_000 }, async (t) => {
	await ensureAppBuilt();
	const server = await startDemoServer();
	t.after(() => server.close());
	const browser = await launchChromium();
	t.after(() => browser.close());
	const { page, problems, expectAbort } = await newPage(browser);

	const lastCard = (tool) => page.locator(`[data-testid="tool-card"][data-tool="${tool}"]`).last();
	const lastAssistantText = () => page.locator('[data-testid="assistant-text"]').last();
	/** Waits until the last long_task card reports at least `step` steps. */
	const waitForStep = (step) =>
		page.waitForFunction((min) => {
			const cards = document.querySelectorAll('[data-testid="tool-card"][data-tool="long_task"]');
			const text = cards[cards.length - 1]?.querySelector('[data-testid="tool-progress"]')?.textContent ?? "";
			const m = /step (\d+) of/.exec(text);
			return m !== null && Number(m[1]) >= min;
		}, step);

	await t.test("loads: demo model labelled, empty transcript, zero usage", async () => {
		// PI_DEMO_WORKER=1 (tests/browser/worker/demo.browser.test.mjs): the same checks with the agent in a Worker.
		await page.goto(process.env.PI_DEMO_WORKER === "1" ? new URL("?worker=1", server.url).href : server.url);
		await page.waitForSelector('[data-testid="welcome"]');
		assert.equal(await page.locator('[data-testid="model-picker"]').inputValue(), "demo/offline-demo");
		assert.match(await page.locator('[data-testid="demo-badge"]').innerText(), /Offline demo model/);
		assert.match(await page.locator('[data-testid="model-picker"] option:checked').innerText(), /Offline demo model/);
		assert.equal(await page.locator('[data-testid="usage"]').innerText(), "Tokens: 0 in · 0 out");
		await shot(page, "loaded");
	});

	const rec = await recordTexts(page, ['[data-testid="assistant-text"]', '[data-testid="tool-args"]', '[data-testid="thinking"]']);

	await t.test("a prompt streams thinking, then text", async () => {
		await sendPrompt(page, "hello");
		await page.waitForFunction(() => {
			const el = [...document.querySelectorAll('[data-testid="assistant-text"]')].pop();
			return el && el.textContent.length > 60;
		});
		await shot(page, "streaming-text");
		await waitIdle(page);
		const final = await lastAssistantText().innerText();
		assert.match(final, /offline demo model/);
		const seen = await rec.get('[data-testid="assistant-text"]');
		assert.ok(seen.length >= 5, `text arrived in pieces (saw ${seen.length} states)`);
		// Its states are prefixes of the final text once markdown's marks are left out (an unclosed ** shows
		// as characters until its closing pair turns the text bold).
		const plain = (s) => s.replace(/[*`]/g, "").replace(/\s+/g, " ").trim();
		const finalText = plain(seen.at(-1));
		const prefixes = seen.map(plain).filter((s) => s.length > 0 && s.length < finalText.length && finalText.startsWith(s));
		assert.ok(prefixes.length >= 3, `the text grew in place (${prefixes.length} growing states)`);
		assert.ok((await rec.get('[data-testid="thinking"]')).length >= 3, "thinking streamed too");
		assert.match(await page.locator('[data-testid="thinking"]').last().innerText(), /Thinking/);
		assert.doesNotMatch(await page.locator('[data-testid="usage"]').innerText(), /Tokens: 0 in · 0 out/);
		await shot(page, "streamed-text");
	});

	await t.test("a tool call streams its arguments, asks for approval, runs when approved", async () => {
		await rec.reset();
		await sendPrompt(page, "Please read the about page");
		await page.waitForSelector('[data-testid="approval-dialog"]');
		const args = await rec.get('[data-testid="tool-args"]');
		const partial = args.filter((a) => a !== "{}" && !a.includes('"/about.txt"'));
		assert.ok(partial.length >= 2, `arguments filled in while streaming (states: ${JSON.stringify(args)})`);
		assert.ok(args.at(-1).includes('"path": "/about.txt"'), "complete arguments shown");
		assert.equal(await lastCard("fetch_page").getAttribute("data-status"), "approval");
		assert.match(await page.locator('[data-testid="approval-dialog"]').innerText(), /fetch_page[\s\S]*\/about\.txt/);
		await shot(page, "approval-dialog");
		await page.click('[data-testid="approve"]');
		await page.waitForSelector('[data-testid="approval-dialog"]', { state: "detached" });
		await waitIdle(page);
		const card = lastCard("fetch_page");
		assert.equal(await card.getAttribute("data-status"), "done");
		assert.match(await card.locator('[data-testid="tool-result"]').innerText(), /About this demo/);
		assert.match(await card.locator('[data-testid="tool-duration"]').innerText(), /^\d+ ms$/);
		assert.match(await lastAssistantText().innerText(), /fetch_page returned the page/);
		await shot(page, "approved-result");
	});

	await t.test("a denied tool call is blocked with the user's reason, which the model sees", async () => {
		await sendPrompt(page, "read the about page once more");
		await page.waitForSelector('[data-testid="approval-dialog"]');
		await page.fill('[data-testid="deny-reason"]', "not right now");
		await shot(page, "deny-dialog");
		await page.click('[data-testid="deny"]');
		await waitIdle(page);
		const card = lastCard("fetch_page");
		assert.equal(await card.getAttribute("data-status"), "denied");
		assert.match(await card.locator('[data-testid="tool-result"]').innerText(), /Denied by the user: not right now/);
		assert.equal(await card.locator('[data-testid="tool-duration"]').count(), 0, "a blocked call never ran");
		const reply = await lastAssistantText().innerText();
		assert.match(reply, /did not run: Denied by the user: not right now/);
		assert.match(reply, /you declined/);
		await shot(page, "denied");
	});

	await t.test("aborting while an approval is pending closes the dialog; the call never runs", async () => {
		await sendPrompt(page, "read the about page, then stop");
		await page.waitForSelector('[data-testid="approval-dialog"]');
		expectAbort();
		await page.click('[data-testid="dialog-abort"]');
		await page.waitForSelector('[data-testid="approval-dialog"]', { state: "detached", timeout: 5_000 });
		await waitIdle(page, 5_000);
		const card = lastCard("fetch_page");
		assert.equal(await card.getAttribute("data-status"), "aborted");
		assert.equal(await card.locator('[data-testid="tool-status"]').innerText(), "aborted");
		assert.equal(await card.locator('[data-testid="tool-result"]').innerText(), "Operation aborted");
		// No request follows an aborted tool batch: the last answer is the one that asked for the call.
		assert.equal(await page.locator('[data-testid="assistant-message"]').last().getAttribute("data-stop-reason"), "toolUse");
	});

	await t.test("two tool calls in one message run in parallel", async () => {
		await sendPrompt(page, "tour");
		await waitIdle(page);
		const msg = page.locator('[data-testid="assistant-message"]', { has: page.locator('[data-tool="current_time"]') }).last();
		assert.equal(await msg.locator('[data-testid="tool-card"]').count(), 2);
		assert.equal(await msg.locator('[data-tool="calculator"]').getAttribute("data-status"), "done");
		assert.equal(await msg.locator('[data-tool="current_time"]').getAttribute("data-status"), "done");
		assert.match(await msg.locator('[data-tool="calculator"] [data-testid="tool-result"]').innerText(), /\(2\+3\)\*7 = 35/);
		assert.match(await lastAssistantText().innerText(), /Results of 2 tools/);
		await shot(page, "parallel-tools");
	});

	await t.test("steering while a long tool runs is answered after it; a follow-up comes last", async () => {
		await sendPrompt(page, "run a long task for 3 seconds");
		const card = lastCard("long_task");
		await waitForStep(2);
		await page.fill('[data-testid="composer-input"]', "What is 6*7?");
		await page.click('[data-testid="steer"]');
		await page.fill('[data-testid="composer-input"]', "what time is it?");
		await page.click('[data-testid="follow-up"]');
		const queued = page.locator('[data-testid="queued"]');
		assert.match(await queued.innerText(), /steer: What is 6\*7\?[\s\S]*follow-up: what time is it\?/);
		assert.equal(await card.getAttribute("data-status"), "running");
		await shot(page, "progress-and-queued");
		await waitIdle(page, 40_000);

		// Transcript order: the long task's result, then the steering message, its answer, then the follow-up.
		const order = await page.evaluate(() => {
			const items = [...document.querySelectorAll('[data-testid="tool-card"], [data-testid="user-message"]')];
			const i = items.findLastIndex((e) => e.dataset.tool === "long_task");
			return items.slice(i).map((e) =>
				e.dataset.testid === "tool-card" ? `tool:${e.dataset.tool}:${e.dataset.status}` : `user:${e.dataset.kind}:${e.querySelector(".bubble").innerText}`,
			);
		});
		assert.deepEqual(order, [
			"tool:long_task:done",
			"user:steer:What is 6*7?",
			"tool:calculator:done",
			"user:followUp:what time is it?",
			"tool:current_time:done",
		]);
		assert.match(await lastCard("long_task").locator('[data-testid="tool-result"]').innerText(), /finished: 12 steps/);
		assert.match(await lastCard("calculator").locator('[data-testid="tool-result"]').innerText(), /6\*7 = 42/);
		const texts = await page.locator('[data-testid="assistant-text"]').allInnerTexts();
		assert.ok(texts.some((x) => /long_task[\s\S]*finished[\s\S]*You also said: “What is 6\*7\?”/.test(x)), "the steer is answered after the tool result");
		assert.equal(await page.locator('[data-testid="queued"]').count(), 0, "nothing left queued");
		await shot(page, "steered-and-followed-up");
	});

	await t.test("abort stops a long tool and ends the run cleanly", async () => {
		await sendPrompt(page, "run a long task for 30 seconds");
		const card = lastCard("long_task");
		await waitForStep(3);
		await shot(page, "long-task-running");
		const started = Date.now();
		expectAbort();
		await page.click('[data-testid="abort"]');
		await waitIdle(page, 5_000);
		const took = Date.now() - started;
		assert.ok(took < 5_000, `idle ${took} ms after abort`);
		assert.equal(await card.getAttribute("data-status"), "aborted", "a tool stopped by Stop is aborted, not failed");
		const result = await card.locator('[data-testid="tool-result"]').innerText();
		assert.match(result, /Demo task aborted after [\d.]+ s \(step \d+ of 120\)/);
		const step = Number(/step (\d+) of/.exec(result)[1]);
		assert.ok(step >= 3 && step < 30, `stopped early (step ${step})`);
		await sleep(800);
		assert.equal(await card.locator('[data-testid="tool-progress"]').count(), 0, "no progress after the abort");
		assert.equal(await page.locator('[data-testid="error-banner"]').count(), 0, "an abort is not an error");
		const last = page.locator('[data-testid="assistant-message"]').last();
		assert.equal(await last.getAttribute("data-stop-reason"), "toolUse", "no request follows an aborted tool batch");
		assert.equal(await page.locator('[data-testid="send"]').isVisible(), true, "the composer is ready again");
		await shot(page, "aborted");
	});

	await t.test("a provider error is shown as an error; the chat goes on", async () => {
		await sendPrompt(page, "simulate an error please");
		await waitIdle(page);
		assert.match(await page.locator('[data-testid="message-error"]').last().innerText(), /simulated provider failure/);
		assert.equal(await page.locator('[data-testid="message-error"]').last().getAttribute("role"), "alert");
		await shot(page, "provider-error");
		await sendPrompt(page, "what is 1+1?");
		await waitIdle(page);
		assert.match(await lastCard("calculator").locator('[data-testid="tool-result"]').innerText(), /1\+1 = 2/);
	});

	await t.test("model output is rendered as text, never as HTML", async () => {
		await sendPrompt(page, 'echo <img src=x onerror="window.__pwned=1"><b>bold?</b>');
		await waitIdle(page);
		const text = await lastAssistantText().innerText();
		assert.match(text, /<img src=x onerror="window.__pwned=1"><b>bold\?<\/b>/);
		assert.equal(await page.evaluate(() => window.__pwned), undefined);
		assert.equal(await page.locator('[data-testid="transcript"] img').count(), 0);
		assert.equal(await page.locator('[data-testid="assistant-text"] b').count(), 0);
	});

	// With the agent in a Worker too (PI_DEMO_WORKER=1): the session writes from the worker.
	await t.test("a reload keeps the conversation; New chat, then a reload, starts clean", async () => {
		await waitIdle(page);
		const users = await page.locator('[data-testid="user-message"]').count();
		await page.waitForTimeout(200);
		await page.reload();
		await page.waitForFunction((n) => document.querySelectorAll('[data-testid="user-message"]').length === n, users);
		await page.click('[data-testid="new-chat"]');
		await page.click('[data-testid="new-chat-confirm"]');
		await page.waitForSelector('[data-testid="welcome"]');
		await page.waitForTimeout(200);
		await page.reload();
		await page.waitForSelector('[data-testid="welcome"]');
		assert.equal(await page.locator('[data-testid="user-message"]').count(), 0);
		assert.equal(await page.locator('[data-testid="assistant-message"]').count(), 0);
		assert.equal(await page.locator('[data-testid="usage"]').innerText(), "Tokens: 0 in · 0 out");
		assert.equal(await page.locator('[data-testid="run-status"]').getAttribute("data-streaming"), "false");
		await shot(page, "reloaded");
	});

	await t.test("no page errors, no console errors, no failed requests", async () => {
		assert.deepEqual(problems, []);
	});
});
