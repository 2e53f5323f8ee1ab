// How much the demo's markdown costs while a long answer streams: the whole answer parsed again on every
// frame (what a renderer given the whole text does) against the demo's way (the package's block splitter,
// createTextBlocks, then src/markdown.js on each block whose text changed: a finished block is parsed once,
// as TextBlocks renders it once). Same answer, same frames, runs interleaved; prints the totals and the ratio.
// `node bench/markdown-stream.mjs [kilobytes=100] [charsPerFrame=120]`
import { performance } from "node:perf_hooks";
import { Marked } from "marked";
import { createTextBlocks } from "pi-agent-wasm/blocks";
import { blockHtml, lex } from "../src/markdown.js";

const kb = Number(process.argv[2] ?? 100);
const perFrame = Number(process.argv[3] ?? 120);

const SECTION = (i) =>
	[
		`## Part ${i}`,
		"",
		`Paragraph ${i} with **bold**, _emphasis_, \`code\` and [a link](https://example.com/${i}). `.repeat(3),
		"",
		"1. first item",
		"2. second item with `inline code`",
		"3. third item",
		"",
		"| a | b |",
		"| --- | --- |",
		`| ${i} | ${i * 2} |`,
		"",
		"```js",
		`const value${i} = await agent.prompt("part ${i}");`,
		"console.log(value);",
		"```",
		"",
	].join("\n");
let answer = "";
for (let i = 0; answer.length < kb * 1024; i++) answer += SECTION(i);
const frames = [];
for (let at = perFrame; at < answer.length + perFrame; at += perFrame) frames.push(answer.slice(0, Math.min(at, answer.length)));

// The same marked configuration the demo uses, through marked.parse on the whole text.
const full = new Marked({ gfm: true, breaks: true });
function runFull() {
	let bytes = 0;
	const t0 = performance.now();
	for (const text of frames) bytes += full.parse(text).length;
	return { ms: performance.now() - t0, bytes };
}
const blockToHtml = (text) => {
	const tokens = lex(text);
	return tokens.map((t) => blockHtml(t, tokens.links)).join("");
};
function runIncremental() {
	let bytes = 0;
	const splitter = createTextBlocks();
	const parsed = new WeakSet();
	const t0 = performance.now();
	for (const text of frames) {
		const view = splitter.update(text);
		for (const group of view.groups) {
			for (const block of group) {
				if (parsed.has(block)) continue;
				parsed.add(block);
				bytes += blockToHtml(block.text).length;
			}
		}
	}
	return { ms: performance.now() - t0, bytes };
}

// The blocks' HTML joined is the whole answer's HTML (the headings aside: the demo shifts them by two).
const shift = (html) => html.replace(/<(\/?)h([1-6])>/g, (_, s, n) => `<${s}h${Math.min(6, Number(n) + 2)}>`);
const whole = createTextBlocks().update(answer);
const joined = whole.groups.flat().map((b) => blockToHtml(b.text)).join("");
if (joined !== shift(full.parse(answer))) throw new Error("the blocks' HTML differs from the whole answer's");

const results = { full: [], incremental: [] };
for (let round = 0; round < 3; round++) {
	results.full.push(runFull().ms);
	results.incremental.push(runIncremental().ms);
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = median(results.full);
const inc = median(results.incremental);
console.log(`answer ${answer.length} chars, ${frames.length} frames of ${perFrame} chars`);
console.log(`whole text parsed per frame: ${f.toFixed(0)} ms in all, ${(f / frames.length).toFixed(2)} ms per frame`);
console.log(`only the unfinished block:   ${inc.toFixed(0)} ms in all, ${(inc / frames.length).toFixed(3)} ms per frame`);
console.log(`ratio: ${(f / inc).toFixed(1)}× less parsing (medians of 3 interleaved rounds)`);
