#!/usr/bin/env node
// The demo's dev server: serves the built app (www/dist) and speaks streamProxy's protocol at
// POST /api/stream, so the page reaches a model without ever holding a provider key.
//
//   node www/server.mjs          PORT (default 5173), bound to 127.0.0.1 only
//
// Endpoints
//   GET  /api/config   { token, models, defaultModel }: the bearer token for /api/stream and the models on
//                      offer (descriptions only, never keys). Same-origin only: no CORS headers anywhere.
//   POST /api/stream   body { model, context, options } as streamProxy sends it; answers
//                      `data: <ProxyAssistantMessageEvent JSON>\n\n` lines (pi-ai's events without `partial`).
//                      401 missing/wrong token, 413 body too large, 400 malformed JSON or request,
//                      403 foreign Host header (DNS rebinding), 405 other methods; errors are JSON {error}.
//   GET  /*            static files from www/dist (index.html for /)
//
// Environment: see server/providers.mjs for provider keys. PI_DEMO_TOKEN fixes the token (default: random
// per start), PI_DEMO_MAX_BODY_BYTES the body limit (default 2 MiB), PI_DEMO_DELAY_SCALE the demo
// model's pacing (1 = normal, 0 = no delays), PI_DEMO_DIST the static directory, PI_DEMO_QUIET=1 no
// request log. Keys are never logged or returned: every message that leaves this process is redacted.
import http from "node:http";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
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

/** The stream options a page may set; anything else (headers, metadata, transport…) is dropped. */
const ALLOWED_OPTIONS = ["temperature", "maxTokens", "reasoning", "sessionId", "cacheRetention", "thinkingBudgets", "samplingParams", "maxRetryDelayMs"];
const REASONING = new Set(["minimal", "low", "medium", "high", "xhigh", "max"]);

class HttpError extends Error {
	constructor(status, message) {
		super(message);
		this.status = status;
	}
}

/** pi-ai AssistantMessageEvent -> ProxyAssistantMessageEvent (the `partial` message is never sent). */
export function toProxyEvent(event) {
	const block = () => event.partial?.content?.[event.contentIndex];
	switch (event.type) {
		case "start":
			return { type: "start" };
		case "text_start":
		case "thinking_start":
			return { type: event.type, contentIndex: event.contentIndex };
		case "text_delta":
		case "thinking_delta":
		case "toolcall_delta":
			return { type: event.type, contentIndex: event.contentIndex, delta: event.delta };
		case "text_end":
			return { type: "text_end", contentIndex: event.contentIndex, contentSignature: block()?.textSignature };
		case "thinking_end":
			return { type: "thinking_end", contentIndex: event.contentIndex, contentSignature: block()?.thinkingSignature };
		case "toolcall_start": {
			const b = block();
			return { type: "toolcall_start", contentIndex: event.contentIndex, id: b?.id ?? "", toolName: b?.name ?? "" };
		}
		case "toolcall_end": {
			const { type, id, name, arguments: args, thoughtSignature, namespace } = event.toolCall ?? {};
			return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall: { type, id, name, arguments: args, thoughtSignature, namespace } };
		}
		case "done":
			return { type: "done", reason: event.reason, usage: event.message?.usage, providerThinkingLevel: event.message?.providerThinkingLevel };
		case "error":
			return {
				type: "error",
				reason: event.reason,
				errorMessage: event.error?.errorMessage,
				usage: event.error?.usage,
				providerThinkingLevel: event.error?.providerThinkingLevel,
			};
		default:
			return undefined;
	}
}

