// Edit, regenerate and move between versions in the demo, with its session (IndexedDB), across a reload,
// with the agent in the page (at 390×844) and in a Worker (at 1280×800): an edited prompt and a regenerated
// answer start new versions, the earlier ones stay reachable with ‹ ›, and a reload shows the same versions.
// Screenshots: test-output/e2e/branches-*.png.
import test from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, assertAccessible, ensureAppBuilt, launchChromium, newPage, screenshot, sendPrompt, startDemoServer, waitIdle } from "./support.mjs";

const sel = (id) => `[data-testid="${id}"]`;

for (const [mode, vp] of [
	["page", VIEWPORTS.find((v) => v.name === "phone")],
	["worker", VIEWPORTS.find((v) => v.name === "desktop")],
]) {
	test(`branches in the demo, agent in the ${mode}, at ${vp.width}×${vp.height}`, { timeout: 300_000 }, async (t) => {
		await ensureAppBuilt();
		const server = await startDemoServer({ PI_DEMO_DELAY_SCALE: "0.1" });
		t.after(() => server.close());
		const browser = await launchChromium();
		t.after(() => browser.close());
		const { page, problems } = await newPage(browser, { viewport: { width: vp.width, height: vp.height } });
		const shot = (name) => screenshot(page, "branches", `${mode}-${name}`);
		const users = () => page.locator(sel("user-message"));
		const bubbles = () => page.locator(`${sel("user-message")} .bubble`).allInnerTexts();
		const results = () => page.locator(sel("tool-result")).allInnerTexts();
		const ready = async () => {
			await page.waitForSelector(`${sel("session-status")}[data-role="leader"]`);
			await waitIdle(page);
		};

		await page.goto(mode === "worker" ? `${server.url}?worker=1` : server.url);
		await ready();
		await sendPrompt(page, "hello");
		await waitIdle(page);
		await sendPrompt(page, "what is 2+2?");
		await waitIdle(page);
		assert.deepEqual(await results(), ["2+2 = 4"]);

		await t.test("editing a sent prompt starts a new version; the earlier one stays reachable", async () => {
			await users().nth(1).locator(sel("edit-message")).click();
			await page.fill(sel("edit-input"), "what is 3+3?");
			await page.click(sel("edit-save"));
			await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="tool-result"]')].some((e) => e.textContent === "3+3 = 6"));
			await waitIdle(page);
			assert.deepEqual(await bubbles(), ["hello", "what is 3+3?"]);
			assert.deepEqual(await results(), ["3+3 = 6"]);
			const nav = users().nth(1).locator(sel("branch-nav"));
			assert.equal(await nav.locator(sel("branch-label")).innerText(), "2/2");
			const prevBox = await nav.locator(sel("branch-prev")).boundingBox();
			assert.ok(prevBox.width >= 24 && prevBox.height >= 24, `‹ is large enough to tap (${prevBox.width}×${prevBox.height})`);
			await assertAccessible(page, "an edited prompt");
			await shot("edited");
			await nav.locator(sel("branch-prev")).click();
			await page.waitForFunction(() => document.querySelectorAll('[data-testid="branch-label"]')[0]?.textContent === "1/2");
			assert.deepEqual(await bubbles(), ["hello", "what is 2+2?"]);
			assert.deepEqual(await results(), ["2+2 = 4"]);
		});

		await t.test("regenerating an answer starts a new version of it; the earlier answer comes back with what followed", async () => {
			const first = page.locator(sel("assistant-message")).first();
			await page.locator(sel("regenerate")).first().click();
			await page.waitForFunction(() => document.querySelectorAll('[data-testid="user-message"]').length === 1);
			await waitIdle(page);
			const nav = page.locator(`${sel("answer-actions")} ${sel("branch-nav")}`).first();
			assert.equal(await nav.locator(sel("branch-label")).innerText(), "2/2");
			assert.match(await first.innerText(), /offline demo model/);
			await shot("regenerated");
			await nav.locator(sel("branch-prev")).click();
			await page.waitForFunction(() => document.querySelectorAll('[data-testid="user-message"]').length === 2);
			assert.deepEqual(await bubbles(), ["hello", "what is 2+2?"]);
			assert.equal(await page.locator(`${sel("answer-actions")} ${sel("branch-label")}`).first().innerText(), "1/2");
			assert.equal(await users().nth(1).locator(sel("branch-label")).innerText(), "1/2", "the deeper versions are still there");
		});

		await t.test("a reload shows the same versions, and switching still works", async () => {
			const before = { bubbles: await bubbles(), labels: await page.locator(sel("branch-label")).allInnerTexts() };
			await page.reload();
			await ready();
			await page.waitForFunction((n) => document.querySelectorAll('[data-testid="branch-label"]').length === n, before.labels.length);
			assert.deepEqual(await bubbles(), before.bubbles);
			assert.deepEqual(await page.locator(sel("branch-label")).allInnerTexts(), before.labels);
			await users().nth(1).locator(sel("branch-next")).click();
			await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="tool-result"]')].some((e) => e.textContent === "3+3 = 6"));
			assert.deepEqual(await bubbles(), ["hello", "what is 3+3?"]);
			await sendPrompt(page, "what time is it?");
			await waitIdle(page);
			assert.equal(await users().count(), 3, "the conversation goes on from the version shown");
			await assertAccessible(page, "versions after a reload");
			await shot("reloaded");
		});

		await t.test("no page errors, no console errors, no failed requests", async () => {
			assert.deepEqual(problems, []);
		});
	});
}
