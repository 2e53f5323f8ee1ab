// The demo as a person meets it, at 1280×800 and at 390×844, in headless Chromium against the demo server
// and its offline model: the layout (a header of one row that does not grow, a composer that keeps its width
// while the agent works, no sideways scrolling), markdown (headings, lists, tables, safe links, highlighted
// code with a copy button), accessibility (axe-core on every state, a modal approval dialog with focus
// trapped, Escape and focus returned, live regions that announce an answer once, a keyboard-only journey),
// one word per outcome, dark mode, suggestions, "jump to latest", input too large for the server (refused
// before sending, and a refused request that leaves the chat usable), "New chat" that asks first, and a
// second tab that shows the chat runs elsewhere and can take it over. Element sizes are asserted; the
// screenshots (test-output/e2e/experience-*.png) are for people.
import test from "node:test";
import assert from "node:assert/strict";
import {
	VIEWPORTS,
	assertAccessible,
	box,
	ensureAppBuilt,
	launchChromium,
	newPage,
	overflowsX,
	screenshot,
	sendPrompt,
	startDemoServer,
	waitBusy,
	waitIdle,
} from "./support.mjs";

const sel = (id) => `[data-testid="${id}"]`;
const focused = (page) => page.evaluate(() => document.activeElement?.dataset?.testid ?? document.activeElement?.tagName);
const insideDialog = (page) => page.evaluate(() => Boolean(document.activeElement?.closest("dialog[open]")));