function zeroUsage() {
	return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function makeRedactor(secrets) {
	const sorted = [...new Set(secrets)].sort((a, b) => b.length - a.length);
	return (text) => {
		let out = String(text);
		for (const s of sorted) out = out.split(s).join("[redacted]");
		return out;
	};
}

function tokenMatches(header, token) {
	const m = /^Bearer (.+)$/.exec(header ?? "");
	if (!m) return false;
	const a = Buffer.from(m[1]);
	const b = Buffer.from(token);
	return a.length === b.length && timingSafeEqual(a, b);
}

/** Reads the body up to `limit` bytes; 413 beyond it (by Content-Length or by count). */
function readBody(req, limit) {
	return new Promise((resolvePromise, reject) => {
		const declared = Number(req.headers["content-length"]);
		if (Number.isFinite(declared) && declared > limit) {
			reject(new HttpError(413, `request body too large (limit ${limit} bytes)`));
			return;
		}
		const parts = [];
		let size = 0;
		let failed = false;
		req.on("data", (chunk) => {
			if (failed) return;
			size += chunk.length;
			if (size > limit) {
				failed = true;
				parts.length = 0;
				reject(new HttpError(413, `request body too large (limit ${limit} bytes)`));
				return;
			}
			parts.push(chunk);
		});
		req.on("end", () => {
			if (!failed) resolvePromise(Buffer.concat(parts));
		});
		req.on("error", (err) => {
			if (!failed) reject(err);
		});
	});
}

/**
 * After a 413, read and discard the rest of the body so the client, still sending, gets the answer
 * instead of a reset connection; past `cap` bytes the connection is dropped.
 */
function drainThenDrop(req, cap) {
	let drained = 0;
	req.removeAllListeners("data");
	req.on("data", (chunk) => {
		drained += chunk.length;
		if (drained > cap) req.socket?.destroy();
	});
	req.resume();
}

function sendJson(res, status, body, extra = {}) {
	if (res.headersSent) return;
	const data = JSON.stringify(body);
	res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...SECURITY_HEADERS, ...extra });
	res.end(data);
}

function validateRequest(body, registry) {
	if (!body || typeof body !== "object" || Array.isArray(body)) throw new HttpError(400, "request body must be a JSON object { model, context, options }");
	const { model, context, options } = body;
	if (!model || typeof model !== "object" || typeof model.provider !== "string" || typeof model.id !== "string") {
		throw new HttpError(400, "model must be an object with string provider and id");
	}
	const known = registry.get(`${model.provider}/${model.id}`);
	if (!known) throw new HttpError(400, `unknown model ${model.provider}/${model.id}`);
	if (!context || typeof context !== "object" || !Array.isArray(context.messages)) throw new HttpError(400, "context.messages must be an array");
	if (context.messages.some((m) => !m || typeof m !== "object" || typeof m.role !== "string")) {
		throw new HttpError(400, "every context message must be an object with a role");
	}
	if (options !== undefined && (options === null || typeof options !== "object" || Array.isArray(options))) throw new HttpError(400, "options must be an object");
	const safe = {};
	for (const key of ALLOWED_OPTIONS) if (options?.[key] !== undefined) safe[key] = options[key];
	if (safe.reasoning !== undefined && !REASONING.has(safe.reasoning)) delete safe.reasoning;
	if (safe.maxTokens !== undefined) {
		const n = Number(safe.maxTokens);
		if (Number.isFinite(n) && n > 0) safe.maxTokens = Math.min(Math.floor(n), known.maxTokens || 32000);
		else delete safe.maxTokens;
	}
	if (safe.maxRetryDelayMs !== undefined) {
		const n = Number(safe.maxRetryDelayMs);
		if (Number.isFinite(n) && n >= 0) safe.maxRetryDelayMs = Math.min(n, 30_000);
		else delete safe.maxRetryDelayMs;
	}
	return { model: known, context: { messages: context.messages }, options: safe };
}

