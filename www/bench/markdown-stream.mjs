// How much the demo's markdown costs while a long answer streams: the whole answer parsed again on every
// frame (what a renderer given the whole text does) against the demo's way (src/markdown.js: only the text
// after the finished blocks is lexed, and only blocks whose source changed are turned into HTML; React
// skips the others). Same answer, same frames, runs interleaved; prints the totals and the ratio.
// `node bench/markdown-stream.mjs [kilobytes=100] [charsPerFrame=120]`
import { performance } from "node:perf_hooks";
import { Marked } from "marked";
import { blockHtml, lex, splitBlocks } from "../src/markdown.js";

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
function runIncremental() {
	let bytes = 0;
	const memo = {};
	let previous = [];
	const t0 = performance.now();
	for (const text of frames) {
		const { blocks, links } = splitBlocks(text, memo);
		blocks.forEach((b, i) => {
			if (previous[i]?.raw !== b.raw) bytes += blockHtml(b, links).length;
		});
		previous = blocks;
	}
	// When the answer ends the demo lexes it whole once.
	const last = lex(answer);
	last.forEach((b, i) => {
		if (previous[i]?.raw !== b.raw) bytes += blockHtml(b, last.links).length;
	});
	return { ms: performance.now() - t0, bytes };
}

// The blocks' HTML joined is the whole answer's HTML (the headings aside: the demo shifts them by two).
const shift = (html) => html.replace(/<(\/?)h([1-6])>/g, (_, s, n) => `<${s}h${Math.min(6, Number(n) + 2)}>`);
const whole = lex(answer);
const joined = whole.map((b) => blockHtml(b, whole.links)).join("");
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