for (const vp of VIEWPORTS) {
	test(`the demo at ${vp.width}×${vp.height} (${vp.name})`, { timeout: 420_000 }, async (t) => {
		await ensureAppBuilt();
		const server = await startDemoServer({ PI_DEMO_DELAY_SCALE: "0.3" });
		t.after(() => server.close());
		const browser = await launchChromium();
		t.after(() => browser.close());
		const { page, context, problems, expectAbort } = await newPage(browser, { viewport: { width: vp.width, height: vp.height } });
		await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
		const shot = (name) => screenshot(page, "experience", `${vp.name}-${name}`);
		let headerHeight;

		/** The sizes that must hold in every state: one header row, a full-width composer, no sideways scroll. */
		async function assertLayout(state) {
			const header = await box(page, sel("header"));
			assert.ok(header.height <= 56, `${state}: the header is one row (${header.height}px)`);
			if (headerHeight === undefined) headerHeight = header.height;
			assert.equal(header.height, headerHeight, `${state}: the header keeps its height`);
			const input = await box(page, sel("composer-input"));
			assert.ok(input.width >= vp.width - 40 || input.width >= 860, `${state}: the message box keeps its width (${input.width}px of ${vp.width})`);
			assert.ok(input.height >= 50, `${state}: the message box keeps two lines (${input.height}px)`);
			const composer = await box(page, sel("composer"));
			assert.ok(composer.bottom <= vp.height + 0.5, `${state}: the composer is on screen`);
			for (const id of ["send", "steer", "follow-up", "abort", "new-chat", "menu-button"]) {
				const b = await box(page, sel(id));
				if (!b) continue;
				assert.ok(b.right <= vp.width && b.x >= 0, `${state}: ${id} is on screen`);
				assert.ok(b.height >= 32 && b.width >= 32, `${state}: ${id} is large enough to tap (${b.width}×${b.height})`);
			}
			const transcript = await box(page, sel("transcript"));
			assert.ok(transcript.height >= vp.height * 0.5, `${state}: the conversation gets most of the screen (${transcript.height}px)`);
			assert.equal(await overflowsX(page), false, `${state}: nothing scrolls sideways`);
		}

		await t.test("loads with headings, labelled controls and suggestions as buttons", async () => {
			await page.goto(server.url);
			await page.waitForSelector(sel("welcome"));
			await page.waitForSelector(`${sel("session-status")}[data-role="leader"]`);
			assert.equal(await page.locator("h1").count(), 1);
			assert.match(await page.locator("h1").innerText(), /pi-agent-wasm/);
			assert.deepEqual(await page.locator("h2").allInnerTexts(), ["Conversation", "Start a conversation", "Your message"]);
			assert.equal(await page.getByRole("textbox", { name: "Message" }).count(), 1, "the message box has a label");
			assert.equal(await page.getByRole("combobox", { name: "Model" }).count(), 1);
			assert.ok((await page.getByRole("button", { name: "tour" }).count()) === 1, "suggestions are buttons");
			assert.equal(await page.locator(sel("run-status")).getAttribute("role"), "status");
			await assertLayout("welcome");
			await assertAccessible(page, "welcome");
			await shot("welcome");
		});

		await t.test("a keyboard-only journey: Tab to a suggestion, Enter sends it; the status is announced once per change", async () => {
			await page.evaluate(() => {
				const seen = (window.__status = []);
				const el = document.querySelector('[data-testid="run-status"] > span');
				new MutationObserver(() => seen.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
				// A block of an answer (`[data-block]`, from TextBlocks) is finished once another block follows it (it may
				// change in that same render, as its end is known then): after that render it must not change again.
				const late = (window.__lateBlockChanges = []);
				const finished = new WeakSet();
				window.__blockChanges = 0;
				new MutationObserver((records) => {
					const seen = new Set();
					for (const r of records) {
						const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
						const md = node?.closest(".md");
						if (!md) continue;
						seen.add(md);
						const block = node.closest("[data-block]");
						if (!block) continue;
						window.__blockChanges++;
						if (finished.has(block)) late.push(`${block.dataset.block}: ${block.outerHTML.slice(0, 80)}`);
					}
					for (const md of seen) {
						const blocks = md.querySelectorAll("[data-block]");
						for (let i = 0; i < blocks.length - 1; i++) finished.add(blocks[i]);
					}
				}).observe(document.querySelector('[data-testid="transcript"]'), { childList: true, characterData: true, subtree: true, attributes: true });
				const live = (window.__live = []);
				const region = document.querySelector('[data-testid="live-answer"]');
				new MutationObserver(() => live.push(region.textContent)).observe(region, { childList: true, characterData: true, subtree: true });
			});
			await page.locator("body").focus();
			let reached = false;
			for (let i = 0; i < 20 && !reached; i++) {
				await page.keyboard.press("Tab");
				reached = await page.evaluate(() => document.activeElement?.textContent === "show some markdown");
			}
			assert.ok(reached, "the suggestion is reachable with Tab");
			await page.keyboard.press("Enter");
			await waitBusy(page);
			await waitIdle(page);
			const statuses = await page.evaluate(() => window.__status);
			assert.deepEqual(statuses, ["Agent working…", "Idle"], "the status region changes twice, not per token");
			const late = await page.evaluate(() => window.__lateBlockChanges);
			assert.ok((await page.evaluate(() => window.__blockChanges)) > 10, "the answer streamed into its blocks");
			assert.deepEqual(late, [], "a finished markdown block is rendered once");
			const live = await page.evaluate(() => window.__live);
			assert.equal(live.length, 1, `the answer is announced once (${live.length} changes)`);
			assert.match(live[0], /^Assistant: # Markdown in the demo/);
		});

		await t.test("markdown: headings, lists, a table, safe links, code highlighted with a copy button", async () => {
			const md = page.locator(`${sel("assistant-text")} .md`).last();
			assert.equal(await md.locator("h3").innerText(), "Markdown in the demo", "an answer's # heading sits under the page's h2");
			assert.deepEqual(await md.locator("h4").allInnerTexts(), ["Lists", "Links and tables"]);
			assert.deepEqual(await md.locator("ol > li").allInnerTexts(), ["one", "two", "three"]);
			assert.equal(await md.locator("table tr").count(), 3);
			assert.equal(await md.locator("del").innerText(), "no");
			const about = md.locator("a", { hasText: "the about page" });
			assert.equal(await about.getAttribute("href"), "/about.txt");
			assert.equal(await about.getAttribute("target"), "_blank");
			assert.match(await about.getAttribute("rel"), /noopener/);
			assert.equal(await md.locator('a[href^="javascript"]').count(), 0, "a javascript: link loses its href");
			assert.equal(await md.locator("b").count(), 0, "raw HTML is shown as text");
			assert.match(await md.innerText(), /<b>not bold<\/b>/);
			const code = md.locator(sel("code-block")).first();
			assert.ok((await code.locator(".hljs-keyword").count()) >= 2, "code is highlighted");
			const fontSize = await code.locator("pre").evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
			assert.ok(fontSize >= 12.5, `code is readable (${fontSize}px)`);
			await code.locator(sel("copy-code")).click();
			await page.waitForFunction(() => document.querySelector('[data-testid="copy-code"]').textContent.startsWith("Copied"));
			assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'const agent = new Agent({ streamFn });\nawait agent.prompt("hello"); // 42');
			await assertLayout("after the first answer");
			await assertAccessible(page, "a markdown answer");
			await shot("markdown");
		});

		await t.test("while the agent works the composer keeps its size; Stop makes every outcome read aborted", async () => {
			await sendPrompt(page, "run a long task for 20 seconds");
			await page.waitForSelector(`${sel("tool-card")}[data-status="running"] ${sel("tool-progress")}`);
			await page.fill(sel("composer-input"), "Steer the agent while it works");
			await assertLayout("working");
			await assertAccessible(page, "working");
			await shot("working");
			expectAbort();
			await page.click(sel("abort"));
			await waitIdle(page);
			const card = page.locator(`${sel("tool-card")}[data-tool="long_task"]`).last();
			assert.equal(await card.locator(sel("tool-status")).innerText(), "aborted", "a tool stopped by Stop is aborted, not failed");
			assert.equal(await page.inputValue(sel("composer-input")), "Steer the agent while it works", "the draft is kept");
			await page.fill(sel("composer-input"), "");
			await assertLayout("stopped");
			// An answer stopped while it streams: aborted, its usage unknown rather than 0.
			await sendPrompt(page, "hello");
			await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="assistant-text"]')].pop()?.textContent.length > 20);
			expectAbort();
			await page.click(sel("abort"));
			await waitIdle(page);
			const last = page.locator(sel("assistant-message")).last();
			assert.equal(await last.getAttribute("data-outcome"), "aborted");
			assert.match(await last.locator(sel("message-meta")).innerText(), /^aborted · .*usage unknown/);
			assert.match(await page.locator(sel("menu-usage")).innerText(), /1 answer unknown/);
		});

		await t.test("the thinking block stays open when the answer ends, so the text does not move", async () => {
			await sendPrompt(page, "hello");
			await page.waitForFunction(() => {
				const el = [...document.querySelectorAll('[data-testid="assistant-message"]')].pop();
				return el?.querySelector('[data-testid="thinking"]')?.open && el.querySelector('[data-testid="assistant-text"]')?.textContent.length > 20;
			});
			const during = await page.evaluate(() => {
				const el = [...document.querySelectorAll('[data-testid="assistant-text"]')].pop();
				return el.getBoundingClientRect().top - el.closest("article").getBoundingClientRect().top;
			});
			await waitIdle(page);
			const after = await page.evaluate(() => {
				const el = [...document.querySelectorAll('[data-testid="assistant-text"]')].pop();
				return { top: el.getBoundingClientRect().top - el.closest("article").getBoundingClientRect().top, open: el.closest("article").querySelector("details").open };
			});
			assert.equal(after.open, true);
			assert.equal(after.top, during, "the answer's text keeps its place");
		});

		await t.test("the approval dialog is modal: focus inside, Tab cycles, Escape denies, focus goes back", async () => {
			await page.focus(sel("composer-input"));
			await page.keyboard.type("read the about page");
			await page.keyboard.press("Enter");
			await page.waitForSelector(`${sel("approval-dialog")}[open]`);
			assert.equal(await focused(page), "approve");
			const dialog = await box(page, sel("approval-dialog"));
			assert.ok(dialog.width <= vp.width - 16 && dialog.x >= 8, `the dialog fits the screen (${dialog.width}px)`);
			await assertAccessible(page, "approval dialog");
			await shot("approval");
			const seen = new Set();
			for (let i = 0; i < 8; i++) {
				await page.keyboard.press("Tab");
				assert.ok(await insideDialog(page), `Tab ${i + 1} stays in the dialog`);
				seen.add(await focused(page));
			}
			for (let i = 0; i < 3; i++) {
				await page.keyboard.press("Shift+Tab");
				assert.ok(await insideDialog(page), "Shift+Tab stays in the dialog");
			}
			assert.ok(seen.has("deny") && seen.has("deny-reason") && seen.has("dialog-abort"), `every control is reachable (${[...seen]})`);
			await page.keyboard.press("Escape");
			await page.waitForSelector(sel("approval-dialog"), { state: "detached" });
			assert.equal(await focused(page), "composer-input", "focus is back in the message box");
			await waitIdle(page);
			const card = page.locator(`${sel("tool-card")}[data-tool="fetch_page"]`).last();
			assert.equal(await card.getAttribute("data-status"), "denied");
			assert.equal(await card.locator(sel("tool-status")).innerText(), "denied");
		});

		await t.test("with the keyboard: the menu opens, Escape closes it and gives focus back; Edit opens an editor that Escape closes", async () => {
			await page.focus(sel("menu-button"));
			await page.keyboard.press("Enter");
			await page.waitForSelector(`${sel("menu")}:not([hidden])`);
			assert.equal(await page.getAttribute(sel("menu-button"), "aria-expanded"), "true");
			const panel = await box(page, sel("menu"));
			assert.ok(panel.right <= vp.width && panel.x >= 0, "the menu is on screen");
			await assertAccessible(page, "menu open");
			await page.keyboard.press("Tab");
			assert.equal(await page.evaluate(() => Boolean(document.activeElement.closest('[data-testid="menu"]'))), true, "Tab moves into the menu");
			await page.keyboard.press("Escape");
			await page.waitForSelector(`${sel("menu")}[hidden]`, { state: "attached" });
			assert.equal(await focused(page), "menu-button");
			await page.focus(`${sel("user-message")} ${sel("edit-message")}`);
			await page.keyboard.press("Enter");
			await page.waitForSelector(sel("edit-input"));
			assert.equal(await focused(page), "edit-input", "the editor takes focus");
			await page.keyboard.press("Escape");
			await page.waitForSelector(sel("edit-input"), { state: "detached" });
		});

		await t.test("jump to latest: offered when scrolled up, brings the newest message back", async () => {
			await page.evaluate(() => (document.querySelector('[data-testid="transcript"]').scrollTop = 0));
			await page.waitForSelector(sel("jump-to-latest"));
			const jump = await box(page, sel("jump-to-latest"));
			assert.ok(jump.right <= vp.width && jump.height >= 32);
			await assertAccessible(page, "scrolled up");
			await page.click(sel("jump-to-latest"));
			await page.waitForSelector(sel("jump-to-latest"), { state: "detached" });
			const atBottom = await page.evaluate(() => {
				const el = document.querySelector('[data-testid="transcript"]');
				return el.scrollHeight - el.scrollTop - el.clientHeight < 80;
			});
			assert.ok(atBottom);
		});

		await t.test("a message larger than the server takes is refused before sending", async () => {
			const big = "x".repeat(2_200_000);
			await page.fill(sel("composer-input"), big);
			await page.waitForSelector(sel("size-warning"));
			assert.match(await page.locator(sel("size-warning")).innerText(), /Too large to send: .* 2\.00 MB/);
			assert.equal(await page.isDisabled(sel("send")), true);
			assert.equal(await page.getAttribute(sel("composer-input"), "aria-invalid"), "true");
			await assertLayout("too large");
			await assertAccessible(page, "too large");
			await page.keyboard.press("Enter");
			assert.equal(await page.inputValue(sel("composer-input")).then((v) => v.length), big.length, "Enter does not send it");
			await page.fill(sel("composer-input"), "");
		});

		await t.test("New chat asks first; Escape keeps the chat, confirming starts over", async () => {
			const users = await page.locator(sel("user-message")).count();
			await page.click(sel("new-chat"));
			await page.waitForSelector(`${sel("new-chat-dialog")}[open]`);
			assert.equal(await focused(page), "new-chat-cancel");
			await assertAccessible(page, "new chat dialog");
			await shot("new-chat");
			await page.keyboard.press("Escape");
			await page.waitForSelector(sel("new-chat-dialog"), { state: "detached" });
			assert.equal(await focused(page), "new-chat");
			assert.equal(await page.locator(sel("user-message")).count(), users);
			await page.click(sel("new-chat"));
			await page.click(sel("new-chat-confirm"));
			await page.waitForSelector(sel("welcome"));
			assert.equal(await page.locator(sel("user-message")).count(), 0);
		});

		await t.test("dark mode follows the system", async () => {
			await page.emulateMedia({ colorScheme: "dark" });
			await sendPrompt(page, "show some markdown");
			await waitIdle(page);
			const lum = await page.evaluate(() => {
				const [r, g, b] = getComputedStyle(document.querySelector(".app")).backgroundColor.match(/\d+/g).map(Number);
				return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
			});
			assert.ok(lum < 0.2, `a dark background (${lum.toFixed(2)})`);
			await assertAccessible(page, "dark mode");
			await shot("dark");
			await page.emulateMedia({ colorScheme: "light" });
		});

		await t.test("a second tab shows that the chat runs elsewhere, read-only, and can take it over", async () => {
			const second = await newPage(browser, { context });
			t.after(() => second.page.close());
			await second.page.goto(server.url);
			await second.page.waitForSelector(sel("elsewhere"));
			assert.equal(await second.page.getAttribute(sel("composer-input"), "readonly"), "");
			assert.equal(await second.page.isDisabled(sel("send")), true);
			assert.equal(await second.page.locator(sel("user-message")).count(), await page.locator(sel("user-message")).count(), "it shows the same chat");
			await assertAccessible(second.page, "second tab");
			await screenshot(second.page, "experience", `${vp.name}-second-tab`);
			await second.page.click(sel("take-over"));
			await second.page.waitForSelector(`${sel("session-status")}[data-role="leader"]`);
			await page.waitForSelector(sel("elsewhere"));
			assert.equal(await page.getAttribute(sel("composer-input"), "readonly"), "");
			await sendPrompt(second.page, "what is 6*7?");
			await waitIdle(second.page);
			await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="tool-result"]')].some((e) => e.textContent.includes("6*7 = 42")));
			await page.click(sel("take-over"));
			await page.waitForSelector(`${sel("session-status")}[data-role="leader"]`);
			await second.page.waitForSelector(sel("elsewhere"));
			assert.deepEqual(second.problems, []);
		});

		await t.test("no page errors, no console errors, no failed or aborted requests but the stopped one", async () => {
			assert.deepEqual(problems, []);
		});
	});
}

