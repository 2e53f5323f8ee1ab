// A scripted Server-Sent-Events server for the streamProxy tests (Node and browser).
//
//   const srv = await startSseServer({ "/api/stream": script });
//   ... fetch(`${srv.url}/api/stream`, ...) ...
//   srv.requests   // every request seen, in order (OPTIONS preflights included)
//   await srv.close()
//
// It binds 127.0.0.1 on an ephemeral port (port 0; the real one is in `srv.port` / `srv.url`), answers
// CORS preflights (OPTIONS, any path) and puts `access-control-allow-origin: *` on every response, so a page
// served from another port can POST to it.
//
// `routes` maps an exact request path ("/api/stream", "//api/stream", "/text/api/stream", …) or "*" to
//   - a script object (answers every request on that path),
//   - an array of scripts (one per request, in order; the last one repeats), or
//   - a function (record) => script | Promise<script>.
// A POST to a path without a route gets 404 `{"error":"no route for <path>"}`.
//
// A script describes the response:
//   status       HTTP status (default 200)
//   statusText   reason phrase (default: Node's standard one)
//   headers      extra/overriding response headers
//   headersDelayMs  wait this long before sending the status line and headers
//   body source, exactly one of:
//     lines      array; a string is written as one raw line, an object as `data: <JSON>` followed by a blank
//                line (a complete SSE event). Every line ends with `eol`.
//     json       any value, sent as JSON (content-type application/json unless overridden)
//     body       raw string or Buffer
//     chunks     explicit chunks: string | Buffer | { data, delayMs } (bypasses `chunking`)
//   eol          line ending for `lines`: "\n" (default) or "\r\n"
//   finalNewline false -> strip the line endings after the last item (last line ends at EOF)
//   cutBefore    "terminal" -> drop every item from the first `done`/`error` event object on;
//                a number -> keep only that many bytes of the body
//   chunking     how the body bytes are split into writes:
//                  "whole"  one write (default)
//                  "item"   one write per entry of `lines`
//                  n        n-byte writes (multi-byte UTF-8 characters get split)
//                  { random: seed, max = 16 }  writes of 1..max bytes from a seeded PRNG
//   delayMs      wait between writes; 0 = setImmediate, undefined = no wait at all. Writes are chained (the
//                next write is scheduled after the previous one), so with a delay two writes never go out
//                in the same event-loop turn.
//   end          "end" (default): finish the response normally
//                "hang": keep the connection open until the client disconnects, at most `hangMs`
//                        (default 3000, capped at 10000), then end it
//                "destroy": destroy the socket without finishing the chunked body (a network error
//                        for the client)
//
// A request record: { method, path, headers (lower-case names), rawBody, body (parsed JSON or undefined),
// bodyError, clientClosed (the client went away before the response was finished), finished, closed (a
// promise that settles when the response is closed) }. `srv.settled()` waits until every response so far
// is closed.
//
// Like a strict provider (OpenAI's and Anthropic's APIs), the server answers HTTP 400
// `{ "error": "invalid context for a strict provider: …" }` to a POST whose `context.messages` has a tool
// call not answered at once by its result (tests/support/strict-transcript.mjs), instead of its script; the
// record keeps the problems (`strictProblems`). `startSseServer(routes, { strict: false })` turns that off.
//
// Client disconnects are detected with `res.on("close")`: `req.on("close")` fires as soon as the request body
// has been read in Node >= 16 and says nothing about the client.
import http from "node:http";
import { prng } from "./prng.mjs";
import { strictProblems } from "./strict-transcript.mjs";

const DEFAULT_HANG_MS = 3000;
const MAX_HANG_MS = 10000;

/** `data: <JSON>` for one proxy event. */
export function dataLine(event) {
	return `data: ${JSON.stringify(event)}`;
}

function isTerminalEvent(item) {
	return item !== null && typeof item === "object" && !Buffer.isBuffer(item) && (item.type === "done" || item.type === "error");
}

/** The text of one `lines` entry, including its line ending(s). */
function itemText(item, eol) {
	if (typeof item === "string") return item + eol;
	if (Buffer.isBuffer(item)) return item;
	return dataLine(item) + eol + eol;
}

