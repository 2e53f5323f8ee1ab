// The static file server of the browser tests, on 127.0.0.1 (a free port), started and closed by
// the test that uses it. `mounts`: URL prefix -> directory (the first prefix that has the file
// serves it); `pages`: exact path -> HTML text, or `{ html, headers }` to send extra response headers
// with it (a Content-Security-Policy, say); `routes`: exact path -> `(req, res)` handler, for an
// endpoint the pages call. Files are read at each request and never cached, so a test serves the
// build it finds.
import http from "node:http";
import { readFileSync, statSync } from "node:fs";
import { extname, resolve, sep } from "node:path";

export const MIME = {
	".html": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8",
	".mjs": "text/javascript; charset=utf-8",
	".wasm": "application/wasm",
	".json": "application/json",
	".css": "text/css; charset=utf-8",
};

export async function startStaticServer(mounts, { pages = {}, routes = {} } = {}) {
	const server = http.createServer((req, res) => {
		const path = decodeURIComponent(req.url.split("?")[0]);
		if (Object.hasOwn(routes, path)) return routes[path](req, res);
		if (Object.hasOwn(pages, path)) {
			const page = typeof pages[path] === "string" ? { html: pages[path] } : pages[path];
			res.writeHead(200, { "content-type": MIME[".html"], "cache-control": "no-store", ...page.headers });
			return res.end(page.html);
		}
		if (path === "/favicon.ico") {
			res.writeHead(204);
			return res.end();
		}
		for (const [prefix, dir] of Object.entries(mounts)) {
			if (!path.startsWith(prefix)) continue;
			const root = resolve(dir);
			const file = resolve(root, "." + path.slice(prefix.length - 1));
			if (file !== root && !file.startsWith(root + sep)) continue;
			let data;
			try {
				if (!statSync(file).isFile()) continue;
				data = readFileSync(file);
			} catch {
				continue;
			}
			res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
			return res.end(data);
		}
		res.writeHead(404, { "content-type": "text/plain" });
		res.end(`not found: ${path}`);
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	return {
		url: `http://127.0.0.1:${server.address().port}`,
		close: () => {
			const done = new Promise((r) => server.close(r));
			server.closeAllConnections();
			return done;
		},
	};
}