test("a request refused for its input leaves the chat usable: the message is edited or removed", { timeout: 240_000 }, async (t) => {
	await ensureAppBuilt();
	// A server that takes 40 kB, and a page that does not know it (an older /api/config): the first large
	// message is sent and refused with 413.
	const server = await startDemoServer({ PI_DEMO_DELAY_SCALE: "0", PI_DEMO_MAX_BODY_BYTES: "40000" });
	t.after(() => server.close());
	const browser = await launchChromium();
	t.after(() => browser.close());
	const { page, problems } = await newPage(browser, { viewport: { width: 390, height: 844 } });
	await page.route("**/api/config", async (route) => {
		const response = await route.fetch();
		const body = await response.json();
		delete body.maxBodyBytes;
		await route.fulfill({ response, json: body });
	});
	// The 413 itself is expected here.
	const expected = (p) => /HTTP 413: POST .*\/api\/stream/.test(p) || /Failed to load resource: .* 413/.test(p);
	await page.goto(server.url);
	await page.waitForSelector(`${sel("session-status")}[data-role="leader"]`);
	const big = `please read this: ${"y".repeat(50_000)}`;
	await sendPrompt(page, big);
	await waitIdle(page);
	assert.match(await page.locator(sel("message-error")).innerText(), /request body too large \(limit 40000 bytes\)/);
	await page.waitForSelector(sel("failed-prompt-actions"));
	await assertAccessible(page, "a refused message");
	await screenshot(page, "experience", "refused");
	// The limit the server named is now the one the page checks.
	await page.fill(sel("composer-input"), big);
	await page.waitForSelector(sel("size-warning"));
	await page.fill(sel("composer-input"), "");

	await page.click(sel("edit-message"));
	await page.fill(sel("edit-input"), "hello");
	await page.click(sel("edit-save"));
	await waitIdle(page);
	assert.equal(await page.locator(sel("user-message")).count(), 1, "the refused message was replaced");
	assert.equal(await page.locator(sel("message-error")).count(), 0);
	assert.match(await page.locator(sel("assistant-text")).last().innerText(), /offline demo model/);

	// After a reload the page knows no limit again: the next large message is refused too, and removed.
	await page.reload();
	await page.waitForSelector(`${sel("session-status")}[data-role="leader"]`);
	await sendPrompt(page, `and this: ${"z".repeat(50_000)}`);
	await waitIdle(page);
	await page.waitForSelector(sel("failed-prompt-actions"));
	await page.click(sel("remove-message"));
	await page.waitForFunction(() => document.querySelectorAll('[data-testid="user-message"]').length === 1);
	assert.equal(await page.locator(sel("message-error")).count(), 0);
	await sendPrompt(page, "what is 2+2?");
	await waitIdle(page);
	assert.match(await page.locator(sel("tool-result")).last().innerText(), /2\+2 = 4/);
	assert.deepEqual(problems.filter((p) => !expected(p)), []);
});

