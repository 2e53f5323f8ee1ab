// The markdown parsing of the demo (marked, GitHub-flavoured), apart from the DOM so that it runs in Node
// too (www/bench/markdown-stream.mjs measures it). Model text is never trusted as HTML: raw HTML is shown as
// the characters it is, images become links, and Markdown.jsx sanitises what this makes with DOMPurify.
import { Marked } from "marked";

export const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const marked = new Marked({
	gfm: true,
	breaks: true,
	renderer: {
		// The page's headings are h1 (the app) and h2 (its regions): an answer's headings start at h3.
		heading({ tokens, depth }) {
			const level = Math.min(6, depth + 2);
			return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
		},
		// Raw HTML from the model: shown as text.
		html: ({ text }) => escapeHtml(text),
		// An image from the model: a link to it, so nothing is fetched unless the user asks.
		image: ({ href, text }) => `<a href="${escapeHtml(href ?? "")}">${escapeHtml(text || href || "image")}</a>`,
		// A task list's box as a mark, not a form control (it cannot be ticked here).
		checkbox: ({ checked }) => (checked ? '<span class="task" role="img" aria-label="done">☑</span> ' : '<span class="task" role="img" aria-label="to do">☐</span> '),
	},
});

/** The blocks of `text` as marked's top-level tokens (reference definitions from `links`). */
export function lex(text) {
	return marked.lexer(text);
}

/**
 * Cuts `text` into blocks, lexing only what follows the blocks finished at the last call (`memo` keeps
 * them). Returns { blocks, links }. A text that does not extend the last one is lexed from its start.
 */
export function splitBlocks(text, memo) {
	let stable = memo.stable ?? [];
	let at = memo.at ?? 0;
	// A streaming answer only grows: the text before the unfinished block is checked by its last characters,
	// not read again whole (a text that was replaced rather than extended is caught by its length or its end).
	const from = Math.max(0, at - 256);
	if (memo.text === undefined || text.length < at || text.slice(from, at) !== memo.text.slice(from, at)) {
		stable = [];
		at = 0;
	}
	const tail = lex(text.slice(at));
	const links = { ...(memo.links ?? {}), ...(tail.links ?? {}) };
	// The last block can still grow (a paragraph becomes a heading, a list gains items): not finished.
	let last = tail.length - 1;
	while (last >= 0 && tail[last].type === "space") last--;
	const done = tail.slice(0, Math.max(0, last));
	memo.text = text;
	memo.stable = stable.concat(done);
	memo.at = at + done.reduce((n, t) => n + t.raw.length, 0);
	memo.links = links;
	return { blocks: stable.concat(tail), links };
}

/** The HTML of one block (not sanitised yet); `links` holds the answer's reference definitions. */
export function blockHtml(token, links) {
	const list = [token];
	list.links = links;
	return marked.parser(list);
}
