// Model output as markdown: marked (GitHub-flavoured: tables, task lists, strikethrough, autolinks) for the
// parsing, DOMPurify for the HTML it makes, highlight.js for code. Model text is never trusted as HTML:
// raw HTML in an answer is shown as the characters it is, images become links (an answer must not make the
// page load a URL), links open in a new tab without the opener, and DOMPurify drops what is left
// (javascript: URLs, event attributes).
//
// The text is cut into markdown blocks by the package's streaming renderer (`TextBlocks` of
// pi-agent-wasm/react): a finished block is rendered once, by `renderBlock`, and only the last block is
// parsed again while an answer streams; off-screen blocks are not laid out. Each block is parsed alone, so a
// reference-style link definition applies only to the block that holds it.
import { memo, useState } from "react";
import { TextBlocks } from "pi-agent-wasm/react";
import { blockHtml, escapeHtml, lex } from "./markdown.js";
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

/** One token of a block: a fenced code block as a component (highlighted, with a copy button), the rest as sanitised HTML. */
function Token({ token, links }) {
	if (token.type === "space") return null;
	if (token.type === "code" && token.codeBlockStyle !== "indented") {
		return <CodeBlock code={token.text} lang={(token.lang ?? "").trim().split(/\s+/)[0]} />;
	}
	return <div className="md-block" dangerouslySetInnerHTML={{ __html: render(token, links) }} />;
}

/** A markdown block of the answer (see TextBlocks): parsed when its text changes, which for a finished block is once. */
const renderBlock = (block) => <MarkdownBlock text={block.text} />;
const MarkdownBlock = memo(function MarkdownBlock({ text }) {
	const tokens = lex(text);
	return tokens.map((token, i) => <Token key={i} token={token} links={tokens.links ?? {}} />);
});

/** Markdown of a message's text block, streaming or not. */
export function Markdown({ text }) {
	return (
		<div className="md">
			<TextBlocks text={(text ?? "").replace(/\r\n?/g, "\n")} renderBlock={renderBlock} />
		</div>
	);
}
