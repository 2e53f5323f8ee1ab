// www/server.mjs over HTTP, without a browser: what it refuses (missing or wrong token, oversized body,
// malformed JSON, bad requests, foreign Host, wrong method) with clear JSON errors, and what it streams
// (ProxyAssistantMessageEvent lines without `partial`, consumed by the reference streamProxy of
// pi-agent-core 1.4.0 and by this package's own). The client's abort aborts the model stream.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { streamProxy as referenceStreamProxy } from "@earendil-works/pi-agent-core";
import { ensureWwwDeps, startDemoServer } from "./support.mjs";

const TOKEN = "e2e-token-0123456789";
const LIMIT = 64 * 1024;
const DEMO = { provider: "demo", id: "offline-demo", api: "pi-demo", name: "demo", baseUrl: "", reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 };
const context = (text) => ({ messages: [{ role: "user", content: [{ type: "text", text }], timestamp: 1 }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A raw HTTP request (fetch cannot send a wrong Host header or a body without Content-Length on demand). */
function request(port, { method = "GET", path = "/", headers = {}, body, chunked = false } = {}) {
	return new Promise((resolve, reject) => {
		const req = http.request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
			let data = "";
			res.setEncoding("utf8");
			res.on("data", (d) => (data += d));
			res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
		});
		req.on("error", reject);
		if (body !== undefined) {
			if (chunked) {
				// Written in pieces without Content-Length: the limit is enforced while reading.
				const buf = Buffer.from(body);
				let i = 0;
				const pump = () => {
					while (i < buf.length) {
						const ok = req.write(buf.subarray(i, i + 8192));
						i += 8192;
						if (!ok) return req.once("drain", pump);
					}
					req.end();
				};
				req.on("error", () => {});
				pump();
				return;
			}
			req.end(body);
		} else req.end();
	});
}

function json(res) {
	assert.match(res.headers["content-type"], /^application\/json/);
	return JSON.parse(res.body);
}

test("the dev server refuses bad requests and speaks the proxy protocol", { timeout: 180_000 }, async (t) => {
	await ensureWwwDeps();
	const server = await startDemoServer({ PI_DEMO_TOKEN: TOKEN, PI_DEMO_MAX_BODY_BYTES: String(LIMIT), PI_DEMO_DELAY_SCALE: "0.2" });
	t.after(() => server.close());
	const { port } = server;
	const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
	const post = (body, headers = auth, extra = {}) => request(port, { method: "POST", path: "/api/stream", headers, body, ...extra });
	const valid = JSON.stringify({ model: DEMO, context: context("tour"), options: {} });

	await t.test("GET /api/config: token and models, no CORS, not cached", async () => {
		const res = await request(port, { path: "/api/config", headers: { host: `127.0.0.1:${port}` } });
		assert.equal(res.status, 200);
		assert.equal(res.headers["access-control-allow-origin"], undefined);
		assert.equal(res.headers["cache-control"], "no-store");
		const body = json(res);
		assert.equal(body.token, TOKEN);
		assert.deepEqual(body.models.map((m) => `${m.provider}/${m.id}`), ["demo/offline-demo"]);
		assert.match(body.models[0].name, /Offline demo model/);
	});

	await t.test("401 without a token, with a wrong one, or with another scheme", async () => {
		for (const headers of [{ "content-type": "application/json" }, { authorization: "Bearer nope" }, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${TOKEN}` }]) {
			const res = await post(valid, headers);
			assert.equal(res.status, 401, JSON.stringify(headers));
			assert.match(json(res).error, /missing or invalid bearer token/);
		}
	});

	await t.test("413 for a body over the limit, by Content-Length or while reading", async () => {
		const big = JSON.stringify({ model: DEMO, context: context("x".repeat(LIMIT * 2)) });
		const declared = await post(big);
		assert.equal(declared.status, 413);
		assert.match(json(declared).error, /request body too large \(limit 65536 bytes\)/);
		const streamed = await post(big, auth, { chunked: true });
		assert.equal(streamed.status, 413);
		assert.match(json(streamed).error, /too large/);
		// Just under the limit is fine.
		const under = await post(JSON.stringify({ model: DEMO, context: context("hello"), pad: "y".repeat(LIMIT - 500) }));
		assert.equal(under.status, 200);
	});

	await t.test("400 for malformed JSON and for malformed requests", async () => {
		const bad = await post("{not json");
		assert.equal(bad.status, 400);
		assert.match(json(bad).error, /^malformed JSON: /);
		const cases = [
			["[]", /request body must be a JSON object/],
			[JSON.stringify({ context: context("hi") }), /model must be an object/],
			[JSON.stringify({ model: { provider: "openai", id: "gpt-4o" }, context: context("hi") }), /unknown model openai\/gpt-4o/],
			[JSON.stringify({ model: DEMO, context: {} }), /context\.messages must be an array/],
			[JSON.stringify({ model: DEMO, context: { messages: [null] } }), /every context message/],
			[JSON.stringify({ model: DEMO, context: context("hi"), options: [] }), /options must be an object/],
		];
		for (const [body, re] of cases) {
			const res = await post(body);
			assert.equal(res.status, 400, body);
			assert.match(json(res).error, re);
		}
	});

	await t.test("405 for other methods, 404 for other API paths, 403 for a foreign Host", async () => {
		const get = await request(port, { path: "/api/stream" });
		assert.equal(get.status, 405);
		assert.match(json(get).error, /use POST/);
		const other = await request(port, { path: "/api/keys" });
		assert.equal(other.status, 404);
		assert.match(json(other).error, /no such API endpoint/);
		const rebinding = await request(port, { path: "/api/config", headers: { host: "attacker.example:80" } });
		assert.equal(rebinding.status, 403);
		assert.match(json(rebinding).error, /host not allowed/);
		const traversal = await request(port, { path: "/..%2f..%2fpackage.json" });
		assert.equal(traversal.status, 404);
	});

	await t.test("the stream: one `data:` line per event, no `partial`, tool calls with id and name", async () => {
		const res = await post(valid);
		assert.equal(res.status, 200);
		assert.match(res.headers["content-type"], /^text\/event-stream/);
		const frames = res.body.split("\n\n").filter(Boolean);
		const events = frames.map((f) => {
			assert.match(f, /^data: \{.*\}$/s);
			return JSON.parse(f.slice(6));
		});
		assert.equal(events[0].type, "start");
		assert.equal(events.at(-1).type, "done");
		assert.equal(events.at(-1).reason, "toolUse");
		assert.ok(events.at(-1).usage.totalTokens > 0);
		for (const e of events) {
			assert.ok(!("partial" in e) && !("message" in e) && !("error" in e), `stripped: ${JSON.stringify(e).slice(0, 80)}`);
		}
		const starts = events.filter((e) => e.type === "toolcall_start");
		assert.deepEqual(starts.map((e) => e.toolName), ["calculator", "current_time"]);
		assert.ok(starts.every((e) => typeof e.id === "string" && e.id.length > 0));
		const ends = events.filter((e) => e.type === "toolcall_end");
		assert.deepEqual(ends[0].toolCall.arguments, { expression: "(2+3)*7" });
		assert.ok(events.some((e) => e.type === "thinking_delta") && events.some((e) => e.type === "text_delta"));
	});

	await t.test("the reference streamProxy (pi-agent-core 1.4.0) and this package's read it alike", async () => {
		const pkg = await import("../../pkg/index.js");
		const results = [];
		for (const streamProxy of [referenceStreamProxy, pkg.streamProxy]) {
			const stream = streamProxy(DEMO, context("tour"), { authToken: TOKEN, proxyUrl: server.origin });
			const types = [];
			for await (const e of stream) types.push(e.type);
			const final = await stream.result();
			results.push({ types, content: final.content.map((c) => ({ ...c, id: c.id && "<id>" })), stopReason: final.stopReason });
		}
		assert.equal(results[0].stopReason, "toolUse");
		assert.deepEqual(
			results[0].content.map((c) => c.type),
			["thinking", "text", "toolCall", "toolCall"],
		);
		assert.deepEqual(results[1], results[0]);
	});

	await t.test("a wrong token through streamProxy is an error message, not a crash", async () => {
		const stream = referenceStreamProxy(DEMO, context("hi"), { authToken: "wrong", proxyUrl: server.origin });
		const final = await stream.result();
		assert.equal(final.stopReason, "error");
		assert.match(final.errorMessage, /^Proxy error: missing or invalid bearer token/);
	});

	await t.test("the client's abort aborts the model stream upstream", async () => {
		const controller = new AbortController();
		const res = await fetch(`${server.origin}/api/stream`, {
			method: "POST",
			headers: auth,
			body: JSON.stringify({ model: DEMO, context: context("hello"), options: {} }),
			signal: controller.signal,
		});
		const reader = res.body.getReader();
		await reader.read();
		controller.abort();
		const deadline = Date.now() + 5_000;
		while (!/client aborted \(upstream aborted\)/.test(server.output()) && Date.now() < deadline) await sleep(50);
		assert.match(server.output(), /POST \/api\/stream demo\/offline-demo -> client aborted \(upstream aborted\)/);
	});

	await t.test("the log names requests and refusals, never the token's use as a secret", async () => {
		const out = server.output();
		assert.match(out, /POST \/api\/stream -> 401/);
		assert.match(out, /POST \/api\/stream -> 413/);
		assert.match(out, /POST \/api\/stream -> 400 malformed JSON/);
	});
});

test("provider keys are redacted from everything the server says", { timeout: 60_000 }, async (t) => {
	await ensureWwwDeps();
	const SECRET = "sk-e2e-REDACT-ME-0123456789abcdef";
	// An OpenAI-compatible base URL that refuses connections: the provider's error passes through the redactor.
	const server = await startDemoServer({ PI_DEMO_TOKEN: TOKEN, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_MODEL: "nothing-here", OPENAI_API_KEY: SECRET });
	t.after(() => server.close());
	const config = await (await fetch(`${server.origin}/api/config`)).text();
	assert.ok(!config.includes(SECRET));
	const model = { provider: "openai-compatible", id: "nothing-here" };
	const res = await fetch(`${server.origin}/api/stream`, {
		method: "POST",
		headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
		// maxRetryDelayMs keeps pi-ai's retry short; `headers` from a page are dropped, not forwarded.
		body: JSON.stringify({ model, context: context("hi"), options: { maxRetryDelayMs: 10, headers: { "x-leak": SECRET } } }),
	});
	const body = await res.text();
	assert.equal(res.status, 200);
	assert.match(body, /"type":"error"/);
	assert.ok(!body.includes(SECRET));
	assert.ok(!server.output().includes(SECRET));
});
