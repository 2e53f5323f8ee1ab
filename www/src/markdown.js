// The markdown parsing of the demo (marked, GitHub-flavoured), apart from the DOM so that it runs in Node
// too (www/bench/markdown-stream.mjs measures it with the package's block splitter). Model text is never trusted as HTML: raw HTML is shown as
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

/** The HTML of one block (not sanitised yet); `links` holds the answer's reference definitions. */
export function blockHtml(token, links) {
	const list = [token];
	list.links = links;
	return marked.parser(list);
}