/** Builds the chunk list ([{ data: Buffer, delayMs }]) of a script. Exported for the server self-test. */
export function scriptChunks(script) {
	const eol = script.eol ?? "\n";
	if (script.chunks) {
		return script.chunks.map((c) =>
			typeof c === "string" || Buffer.isBuffer(c)
				? { data: Buffer.from(c), delayMs: script.delayMs }
				: { data: Buffer.from(c.data), delayMs: c.delayMs ?? script.delayMs },
		);
	}
	let items;
	if (script.lines) {
		items = script.lines;
		if (script.cutBefore === "terminal") {
			const at = items.findIndex(isTerminalEvent);
			if (at >= 0) items = items.slice(0, at);
		}
		items = items.map((it) => Buffer.from(itemText(it, eol)));
		if (script.finalNewline === false && items.length > 0) {
			const last = items[items.length - 1].toString("latin1");
			let end = last.length;
			while (end > 0 && (last[end - 1] === "\n" || last[end - 1] === "\r")) end--;
			items[items.length - 1] = items[items.length - 1].subarray(0, end);
		}
	} else if ("json" in script) {
		items = [Buffer.from(JSON.stringify(script.json))];
	} else if (script.body !== undefined) {
		items = [Buffer.from(script.body)];
	} else {
		items = [];
	}
	if (typeof script.cutBefore === "number") {
		let budget = script.cutBefore;
		items = items.map((b) => {
			const kept = b.subarray(0, Math.max(0, budget));
			budget -= kept.length;
			return kept;
		}).filter((b) => b.length > 0);
	}
	const chunking = script.chunking ?? "whole";
	let datas;
	if (chunking === "item") {
		datas = items;
	} else {
		const all = Buffer.concat(items);
		if (chunking === "whole") datas = all.length ? [all] : [];
		else if (typeof chunking === "number") {
			datas = [];
			for (let i = 0; i < all.length; i += chunking) datas.push(all.subarray(i, i + chunking));
		} else if (chunking && typeof chunking === "object" && "random" in chunking) {
			const rnd = prng(chunking.random);
			const max = chunking.max ?? 16;
			datas = [];
			for (let i = 0; i < all.length; ) {
				const n = 1 + Math.floor(rnd() * max);
				datas.push(all.subarray(i, i + n));
				i += n;
			}
		} else throw new Error(`sse-server: unknown chunking ${JSON.stringify(chunking)}`);
	}
	return datas.map((data) => ({ data, delayMs: script.delayMs }));
}

function defaultContentType(script) {
	if ("json" in script) return "application/json";
	if (script.lines || script.chunks) return "text/event-stream";
	return "text/plain; charset=utf-8";
}

const CORS = {
	"access-control-allow-origin": "*",
};
const PREFLIGHT = {
	...CORS,
	"access-control-allow-methods": "POST, OPTIONS",
	"access-control-allow-headers": "content-type, authorization",
	"access-control-max-age": "0",
};

/**
 * Starts a server. Resolves to { url, port, requests, settled(), close() }.
 */
