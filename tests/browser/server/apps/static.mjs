// The page and the packed package's files, for the Node http and Hono test servers.
import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize } from "node:path";
import { createRequire } from "node:module";

const here = dirname(new URL(import.meta.url).pathname);
const pkg = dirname(createRequire(import.meta.url).resolve("pi-agent-wasm/package.json"));
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

/** The file for a URL path, or undefined: `/` the page, `/client.mjs`, `/pkg/…` the installed package. */
export async function staticFile(path) {
	let file;
	if (path === "/favicon.ico") return { data: Buffer.alloc(0), type: "image/x-icon" };
	if (path === "/") file = join(here, "page.html");
	else if (path === "/client.mjs") file = join(here, "client.mjs");
	else if (path.startsWith("/pkg/")) {
		file = normalize(join(pkg, path.slice(5)));
		if (!file.startsWith(pkg + "/")) return undefined;
	} else return undefined;
	try {
		return { data: await readFile(file), type: TYPES[extname(file)] ?? "application/octet-stream" };
	} catch {
		return undefined;
	}
}
