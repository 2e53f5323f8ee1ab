// www/server.mjs over HTTP, without a browser: what is the demo's own. Its token page (/api/config:
// the token and the models on offer, never keys, no CORS, not cached), its static files (no path
// out of dist/), its Host check, and its wiring of pi-agent-wasm/server's proxy handler: the token
// and the offered models, the offline demo model streamed through it, the provider's key redacted
// from what the server sends and logs. The handler's own checks (credentials, Host and Origin,
// bodies, JSON, fields, limits, abort, keys) are tested in tests/server/proxy.test.mjs.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { ensureWwwDeps, startDemoServer } from "./support.mjs";

const TOKEN = "e2e-token-0123456789";
const DEMO = { provider: "demo", id: "offline-demo", api: "pi-demo", name: "demo", baseUrl: "", reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 };
const context = (text) => ({ messages: [{ role: "user", content: [{ type: "text", text }], timestamp: 1 }] });

/** A raw HTTP request (fetch cannot send a wrong Host header). */
function request(port, { method = "GET", path = "/", headers = {}, body } = {}) {
	return new Promise((resolve, reject) => {
		const req = http.request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
			let data = "";
			res.setEncoding("utf8");
			res.on("data", (d) => (data += d));
			res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
		});
		req.on("error", reject);
		req.end(body);
	});
}

function json(res) {
	assert.match(res.headers["content-type"], /^application\/json/);
	return JSON.parse(res.body);
}

test("the demo server: its token page, its static files, its wiring of the proxy handler", { timeout: 180_000 }, async (t) => {
	await ensureWwwDeps();
	const server = await startDemoServer({ PI_DEMO_TOKEN: TOKEN, PI_DEMO_MAX_BODY_BYTES: "65536", PI_DEMO_DELAY_SCALE: "0.2" });
	t.after(() => server.close());
	const { port } = server;
	const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

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

	await t.test("403 for a foreign Host on its pages and its stream, 404 for other API paths and paths out of dist/", async () => {
		for (const path of ["/api/config", "/api/stream"]) {
			const rebinding = await request(port, { method: path === "/api/stream" ? "POST" : "GET", path, headers: { ...auth, host: "attacker.example:80" } });
			assert.equal(rebinding.status, 403, path);
			assert.match(json(rebinding).error, /host not allowed/);
		}
		const other = await request(port, { path: "/api/keys" });
		assert.equal(other.status, 404);
		assert.match(json(other).error, /no such API endpoint/);
		const traversal = await request(port, { path: "/..%2f..%2fpackage.json" });
		assert.equal(traversal.status, 404);
	});

	await t.test("the stream: the demo's token required, its models only, its body limit", async () => {
		const wrong = await request(port, { method: "POST", path: "/api/stream", headers: { ...auth, authorization: "Bearer nope" }, body: JSON.stringify({ model: DEMO, context: context("hi") }) });
		assert.equal(wrong.status, 401);
		const other = await request(port, { method: "POST", path: "/api/stream", headers: auth, body: JSON.stringify({ model: { provider: "openai", id: "gpt-4o" }, context: context("hi") }) });
		assert.equal(other.status, 400);
		assert.match(json(other).error, /openai\/gpt-4o is not offered/);
		const big = await request(port, { method: "POST", path: "/api/stream", headers: auth, body: JSON.stringify({ model: DEMO, context: context("x".repeat(70_000)) }) });
		assert.equal(big.status, 413);
		assert.match(json(big).error, /request body too large \(limit 65536 bytes\)/);
	});

	await t.test("the offline demo model streams through the handler; both streamProxy implementations read it", async () => {
		const { streamProxy: referenceStreamProxy } = await import("@earendil-works/pi-agent-core");
		const pkg = await import("../../pkg/index.js");
		const results = [];
		for (const streamProxy of [referenceStreamProxy, pkg.streamProxy]) {
			const stream = streamProxy(DEMO, context("tour"), { authToken: TOKEN, proxyUrl: server.origin });
			const final = await stream.result();
			results.push({ content: final.content.map((c) => ({ ...c, id: c.id && "<id>" })), stopReason: final.stopReason });
		}
		assert.equal(results[0].stopReason, "toolUse");
		assert.deepEqual(results[0].content.map((c) => c.type), ["thinking", "text", "toolCall", "toolCall"]);
		assert.deepEqual(results[1], results[0]);
	});

	await t.test("the log names streams and refusals", async () => {
		const out = server.output();
		assert.match(out, /POST \/api\/stream demo\/offline-demo -> toolUse/);
		assert.match(out, /POST \/api\/stream -> 401/);
		assert.match(out, /POST \/api\/stream -> 413/);
	});
});

test("provider keys are redacted from everything the demo server says", { timeout: 60_000 }, async (t) => {
	await ensureWwwDeps();
	const SECRET = "sk-e2e-REDACT-ME-0123456789abcdef";
	// An OpenAI-compatible base URL that refuses connections: the provider's error passes through the handler.
	const server = await startDemoServer({ PI_DEMO_TOKEN: TOKEN, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_MODEL: "nothing-here", OPENAI_API_KEY: SECRET });
	t.after(() => server.close());
	const config = await (await fetch(`${server.origin}/api/config`)).text();
	assert.ok(!config.includes(SECRET));
	const res = await fetch(`${server.origin}/api/stream`, {
		method: "POST",
		headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
		body: JSON.stringify({ model: { provider: "openai-compatible", id: "nothing-here" }, context: context("hi"), options: { maxRetryDelayMs: 10 } }),
	});
	const body = await res.text();
	assert.equal(res.status, 200);
	assert.match(body, /"type":"error"/);
	assert.ok(!body.includes(SECRET));
	assert.ok(!server.output().includes(SECRET));
});
