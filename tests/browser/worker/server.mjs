// A static file server on 127.0.0.1 for the worker tests: URL prefix -> directory.
import http from "node:http";
import { readFileSync, statSync } from "node:fs";
import { extname, resolve, sep } from "node:path";

const MIME = {
	".html": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8",
	".mjs": "text/javascript; charset=utf-8",
	".wasm": "application/wasm",
	".json": "application/json",
};

export async function startStaticServer(mounts) {
	const server = http.createServer((req, res) => {
		const path = decodeURIComponent(req.url.split("?")[0]);
		for (const [prefix, dir] of Object.entries(mounts)) {
			if (!path.startsWith(prefix)) continue;
			const root = resolve(dir);
			const file = resolve(root, "." + path.slice(prefix.length - 1));
			if (file !== root && !file.startsWith(root + sep)) break;
			try {
				if (!statSync(file).isFile()) break;
				res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
				res.end(readFileSync(file));
				return;
			} catch {
				break;
			}
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
