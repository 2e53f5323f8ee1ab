// Model output as markdown: marked (GitHub-flavoured: tables, task lists, strikethrough, autolinks) for the
// parsing, DOMPurify for the HTML it makes, highlight.js for code. Model text is never trusted as HTML:
// raw HTML in an answer is shown as the characters it is, images become links (an answer must not make the
// page load a URL), links open in a new tab without the opener, and DOMPurify drops what is left
// (javascript: URLs, event attributes).
//
// While an answer streams, only its last block is parsed again: the text is cut into blocks (marked's
// top-level tokens), a block followed by another one is finished, and the text after the finished blocks is
// all that is lexed per frame. Each block is a memoised component keyed by its source, so a finished block
// renders once. When the answer ends, the whole text is lexed once more (a later reference definition can
// change an earlier block); blocks whose source did not change keep their DOM.
import { memo, useRef, useState } from "react";
import { blockHtml, escapeHtml, lex, splitBlocks } from "./markdown.js";
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

for (const [name, lang] of Object.entries({ bash, css, diff, javascript, json, python, rust, sql, typescript, xml, yaml })) {
	hljs.registerLanguage(name, lang);
}
hljs.registerAliases(["sh", "shell", "zsh"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["rs"], { languageName: "rust" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
	if (node.tagName === "A" && node.hasAttribute("href")) {
		node.setAttribute("target", "_blank");
		node.setAttribute("rel", "noopener noreferrer nofollow");
	}
});
const PURIFY = { USE_PROFILE: { html: true }, FORBID_TAGS: ["img", "style", "form", "input", "button"], ADD_ATTR: ["target"] };

const render = (token, links) => DOMPurify.sanitize(blockHtml(token, links), PURIFY);

function highlight(code, lang) {
	const language = lang && hljs.getLanguage(lang) ? lang : undefined;
	try {
		return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
	} catch {
		return escapeHtml(code);
	}
}

function CodeBlock({ code, lang }) {
	const [copied, setCopied] = useState(false);
	const copy = async () => {
		try {
			await navigator.clipboard.writeText(code);
			setCopied(true);
			setTimeout(() => setCopied(false), 1500);
		} catch {
			setCopied(false);
		}
	};
	const label = lang || "code";
	return (
		<figure className="code-block" data-testid="code-block">
			<figcaption>
				<span className="lang">{label}</span>
				<button type="button" className="copy" data-testid="copy-code" onClick={copy}>
					{copied ? "Copied" : "Copy"}
					<span className="sr-only"> {label} code</span>
				</button>
			</figcaption>
			<pre tabIndex={0} aria-label={`${label} code`}>
				<code className={lang ? `hljs language-${lang}` : "hljs"} dangerouslySetInnerHTML={{ __html: highlight(code, lang) }} />
			</pre>
		</figure>
	);
}

/** One block; re-renders only when its source (or the reference definitions) changes. */
const Block = memo(
	function Block({ token, links }) {
		if (token.type === "space") return null;
		if (token.type === "code" && token.codeBlockStyle !== "indented") {
			return <CodeBlock code={token.text} lang={(token.lang ?? "").trim().split(/\s+/)[0]} />;
		}
		// A wrapper element per block: the HTML of one token can be several elements.
		return <div className="md-block" dangerouslySetInnerHTML={{ __html: render(token, links) }} />;
	},
	(a, b) => a.token.raw === b.token.raw && a.token.type === b.token.type && (a.token.type !== "paragraph" || a.links === b.links || sameKeys(a.links, b.links)),
);

const sameKeys = (a, b) => Object.keys(a).length === Object.keys(b).length;

/** Markdown of a message's text block. `streaming`: the text is still growing (only its tail is lexed). */
export function Markdown({ text, streaming = false }) {
	const memo = useRef({});
	const source = (text ?? "").replace(/\r\n?/g, "\n");
	let blocks;
	let links;
	if (streaming) ({ blocks, links } = splitBlocks(source, memo.current));
	else {
		if (memo.current.final !== source) {
			const tokens = lex(source);
			memo.current = { final: source, blocks: tokens, links: tokens.links ?? {} };
		}
		({ blocks, links } = memo.current);
	}
	return (
		<div className="md">
			{blocks.map((token, i) => (
				<Block key={i} token={token} links={links} />
			))}
		</div>
	);
}
