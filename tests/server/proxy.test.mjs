// createProxyHandler (pi-agent-wasm/server) over HTTP through toNodeHandler on 127.0.0.1: what it
// refuses before any provider is called (no or wrong credentials, foreign Host and Origin, other
// methods, oversized and never-ending bodies, malformed JSON, bad fields named in the 400,
// client-set headers/apiKey/baseUrl/api), what it streams (the proxy protocol, read alike by
// 1.4.0's streamProxy and ours), its limits, metering, the abort of the provider request when the
// client goes away, and that no error it sends carries a key.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { streamProxy as referenceStreamProxy } from "@earendil-works/pi-agent-core";
import { createModels, createProvider } from "@earendil-works/pi-ai";
import { openAICompletionsApi } from "@earendil-works/pi-ai/api/openai-completions.lazy";
import { MODEL, request, scriptedProvider, serve, server, sseEvents, userContext, waitFor } from "./support.mjs";

const { createProxyHandler } = server;
const TOKEN = "proxy-test-token-0123456789";
const authorize = (req) => (req.headers.get("authorization") === `Bearer ${TOKEN}` ? { id: "user-1", plan: "free" } : null);
const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const body = (extra = {}) => JSON.stringify({ model: { provider: "test", id: "m1" }, context: userContext("hi"), options: {}, ...extra });
const post = (port, data, headers = AUTH, more = {}) => request(port, { method: "POST", path: "/api/stream", headers, body: data, ...more });
const json = (res) => {
	assert.match(res.headers["content-type"], /^application\/json/);
	return JSON.parse(res.body);
};

test("construction: authorize, models and stream are required, with TypeErrors that say what to pass", () => {
	const { streamFn } = scriptedProvider();
	assert.throws(() => createProxyHandler({ models: [MODEL], stream: streamFn }), { name: "TypeError", message: /options\.authorize must be a function .*no open default/ });
	assert.throws(() => createProxyHandler({ authorize, stream: streamFn }), { name: "TypeError", message: /options\.models must be the models a client may use/ });
	assert.throws(() => createProxyHandler({ authorize, models: [MODEL] }), { name: "TypeError", message: /options\.stream must be a pi-ai Models collection/ });
	assert.throws(() => createProxyHandler({ authorize, models: ["test/m1"], stream: streamFn }), { name: "TypeError", message: /needs options\.stream to be a pi-ai Models collection/ });
	assert.throws(() => createProxyHandler({ authorize, models: [MODEL], stream: streamFn, limits: { bodyBytes: -1 } }), { name: "TypeError", message: /limits\.bodyBytes/ });
	const models = createModels();
	models.setProvider(createProvider({ id: "test", auth: { apiKey: { name: "none", resolve: async () => ({ auth: {} }) } }, models: [MODEL], api: { stream: streamFn, streamSimple: streamFn } }));
	assert.throws(() => createProxyHandler({ authorize, models: ["test/nope"], stream: models }), { name: "TypeError", message: /test\/nope is not a model of options\.stream/ });
	assert.equal(typeof createProxyHandler({ authorize, models: ["test/m1"], stream: models }), "function");
});

