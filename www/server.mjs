#!/usr/bin/env node
// The demo's dev server: serves the built app (www/dist), gives the page its token and the models on
// offer, and answers POST /api/stream with pi-agent-wasm/server's proxy handler, so the page reaches a
// model without ever holding a provider key. What is the demo's own lives here: the static files, the
// token page (/api/config), the models from the environment and the offline model
// (server/providers.mjs, server/demo-model.mjs). The endpoint's checks, limits, abort and key
// redaction are the handler's (createProxyHandler, tested in tests/server/).
//
//   node www/server.mjs          PORT (default 5173), bound to 127.0.0.1 only
//
// Endpoints
//   GET  /api/config   { token, models, defaultModel }: the bearer token for /api/stream and the models on
//                      offer (descriptions only, never keys). Same-origin only: no CORS headers anywhere.
//   POST /api/stream   createProxyHandler: the token required, the offered models only, Host checked
//                      (DNS rebinding), the body limited to PI_DEMO_MAX_BODY_BYTES.
//   GET  /*            static files from www/dist (index.html for /)
//
// Environment: see server/providers.mjs for provider keys. PI_DEMO_TOKEN fixes the token (default: random
// per start), PI_DEMO_MAX_BODY_BYTES the body limit (default 2 MiB), PI_DEMO_DELAY_SCALE the demo
// model's pacing (1 = normal, 0 = no delays), PI_DEMO_DIST the static directory, PI_DEMO_QUIET=1 no
// request log. Keys are never logged or returned.
import http from "node:http";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createProxyHandler, toNodeHandler } from "pi-agent-wasm/server";
import { configureModels, publicModel } from "./server/providers.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));

const MIME = {
	".html": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8",
	".mjs": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".wasm": "application/wasm",
	".json": "application/json; charset=utf-8",
	".txt": "text/plain; charset=utf-8",
	".svg": "image/svg+xml",
	".png": "image/png",
	".ico": "image/x-icon",
	".map": "application/json; charset=utf-8",
};

// The page runs only its own scripts; wasm compilation needs 'wasm-unsafe-eval'.
const CSP = [
	"default-src 'self'",
	"script-src 'self' 'wasm-unsafe-eval'",
	"style-src 'self'",
	"img-src 'self' data:",
	"connect-src 'self'",
	"object-src 'none'",
	"base-uri 'none'",
	"form-action 'none'",
	"frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
	"x-content-type-options": "nosniff",
	"referrer-policy": "no-referrer",
	"cross-origin-opener-policy": "same-origin",
};

function tokenMatches(header, token) {
	const m = /^Bearer (.+)$/.exec(header ?? "");
	if (!m) return false;
	const a = Buffer.from(m[1]);
	const b = Buffer.from(token);
	return a.length === b.length && timingSafeEqual(a, b);
}

function sendJson(res, status, body) {
	if (res.headersSent) return;
	res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...SECURITY_HEADERS });
	res.end(JSON.stringify(body));
}

/**
 * Starts the server. Returns { server, url, port, token, close() }.
 * options: { port, env, distDir, log }
 */