/**
 * Starts the server. Returns { server, url, port, token, close() }.
 * options: { port, host, env, distDir, log }
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
	// Test mode: a module whose `strictProblems(messages)` lists what a strict provider (OpenAI, Anthropic) would
	// reject in a context; such a request is refused as they refuse it (the tests use the repository's own check).
	const strictProblems = env.PI_DEMO_STRICT_CHECK ? (await import(pathToFileURL(resolve(env.PI_DEMO_STRICT_CHECK)).href)).strictProblems : undefined;

	const { models, offered, secrets } = await configureModels(env, { demoDelayScale: delayScale });
	const redact = makeRedactor(secrets);
	const log = options.log ?? ((line) => (quiet ? undefined : console.log(redact(line))));
	const registry = new Map(offered.map((m) => [`${m.provider}/${m.id}`, m]));
	const config = {
		token,
		models: offered.map(publicModel),
		defaultModel: offered[0] ? { provider: offered[0].provider, id: offered[0].id } : undefined,
	};

	let port = requestedPort;
	const allowedHost = (h) => h === `127.0.0.1:${port}` || h === `localhost:${port}` || h === `[::1]:${port}`;

	async function handleStream(req, res, started) {
		if (!tokenMatches(req.headers.authorization, token)) throw new HttpError(401, "missing or invalid bearer token (GET /api/config gives the page its token)");
		// The client going away at any point (even while its body is read) aborts the model request.
		const upstream = new AbortController();
		let clientGone = false;
		res.on("close", () => {
			if (!res.writableFinished) {
				clientGone = true;
				upstream.abort();
			}
		});
		const raw = await readBody(req, maxBody);
		let body;
		try {
			body = JSON.parse(raw.toString("utf8"));
		} catch (err) {
			throw new HttpError(400, `malformed JSON: ${err instanceof Error ? err.message : String(err)}`);
		}
		const { model, context, options: streamOptions } = validateRequest(body, registry);
		const invalid = strictProblems?.(context.messages) ?? [];
		if (invalid.length > 0) {
			log(`POST /api/stream refused: invalid context for a strict provider: ${invalid[0]}`);
			throw new HttpError(400, `invalid context for a strict provider: ${invalid[0]}`);
		}
		if (clientGone) return;
		res.writeHead(200, {
			"content-type": "text/event-stream; charset=utf-8",
			"cache-control": "no-store",
			"x-accel-buffering": "no",
			...SECURITY_HEADERS,
		});
		res.flushHeaders();
		const write = (event) => {
			if (!event || res.destroyed || res.writableEnded) return;
			const safe = event.type === "error" && event.errorMessage ? { ...event, errorMessage: redact(event.errorMessage) } : event;
			res.write(`data: ${JSON.stringify(safe)}\n\n`);
		};

		let outcome = "?";
		try {
			const stream = models.streamSimple(model, context, { ...streamOptions, signal: upstream.signal });
			for await (const event of stream) {
				if (clientGone) break;
				const proxied = toProxyEvent(event);
				write(proxied);
				if (event.type === "done" || event.type === "error") {
					outcome = event.type === "done" ? event.reason : `${event.reason}: ${event.error?.errorMessage ?? ""}`;
					break;
				}
			}
		} catch (err) {
			outcome = `error: ${err instanceof Error ? err.message : String(err)}`;
			write({ type: "error", reason: upstream.signal.aborted ? "aborted" : "error", errorMessage: err instanceof Error ? err.message : String(err), usage: zeroUsage() });
		}
		if (clientGone) outcome = "client aborted (upstream aborted)";
		if (!res.writableEnded && !res.destroyed) res.end();
		log(`POST /api/stream ${model.provider}/${model.id} -> ${redact(outcome).slice(0, 160)} (${Date.now() - started} ms)`);
	}

	async function handleStatic(req, res) {
		let path;
		try {
			path = decodeURIComponent(new URL(req.url, "http://x").pathname);
		} catch {
			throw new HttpError(400, "bad path");
		}
		if (path === "/") path = "/index.html";
		const file = resolve(distDir, `.${path}`);
		if (file !== distDir && !file.startsWith(distDir + sep)) throw new HttpError(404, "not found");
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
			throw new HttpError(404, "not found");
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

	const server = http.createServer(async (req, res) => {
		const started = Date.now();
		const path = (req.url ?? "/").split("?")[0];
		try {
			if (!allowedHost(req.headers.host ?? "")) throw new HttpError(403, "host not allowed (use http://127.0.0.1 or localhost)");
			if (path === "/api/stream") {
				if (req.method !== "POST") throw new HttpError(405, "use POST");
				await handleStream(req, res, started);
			} else if (path === "/api/config") {
				if (req.method !== "GET") throw new HttpError(405, "use GET");
				sendJson(res, 200, config);
			} else if (path.startsWith("/api/")) {
				throw new HttpError(404, "no such API endpoint");
			} else {
				if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "use GET");
				await handleStatic(req, res);
			}
		} catch (err) {
			const status = err instanceof HttpError ? err.status : 500;
			const message = err instanceof HttpError ? err.message : "internal error";
			if (!(err instanceof HttpError)) log(`${req.method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
			if (status !== 404 || path.startsWith("/api/")) log(`${req.method} ${path} -> ${status} ${message}`);
			sendJson(res, status, { error: redact(message) });
			if (status === 413) drainThenDrop(req, maxBody * 8);
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
