// "node:fs" with Node 22's `globSync(pattern, { cwd })` (files and directories under `cwd` whose
// relative path matches `pattern`, by path.matchesGlob), for the coding agent on Node 20.
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
	const cwd = options.cwd ?? process.cwd();
	const out = [];
	const walk = (dir) => {
		for (const entry of fs.readdirSync(path.join(cwd, dir), { withFileTypes: true })) {
			const rel = dir ? `${dir}/${entry.name}` : entry.name;
			if (path.matchesGlob(rel, pattern)) out.push(rel);
			if (entry.isDirectory()) walk(rel);
		}
	};
	walk("");
	return out;
}