test("at 360×740, the narrowest phone: one header row, a full-width message box while the agent works", { timeout: 120_000 }, async (t) => {
	await ensureAppBuilt();
	const server = await startDemoServer({ PI_DEMO_DELAY_SCALE: "0.3" });
	t.after(() => server.close());
	const browser = await launchChromium();
	t.after(() => browser.close());
	const { page, problems, expectAbort } = await newPage(browser, { viewport: { width: 360, height: 740 } });
	await page.goto(server.url);
	await page.waitForSelector(sel("welcome"));
	await sendPrompt(page, "run a long task for 20 seconds");
	await page.waitForSelector(`${sel("tool-card")}[data-status="running"]`);
	const header = await box(page, sel("header"));
	assert.ok(header.height <= 56, `one header row (${header.height}px)`);
	const picker = await box(page, sel("model-picker"));
	assert.ok(picker.width >= 96, `the model picker stays readable (${picker.width}px)`);
	const input = await box(page, sel("composer-input"));
	assert.ok(input.width >= 330, `the message box keeps its width (${input.width}px)`);
	for (const id of ["steer", "follow-up", "abort"]) assert.ok((await box(page, sel(id))).right <= 360, `${id} is on screen`);
	assert.equal(await overflowsX(page), false);
	await assertAccessible(page, "360 px, working");
	await screenshot(page, "experience", "small-working");
	expectAbort();
	await page.click(sel("abort"));
	await waitIdle(page);
	assert.deepEqual(problems, []);
});