export async function startServer(options = {}) {
	const env = options.env ?? process.env;
	const host = "127.0.0.1";
	const requestedPort = options.port ?? Number(env.PORT ?? 5173);
	const distDir = resolve(options.distDir ?? env.PI_DEMO_DIST ?? join(HERE, "dist"));
	const maxBody = Number(env.PI_DEMO_MAX_BODY_BYTES) > 0 ? Number(env.PI_DEMO_MAX_BODY_BYTES) : 2 * 1024 * 1024;
	const delayScale = env.PI_DEMO_DELAY_SCALE !== undefined && Number(env.PI_DEMO_DELAY_SCALE) >= 0 ? Number(env.PI_DEMO_DELAY_SCALE) : 1;
	const quiet = env.PI_DEMO_QUIET === "1";
	const token = env.PI_DEMO_TOKEN || randomBytes(24).toString("base64url");

	const { models, offered, secrets } = await configureModels(env, { demoDelayScale: delayScale });
	const log = options.log ?? ((line) => (quiet ? undefined : console.log(line)));
	// Test mode: a module whose `strictProblems(messages)` lists what a strict provider (OpenAI, Anthropic) would
	// reject in a context; such a request fails as theirs do (the tests use the repository's own check).
	const strictProblems = env.PI_DEMO_STRICT_CHECK ? (await import(pathToFileURL(resolve(env.PI_DEMO_STRICT_CHECK)).href)).strictProblems : undefined;
	const provider = !strictProblems
		? models
		: {
				streamSimple(model, context, streamOptions) {
					const invalid = strictProblems(context?.messages);
					if (invalid.length > 0) {
						log(`POST /api/stream refused: invalid context for a strict provider: ${invalid[0]}`);
						throw new Error(`invalid context for a strict provider: ${invalid[0]}`);
					}
					return models.streamSimple(model, context, streamOptions);
				},
				getModel: models.getModel?.bind(models),
				getAuth: models.getAuth?.bind(models),
			};
	const config = {
		token,
		models: offered.map(publicModel),
		defaultModel: offered[0] ? { provider: offered[0].provider, id: offered[0].id } : undefined,
		// The page shows it before sending, so a message too large is never sent.
		maxBodyBytes: maxBody,
	};

	// Made once the port is known (the Host check names it).
	let stream;
	const proxyFor = (port) =>
		toNodeHandler(
			createProxyHandler({
				stream: provider,
				models: offered,
				authorize: (request) => (tokenMatches(request.headers.get("authorization"), token) ? "demo-user" : null),
				hosts: [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`],
				limits: { bodyBytes: maxBody },
				secrets,
				onUsage: (_user, _usage, { model, stopReason }) => log(`POST /api/stream ${model.provider}/${model.id} -> ${stopReason}`),
				onError: (error) => log(`POST /api/stream failed: ${error instanceof Error ? error.message : String(error)}`),
			}),
		);

	async function handleStatic(req, res) {
		let path;
		try {
			path = decodeURIComponent(new URL(req.url, "http://x").pathname);
		} catch {
			return sendJson(res, 400, { error: "bad path" });
		}
		if (path === "/") path = "/index.html";
		const file = resolve(distDir, `.${path}`);
		if (file !== distDir && !file.startsWith(distDir + sep)) return sendJson(res, 404, { error: "not found" });
		let data;
		try {
			if (!(await stat(file)).isFile()) throw new Error("not a file");
			data = await readFile(file);
		} catch {
			if (path === "/index.html") {
				res.writeHead(503, { "content-type": "text/plain; charset=utf-8", ...SECURITY_HEADERS });
				res.end("The app is not built: run `npx vite build` in www/ (or `npm run demo`).\n");
				return;
			}
			return sendJson(res, 404, { error: "not found" });
		}
		const immutable = path.startsWith("/assets/");
		res.writeHead(200, {
			"content-type": MIME[extname(file)] ?? "application/octet-stream",
			"cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
			"content-security-policy": CSP,
			...SECURITY_HEADERS,
		});
		res.end(req.method === "HEAD" ? undefined : data);
	}

	let port = requestedPort;
	const allowedHost = (h) => h === `127.0.0.1:${port}` || h === `localhost:${port}` || h === `[::1]:${port}`;
	const server = http.createServer(async (req, res) => {
		const path = (req.url ?? "/").split("?")[0];
		if (path.startsWith("/api/")) res.on("finish", () => res.statusCode !== 200 && log(`${req.method} ${path} -> ${res.statusCode}`));
		try {
			if (path === "/api/stream") return await stream(req, res);
			if (!allowedHost(req.headers.host ?? "")) return sendJson(res, 403, { error: "host not allowed (use http://127.0.0.1 or localhost)" });
			if (path === "/api/config") {
				if (req.method !== "GET") return sendJson(res, 405, { error: "use GET" });
				return sendJson(res, 200, config);
			}
			if (path.startsWith("/api/")) return sendJson(res, 404, { error: "no such API endpoint" });
			if (req.method !== "GET" && req.method !== "HEAD") return sendJson(res, 405, { error: "use GET" });
			await handleStatic(req, res);
		} catch (err) {
			log(`${req.method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
			sendJson(res, 500, { error: "internal error" });
		}
	});
	server.headersTimeout = 20_000;
	server.requestTimeout = 0; // streams may run long; the client's abort ends them

	await new Promise((resolvePromise, reject) => {
		server.once("error", reject);
		server.listen(requestedPort, host, () => {
			server.off("error", reject);
			resolvePromise();
		});
	});
	port = server.address().port;
	stream = proxyFor(port);
	const url = `http://${host}:${port}/`;
	return {
		server,
		url,
		port,
		token,
		models: config.models,
		close: () =>
			new Promise((resolvePromise) => {
				server.close(() => resolvePromise());
				server.closeAllConnections();
			}),
	};
}

// ---- CLI ------------------------------------------------------------------------------------------

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const started = await startServer().catch((err) => {
		console.error(`pi-agent-wasm demo server: ${err instanceof Error ? err.message : String(err)}`);
		process.exit(1);
	});
	const names = started.models.map((m) => `${m.provider}/${m.id}`).join(", ");
	console.log(`pi-agent-wasm demo server listening on ${started.url}`);
	console.log(`models: ${names}`);
	const stop = async () => {
		await started.close();
		process.exit(0);
	};
	process.on("SIGINT", stop);
	process.on("SIGTERM", stop);
}
