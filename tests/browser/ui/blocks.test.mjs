// The streaming text renderer (pi-agent-wasm/blocks and the TextBlocks of the React, Svelte and Vue
// adapters) in headless Chromium: a markdown text streamed in random splits into deltas (a property test:
// seeded splits from one character to 200 at a time), rendered after every delta by each renderer
// (app/blocks-app.js). Checked after every update: the blocks' elements hold exactly the text so far; the
// element of a finished block is never replaced and nothing inside it changes; every block object renders
// at most once, and every finished block exactly once. Also in Node: the splitter's blocks after any
// split are the blocks of the whole text split at once, and an update reads only the appended text.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { bundlePages } from "./bundle.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const APP = fileURLToPath(new URL("./app/", import.meta.url));
const PKG_DIR = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");

const PAGE = `<!doctype html><meta charset="utf-8"><body><script type="module">
import("/build/blocks.js").catch((e) => { window.__error = String(e && e.stack || e); });
</script></body>`;

test("the splitter: any split of the deltas gives the blocks of the whole text, reading only what was appended", async () => {
	if (!existsSync(join(PKG_DIR, "ui/blocks.js"))) throw new Error("pkg/ is not built: run node scripts/build.mjs");
	const { createTextBlocks } = await import(pathToFileURL(join(PKG_DIR, "ui/blocks.js")));
	// The page's generators, as plain functions (they touch no DOM).
	const source = (await import("node:fs")).readFileSync(join(APP, "blocks-app.js"), "utf8");
	const generators = source.slice(source.indexOf("/** A markdown text"), source.indexOf("// Renderers,"));
	const { markdownText, deltasOf } = await import(`data:text/javascript,${encodeURIComponent(generators)}`);
	for (let seed = 1; seed <= 40; seed++) {
		const text = markdownText(seed);
		const whole = createTextBlocks().update(text).groups.flat();
		assert.deepEqual([...new Set(whole.map((b) => b.type))].sort(), ["code", "heading", "list", "paragraph", "quote"], "every kind of block occurs");
		const splitter = createTextBlocks();
		let so = "";
		let view;
		const finished = [];
		for (const delta of deltasOf(text, seed * 7, seed % 4 === 0 ? 3 : 200)) {
			so += delta;
			view = splitter.update(so);
			const blocks = view.groups.flat();
			assert.equal(blocks.map((b) => b.text).join(""), so);
			for (let i = 0; i < view.done; i++) {
				if (finished[i] === undefined) finished[i] = blocks[i];
				else assert.equal(blocks[i], finished[i], "a finished block is the same object");
			}
			for (const group of view.groups.slice(0, -1)) assert.ok(Object.isFrozen(group) && group.length === 32);
		}
		assert.deepEqual(view.groups.flat().map((b) => [b.type, b.text, b.lang]), whole.map((b) => [b.type, b.text, b.lang]));
		// The same text again: the same view. A shorter text, or one that does not continue the last block:
		// split again from its start.
		assert.equal(splitter.update(so), view);
		const shorter = splitter.update(so.slice(0, 100));
		assert.deepEqual(shorter.groups.flat().map((b) => b.text), createTextBlocks().update(so.slice(0, 100)).groups.flat().map((b) => b.text));
		const lastStart = so.length - view.last.text.length;
		splitter.update(so);
		const other = splitter.update(`${so.slice(0, lastStart)}other${so.slice(lastStart)}`);
		assert.deepEqual(other.groups.flat().map((b) => b.text), createTextBlocks().update(`${so.slice(0, lastStart)}other${so.slice(lastStart)}`).groups.flat().map((b) => b.text));
	}

	// O(delta): an update reads the appended text and the last block, never the finished text before it. A
	// text whose finished part was swapped for other characters of the same length goes unnoticed: the
	// finished blocks stay the objects they were, with their old text.
	const splitter = createTextBlocks();
	const first = splitter.update("first paragraph\n\nsecond paragraph\n\nthird");
	assert.equal(first.done, 1, "the second paragraph is finished once the line after it is");
	const [a] = first.groups[0];
	const next = splitter.update("FIRST PARAGRAPH\n\nsecond paragraph\n\nthird, and more\n");
	assert.equal(next.groups[0][0], a);
	assert.equal(next.groups[0][0].text, "first paragraph\n\n");
	assert.equal(next.groups[0][1].text, "second paragraph\n\n");
	assert.equal(next.last.text, "third, and more\n");
	assert.throws(() => splitter.update(undefined), TypeError, "update takes strings only");
});

test("React, Svelte, Vue and the DOM renderer: exact text, finished blocks render once and keep their element", { timeout: 300000 }, async (t) => {
	if (!existsSync(join(PKG_DIR, "ui/blocks.js"))) throw new Error("pkg/ is not built: run node scripts/build.mjs");
	const cleanups = [];
	try {
		const outDir = mkdtempSync(join(tmpdir(), "pi-ui-blocks-"));
		cleanups.push(() => rmSync(outDir, { recursive: true, force: true }));
		await bundlePages({ blocks: join(APP, "blocks-app.js") }, outDir, PKG_DIR);
		const server = await startStaticServer({ "/pkg/": PKG_DIR, "/build/": outDir }, { pages: { "/blocks.html": PAGE } });
		cleanups.push(() => server.close());
		const { chromium } = await import("playwright-core");
		const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
		cleanups.push(() => browser.close());
		const page = await browser.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(String(e)));
		await page.goto(`${server.url}/blocks.html`);
		await page.waitForFunction(() => window.__ready || window.__error, null, { timeout: 30000 });
		assert.equal(await page.evaluate(() => window.__error), undefined);
		for (const kind of ["dom", "react", "svelte", "vue"]) {
			await t.test(kind, async (st) => {
				for (const [seed, max] of [[1, 1], [2, 7], [3, 40], [4, 200], [5, 13]]) {
					const result = await page.evaluate(
						([k, s, m]) => window.__blocks.run(k, window.__blocks.deltasOf(window.__blocks.markdownText(s), s * 31, m), s),
						[kind, seed, max],
					);
					st.diagnostic(`seed ${seed}, deltas of 1–${max}: ${result.length} characters, ${result.blocks} blocks (${result.done} finished), ${result.types.join(" ")}`);
					assert.deepEqual(result.problems, []);
					assert.ok(result.done >= 30, "the text has many finished blocks");
				}
			});
		}
		assert.deepEqual(errors, []);
	} finally {
		for (const c of cleanups.reverse()) await c();
	}
});

test("the README's splitter example", async () => {
	const { createTextBlocks } = await import(pathToFileURL(join(PKG_DIR, "ui/blocks.js")));
	// --- the README's example ---
	const splitter = createTextBlocks();
	let view = splitter.update("# Title\n\nFirst paragraph.\n\nSecond\n");
	assert.equal(view.done, 2);
	assert.equal(view.last.text, "Second\n");
	const [title] = view.groups[0];
	assert.deepEqual({ ...title }, { key: 0, type: "heading", text: "# Title\n\n" });
	view = splitter.update("# Title\n\nFirst paragraph.\n\nSecond\nparagraph.\n\n```js\nconst x = 1;\n");
	assert.equal(view.groups[0][0], title);
	assert.equal(view.last.type, "code");
	assert.equal(view.last.lang, "js");
	assert.equal(view.groups.flat().map((b) => b.text).join(""), view.text);
});
