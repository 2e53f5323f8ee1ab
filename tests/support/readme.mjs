// The README's code examples that are whole files of an example app: the blocks marked
// `<!-- example: file; by: <this test> -->`, whose first line is a comment naming the file
// (`// app/page.js: what it is`) (tests/support/markdown-examples.mjs). Tests write them out as they are and run them.
import { fileURLToPath } from "node:url";
import { extractExamples, FILE_NAME } from "./markdown-examples.mjs";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * { path: text } of the file examples of `doc` (README.md unless given, relative to the repository): all of them,
 * or those under the heading `## ${section}`.
 */
export function readmeFiles(section, doc = "README.md") {
	const blocks = extractExamples(`${REPO}${doc}`, REPO).filter((b) => b.env === "file" && !b.problem);
	if (section !== undefined && !blocks.some((b) => b.section === section)) throw new Error(`${doc} has no file examples under "## ${section}"`);
	const files = {};
	for (const b of blocks) if (section === undefined || b.section === section) files[FILE_NAME.exec(b.code)[1]] = `${b.code}\n`;
	return files;
}