export async function startSseServer(routes = {}, { strict = true } = {}) {
	const requests = [];
	const timers = new Set();
	const hangs = new Set();
	const counters = new Map();
	let closing = false;

	// Every pending wait is kept with its resolver, so close() can cancel the timer and still let the
	// response coroutine run to its end (it then sees `closing` and stops).
	const wait = (ms) =>
		new Promise((resolve) => {
			if (closing) return resolve();
			const entry = { resolve, handle: undefined, immediate: ms === 0 };
			const fire = () => {
				timers.delete(entry);
				resolve();
			};
			entry.handle = ms === 0 ? setImmediate(fire) : setTimeout(fire, ms);
			timers.add(entry);
		});

	async function pickScript(record) {
		const route = Object.hasOwn(routes, record.path) ? routes[record.path] : routes["*"];
		if (route === undefined) return { status: 404, json: { error: `no route for ${record.path}` } };
		if (typeof route === "function") return await route(record);
		if (Array.isArray(route)) {
			const n = counters.get(record.path) ?? 0;
			counters.set(record.path, n + 1);
			return route[Math.min(n, route.length - 1)];
		}
		return route;
	}

	async function respond(record, req, res) {
		const script = await pickScript(record);
		if (script.headersDelayMs) await wait(script.headersDelayMs);
		if (res.destroyed || closing) return;
		const headers = {
			"content-type": defaultContentType(script),
			"cache-control": "no-cache",
			...CORS,
			...(script.headers ?? {}),
		};
		res.writeHead(script.status ?? 200, script.statusText, headers);
		res.flushHeaders();
		const chunks = scriptChunks(script);
		for (const { data, delayMs } of chunks) {
			if (delayMs !== undefined) await wait(delayMs);
			if (res.destroyed || closing) return;
			res.write(data);
		}
		const end = script.end ?? "end";
		if (end === "destroy") {
			// Let the written bytes reach the client first, then cut the connection mid-body.
			await wait(script.destroyDelayMs ?? 20);
			res.destroy();
			return;
		}
		if (end === "hang") {
			const limit = Math.min(script.hangMs ?? DEFAULT_HANG_MS, MAX_HANG_MS);
			if (!res.destroyed && !closing) {
				await new Promise((resolve) => {
					const entry = { resolve: () => finish(), h: setTimeout(() => finish(), limit) };
					const finish = () => {
						clearTimeout(entry.h);
						hangs.delete(entry);
						resolve();
					};
					hangs.add(entry);
					res.once("close", finish);
				});
			}
			if (res.destroyed || closing) return;
		}
		res.end();
	}

	const server = http.createServer((req, res) => {
		const path = req.url.split("?")[0];
		let closedResolve;
		const record = {
			method: req.method,
			path,
			url: req.url,
			headers: { ...req.headers },
			rawBody: "",
			body: undefined,
			bodyError: undefined,
			clientClosed: false,
			finished: false,
			closed: new Promise((r) => (closedResolve = r)),
		};
		requests.push(record);
		res.on("finish", () => {
			record.finished = true;
		});
		res.on("close", () => {
			if (!record.finished) record.clientClosed = true;
			closedResolve();
		});
		if (req.method === "OPTIONS") {
			res.writeHead(204, PREFLIGHT);
			res.end();
			return;
		}
		const parts = [];
		req.on("data", (c) => parts.push(c));
		req.on("error", () => {});
		req.on("end", () => {
			record.rawBody = Buffer.concat(parts).toString("utf8");
			if (record.rawBody) {
				try {
					record.body = JSON.parse(record.rawBody);
				} catch (e) {
					record.bodyError = e.message;
				}
			}
			if (req.method !== "POST") {
				res.writeHead(405, { ...CORS, "content-type": "application/json" });
				res.end(JSON.stringify({ error: `method ${req.method} not allowed` }));
				return;
			}
			const messages = record.body?.context?.messages;
			if (strict && Array.isArray(messages)) {
				const problems = strictProblems(messages);
				if (problems.length > 0) {
					record.strictProblems = problems;
					res.writeHead(400, { ...CORS, "content-type": "application/json" });
					res.end(JSON.stringify({ error: `invalid context for a strict provider: ${problems[0]}` }));
					return;
				}
			}
			respond(record, req, res).catch((e) => {
				record.serverError = e;
				if (!res.headersSent) {
					res.writeHead(599, { ...CORS });
				}
				res.destroy();
			});
		});
	});
	server.on("clientError", (_e, socket) => socket.destroy());

	await new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", resolve);
	});
	const { port } = server.address();

	return {
		port,
		url: `http://127.0.0.1:${port}`,
		requests,
		/** Resolves when every response started so far has been closed (finished or disconnected). */
		settled: () => Promise.all(requests.map((r) => r.closed)),
		/** Stops everything: pending timers, hanging responses, open sockets, the listener. Idempotent. */
		close: async () => {
			if (closing) return;
			closing = true;
			for (const entry of timers) {
				if (entry.immediate) clearImmediate(entry.handle);
				else clearTimeout(entry.handle);
				entry.resolve();
			}
			timers.clear();
			for (const entry of [...hangs]) entry.resolve();
			hangs.clear();
			const done = new Promise((resolve) => server.close(() => resolve()));
			server.closeAllConnections();
			await done;
		},
	};
}

/** A URL on 127.0.0.1 whose port was just released (nothing listens there): connection refused. */
export async function closedPortUrl() {
	const s = http.createServer();
	await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
	const { port } = s.address();
	await new Promise((resolve) => s.close(resolve));
	return `http://127.0.0.1:${port}`;
}
