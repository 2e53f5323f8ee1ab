// The README's code examples that are whole files: a fenced block whose first line is a comment
// naming the file (`// app/page.js: what it is`). Tests write them out as they are and run them.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/** { path: text } of the README's file examples (all of them, or those under the heading `section`). */
export function readmeFiles(section) {
	let text = readFileSync(README, "utf8");
	if (section) {
		const start = text.indexOf(`\n## ${section}\n`);
		if (start < 0) throw new Error(`README.md has no section "## ${section}"`);
		const end = text.indexOf("\n## ", start + 1);
		text = text.slice(start, end < 0 ? undefined : end);
	}
	const files = {};
	for (const [, body] of text.matchAll(/\n```(?:js|jsx|ts|tsx|mjs)\n([\s\S]*?)\n```/g)) {
		const name = /^\/\/ ([\w./@[\]-]+\.(?:js|jsx|mjs|ts|tsx)):/.exec(body);
		if (name) files[name[1]] = `${body}\n`;
	}
	return files;
}