test("refusals before the provider is called", { timeout: 60_000 }, async (t) => {
	const provider = scriptedProvider();
	const LIMIT = 64 * 1024;
	const handler = createProxyHandler({
		authorize,
		models: [MODEL],
		stream: provider.streamFn,
		limits: { bodyBytes: LIMIT, bodyMs: 500 },
	});
	const srv = await serve(handler);
	t.after(() => srv.close());
	// Host values carry the port: the handler is made once the port is known.
	let hostHandler;
	const hostSrv = await serve((req) => hostHandler(req));
	hostHandler = createProxyHandler({ authorize, models: [MODEL], stream: provider.streamFn, hosts: [`127.0.0.1:${hostSrv.port}`, `localhost:${hostSrv.port}`] });
	t.after(() => hostSrv.close());
	const { port } = srv;

	await t.test("401 without credentials, with wrong ones, or with another scheme", async () => {
		for (const headers of [{ "content-type": "application/json" }, { authorization: "Bearer nope" }, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${TOKEN}` }]) {
			const res = await post(port, body(), headers);
			assert.equal(res.status, 401, JSON.stringify(headers));
			assert.match(json(res).error, /unauthorized/);
		}
	});

	await t.test("403 for a foreign Host (DNS rebinding) when hosts are given, and for a foreign Origin", async () => {
		const rebinding = await post(hostSrv.port, body(), { ...AUTH, host: "attacker.example" });
		assert.equal(rebinding.status, 403);
		assert.match(json(rebinding).error, /host not allowed: attacker\.example/);
		const ok = await post(hostSrv.port, body(), { ...AUTH, host: `localhost:${hostSrv.port}` });
		assert.equal(ok.status, 200);
		const foreign = await post(port, body(), { ...AUTH, origin: "https://attacker.example" });
		assert.equal(foreign.status, 403);
		assert.match(json(foreign).error, /origin not allowed: https:\/\/attacker\.example/);
		assert.equal(foreign.headers["access-control-allow-origin"], undefined);
		const opaque = await post(port, body(), { ...AUTH, origin: "null" });
		assert.equal(opaque.status, 403);
		const same = await post(port, body(), { ...AUTH, origin: `http://127.0.0.1:${port}` });
		assert.equal(same.status, 200);
		// A browser's own word wins over the Host comparison: a reverse proxy may have rewritten Host.
		const proxied = await post(port, body(), { ...AUTH, origin: "https://app.example", "sec-fetch-site": "same-origin" });
		assert.equal(proxied.status, 200);
		const crossSite = await post(port, body(), { ...AUTH, origin: `http://127.0.0.1:${port}`, "sec-fetch-site": "cross-site" });
		assert.equal(crossSite.status, 403);
		assert.equal(same.headers["access-control-allow-origin"], undefined, "CORS is off unless origins are given");
		const preflight = await request(port, { method: "OPTIONS", path: "/api/stream", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
		assert.equal(preflight.status, 403);
	});

	await t.test("405 for other methods", async () => {
		const get = await request(port, { path: "/api/stream" });
		assert.equal(get.status, 405);
		assert.equal(get.headers.allow, "POST");
		assert.match(json(get).error, /method not allowed: use POST/);
	});

	await t.test("413 for a body over the limit, by Content-Length or while reading; a never-ending body is cut", async () => {
		const big = body({ context: userContext("x".repeat(LIMIT * 2)) });
		const declared = await post(port, big);
		assert.equal(declared.status, 413);
		assert.match(json(declared).error, /request body too large \(limit 65536 bytes\)/);
		const streamed = await post(port, undefined, AUTH, { body: { chunks: big.match(/.{1,8192}/gs) } });
		assert.equal(streamed.status, 413);
		const endless = await post(port, undefined, AUTH, { body: { endless: 16 * 1024 } });
		assert.equal(endless.status, 413, "an endless fast body ends at the byte limit");
		const drip = await post(port, undefined, AUTH, { body: { endless: 10, delayMs: 50 } });
		assert.equal(drip.status, 408, "an endless slow body ends at the time limit");
		assert.match(json(drip).error, /request body not received within 500 ms/);
		const under = await post(port, body({ pad: "y".repeat(LIMIT - 500) }));
		assert.equal(under.status, 200);
	});

	await t.test("400 for malformed JSON and for each malformed field, named", async () => {
		const bad = await post(port, "{not json");
		assert.equal(bad.status, 400);
		assert.match(json(bad).error, /^malformed JSON: /);
		const msg = (m) => ({ context: { messages: [m] } });
		const cases = [
			["[]", /^body: must be a JSON object/],
			[body({ model: undefined }), /^model: must be an object with string provider and id/],
			[body({ model: { provider: "openai", id: "gpt-4o" } }), /^model: openai\/gpt-4o is not offered by this server/],
			[body({ context: {} }), /^context\.messages: must be an array/],
			[body(msg(null)), /^context\.messages\[0\]: must be an object/],
			[body(msg({ role: "robot", content: "x" })), /^context\.messages\[0\]\.role: must be/],
			[body(msg({ role: "user", content: [{ type: "toolCall" }] })), /^context\.messages\[0\]\.content\[0\]\.type: must be "text" or "image" in a user message/],
			[body(msg({ role: "assistant", content: [{ type: "toolCall", id: "a", name: "n", arguments: "{}" }] })), /^context\.messages\[0\]\.content\[0\]\.arguments: must be an object/],
			[body(msg({ role: "toolResult", content: [] })), /^context\.messages\[0\]\.toolCallId: must be a string/],
			[body({ options: [] }), /^options: must be an object/],
			[body({ options: { temperature: "hot" } }), /^options\.temperature: must be a number/],
			[body({ options: { reasoning: "extreme" } }), /^options\.reasoning: must be one of/],
			[body({ options: { samplingParams: { model: "gpt-5" } } }), /^options\.samplingParams\.model: not allowed/],
		];
		for (const [data, re] of cases) {
			const res = await post(port, data);
			assert.equal(res.status, 400, data.slice(0, 120));
			assert.match(json(res).error, re);
		}
	});

	await t.test("400 for client-set headers, apiKey and baseUrl in options; the model's are the server's", async () => {
		for (const key of ["headers", "apiKey", "baseUrl", "api"]) {
			const res = await post(port, body({ options: { [key]: key === "headers" ? { "x-leak": "1" } : "http://attacker.example" } }));
			assert.equal(res.status, 400, key);
			assert.match(json(res).error, new RegExp(`^options\\.${key}: not allowed`));
		}
		const before = provider.calls.length;
		const res = await post(port, body({ model: { provider: "test", id: "m1", api: "attacker-api", baseUrl: "http://attacker.example", headers: { "x-leak": "1" }, compat: { x: 1 } } }));
		assert.equal(res.status, 200);
		const call = provider.calls[before];
		assert.equal(call.model, MODEL, "the provider gets the server's own model object");
		assert.equal(call.model.baseUrl, "http://provider.internal/v1");
		assert.equal(call.options.headers, undefined);
		assert.equal(call.options.apiKey, undefined);
	});

	assert.equal(provider.calls.filter((c) => c.context.messages[0].content[0].text !== "hi").length, 0, "no refused request reached the provider");
});

test("the stream is the proxy protocol, and 1.4.0's streamProxy and ours read it alike", { timeout: 30_000 }, async (t) => {
	const provider = scriptedProvider(() => ({
		blocks: [{ thinking: "Let me think.", signature: "sig-t" }, { text: "Two tools:", signature: "sig-x" }, { tool: "calculator", args: { expression: "(2+3)*7" } }, { tool: "now", args: {} }],
	}));
	const handler = createProxyHandler({ authorize, models: [MODEL], stream: provider.streamFn });
	const srv = await serve(handler);
	t.after(() => srv.close());
	const res = await post(srv.port, body());
	assert.equal(res.status, 200);
	assert.match(res.headers["content-type"], /^text\/event-stream/);
	// Not no-store: Chromium reports a streamed no-store response read to its end as net::ERR_ABORTED.
	assert.equal(res.headers["cache-control"], "no-cache, no-transform");
	const events = sseEvents(res.body);
	assert.deepEqual(events.slice(0, 2), [{ type: "start" }, { type: "thinking_start", contentIndex: 0 }]);
	for (const e of events) assert.ok(!("partial" in e) && !("message" in e) && !("error" in e), JSON.stringify(e));
	assert.deepEqual(events.find((e) => e.type === "thinking_end"), { type: "thinking_end", contentIndex: 0, contentSignature: "sig-t" });
	assert.deepEqual(events.filter((e) => e.type === "toolcall_start").map((e) => [e.toolName, e.id]), [["calculator", "call_2"], ["now", "call_3"]]);
	assert.deepEqual(events.find((e) => e.type === "toolcall_end").toolCall, { type: "toolCall", id: "call_2", name: "calculator", arguments: { expression: "(2+3)*7" } });
	assert.deepEqual(events.at(-1), { type: "done", reason: "toolUse", usage: { input: 5, output: 7, cacheRead: 0, cacheWrite: 0, totalTokens: 12, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } });

	const pkg = await import("../../pkg/index.js");
	const results = [];
	for (const streamProxy of [referenceStreamProxy, pkg.streamProxy]) {
		const stream = streamProxy(MODEL, userContext("hi"), { authToken: TOKEN, proxyUrl: srv.url });
		const types = [];
		for await (const e of stream) types.push(e.type);
		const final = await stream.result();
		results.push({ types, content: final.content, stopReason: final.stopReason, usage: final.usage });
	}
	assert.equal(results[0].stopReason, "toolUse");
	assert.deepEqual(results[0].content.map((c) => c.type), ["thinking", "text", "toolCall", "toolCall"]);
	assert.deepEqual(results[1], results[0]);
	// A refusal reads as the stream's error message.
	const refused = await referenceStreamProxy(MODEL, userContext("hi"), { authToken: "wrong", proxyUrl: srv.url }).result();
	assert.equal(refused.stopReason, "error");
	assert.match(refused.errorMessage, /^Proxy error: unauthorized/);
});

test("limits: output tokens, request time, streams per user; onUsage meters every stream", { timeout: 30_000 }, async (t) => {
	const provider = scriptedProvider((context) => (context.messages[0].content[0].text === "hang" ? { hang: true } : { blocks: [{ text: "ok" }] }));
	const metered = [];
	const handler = createProxyHandler({
		authorize,
		models: [MODEL],
		stream: provider.streamFn,
		limits: { maxTokens: 300, requestMs: 400, streamsPerUser: 2 },
		onUsage: (user, u, info) => metered.push({ user: user.id, output: u.output, stopReason: info.stopReason, model: info.model.id }),
	});
	const srv = await serve(handler);
	t.after(() => srv.close());

	await post(srv.port, body({ options: { maxTokens: 5000 } }));
	assert.equal(provider.calls.at(-1).options.maxTokens, 300, "capped by the server's limit");
	await post(srv.port, body({ options: {} }));
	assert.equal(provider.calls.at(-1).options.maxTokens, 300, "set when the client gives none");
	await post(srv.port, body({ options: { maxTokens: 20 } }));
	assert.equal(provider.calls.at(-1).options.maxTokens, 20);
	await waitFor(() => metered.length === 3, "three metered streams");
	assert.deepEqual(metered[0], { user: "user-1", output: 7, stopReason: "stop", model: "m1" });

	const hung = await post(srv.port, body({ context: userContext("hang") }));
	const last = sseEvents(hung.body).at(-1);
	assert.deepEqual([last.type, last.reason, last.errorMessage], ["error", "error", "request time limit reached (400 ms)"]);
	await waitFor(() => provider.calls.at(-1).aborted, "the provider request aborted at the time limit");

	// Two streams open (they hang), the third is refused; another user is not.
	const open = [post(srv.port, body({ context: userContext("hang") })), post(srv.port, body({ context: userContext("hang") }))];
	await waitFor(() => provider.calls.filter((c) => !c.aborted && c.context.messages[0].content[0].text === "hang").length === 2, "two open streams");
	const third = await post(srv.port, body());
	assert.equal(third.status, 429);
	assert.match(json(third).error, /too many concurrent streams \(limit 2 per user\)/);
	await Promise.all(open);
	const after = await post(srv.port, body());
	assert.equal(after.status, 200, "the slots are released when the streams end");
});

test("a client that goes away aborts the provider request", { timeout: 30_000 }, async (t) => {
	const provider = scriptedProvider(() => ({ hang: true }));
	const metered = [];
	const handler = createProxyHandler({ authorize, models: [MODEL], stream: provider.streamFn, onUsage: (user, u, info) => metered.push(info.stopReason) });
	const srv = await serve(handler);
	t.after(() => srv.close());
	// fetch, aborted after the first event.
	const controller = new AbortController();
	const res = await fetch(`${srv.url}/api/stream`, { method: "POST", headers: AUTH, body: body(), signal: controller.signal });
	const reader = res.body.getReader();
	await reader.read();
	controller.abort();
	await waitFor(() => provider.calls[0]?.aborted, "the provider's signal to fire after fetch's abort");
	// A raw socket closed mid-stream.
	await new Promise((resolve) => {
		const req = http.request({ host: "127.0.0.1", port: srv.port, method: "POST", path: "/api/stream", headers: AUTH }, (r) => {
			r.once("data", () => {
				req.destroy();
				resolve();
			});
		});
		req.end(body());
	});
	await waitFor(() => provider.calls[1]?.aborted, "the provider's signal to fire after the socket closed");
	await waitFor(() => metered.length === 2, "the aborted streams metered");
	assert.deepEqual(metered, ["aborted", "aborted"]);
});

test("no error the handler sends carries a key", { timeout: 60_000 }, async (t) => {
	const KEY = "sk-proxy-test-REDACT-ME-0123456789";
	// A provider that echoes the key in a thrown error, in an error event, and URL-encoded.
	const echo = scriptedProvider((context, options) => {
		const text = context.messages[0].content[0].text;
		if (text === "throw") return { throws: `bad key ${options.apiKey}` };
		return { blocks: [], error: `401: key ${options.apiKey} (${encodeURIComponent(options.apiKey + "/x")}) rejected` };
	});
	const errors = [];
	const handler = createProxyHandler({ authorize, models: [MODEL], stream: echo.streamFn, getApiKey: (provider) => (provider === "test" ? KEY : undefined), onError: (e) => errors.push(e) });
	const srv = await serve(handler);
	t.after(() => srv.close());
	for (const text of ["throw", "error"]) {
		const res = await post(srv.port, body({ context: userContext(text) }));
		assert.equal(res.status, 200);
		const last = sseEvents(res.body).at(-1);
		assert.equal(last.type, "error");
		assert.match(last.errorMessage, /\[redacted\]/);
		assert.ok(!res.body.includes(KEY) && !res.body.includes(encodeURIComponent(KEY)), res.body);
	}
	assert.equal(echo.calls[0].options.apiKey, KEY, "the provider got the key");

	// A real pi-ai provider (OpenAI-compatible Chat Completions) whose server answers 401 with the key in the body;
	// no getApiKey: pi-ai resolves the key itself, and the handler learns it through the collection's getAuth.
	const upstream = http.createServer((req, res) => {
		res.writeHead(401, { "content-type": "application/json" });
		res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${req.headers.authorization?.slice(7)}`, type: "invalid_request_error" } }));
	});
	await new Promise((r) => upstream.listen(0, "127.0.0.1", r));
	t.after(() => new Promise((r) => upstream.close(r)));
	const compat = { ...MODEL, id: "compat", api: "openai-completions", provider: "compat", baseUrl: `http://127.0.0.1:${upstream.address().port}/v1`, headers: undefined };
	const models = createModels();
	models.setProvider(createProvider({ id: "compat", auth: { apiKey: { name: "key", resolve: async () => ({ auth: { apiKey: KEY } }) } }, models: [compat], api: openAICompletionsApi() }));
	const real = createProxyHandler({ authorize, models: ["compat/compat"], stream: models });
	const realSrv = await serve(real);
	t.after(() => realSrv.close());
	const res = await post(realSrv.port, JSON.stringify({ model: { provider: "compat", id: "compat" }, context: userContext("hi"), options: { maxRetryDelayMs: 1 } }));
	const last = sseEvents(res.body).at(-1);
	assert.equal(last.type, "error");
	assert.match(last.errorMessage, /Incorrect API key provided: \[redacted\]/);
	assert.ok(!res.body.includes(KEY));
	assert.deepEqual(errors, []);
});

test("an unexpected failure is a 500 without details, reported to onError", { timeout: 10_000 }, async (t) => {
	const errors = [];
	const handler = createProxyHandler({
		authorize: () => {
			throw new Error("the user database is down");
		},
		models: [MODEL],
		stream: scriptedProvider().streamFn,
		onError: (e) => errors.push(e.message),
	});
	const srv = await serve(handler);
	t.after(() => srv.close());
	const res = await post(srv.port, body());
	assert.equal(res.status, 500);
	assert.deepEqual(json(res), { error: "internal error" });
	assert.deepEqual(errors, ["the user database is down"]);
});

test("CORS for the origins given: preflight, headers on the stream", { timeout: 10_000 }, async (t) => {
	const handler = createProxyHandler({ authorize, models: [MODEL], stream: scriptedProvider().streamFn, origins: ["https://app.example"] });
	const srv = await serve(handler);
	t.after(() => srv.close());
	const preflight = await request(srv.port, { method: "OPTIONS", path: "/api/stream", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
	assert.equal(preflight.status, 204);
	assert.equal(preflight.headers["access-control-allow-origin"], "https://app.example");
	assert.match(preflight.headers["access-control-allow-headers"], /authorization/);
	const res = await post(srv.port, body(), { ...AUTH, origin: "https://app.example" });
	assert.equal(res.status, 200);
	assert.equal(res.headers["access-control-allow-origin"], "https://app.example");
	const other = await post(srv.port, body(), { ...AUTH, origin: "https://other.example" });
	assert.equal(other.status, 403);
	// A refusal carries the CORS headers too, so the page reads why.
	const refused = await post(srv.port, body(), { "content-type": "application/json", origin: "https://app.example" });
	assert.equal(refused.status, 401);
	assert.equal(refused.headers["access-control-allow-origin"], "https://app.example");
});
