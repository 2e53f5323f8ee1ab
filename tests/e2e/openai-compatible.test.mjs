// The server's real-provider path, offline: OPENAI_BASE_URL points the server's OpenAI-compatible provider
// at a fake Chat Completions endpoint in this test, which streams real `chat.completion.chunk` SSE. So
// pi-ai's actual openai-completions code (and the openai SDK) runs in the server, its events go through
// /api/stream into the page, and the page's agent runs the tool and continues. Also checked: the key is
// sent upstream and nowhere else, the page's abort aborts the upstream request, an upstream error is
// shown as an error. Screenshots: test-output/e2e/openai-*.png.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { ensureAppBuilt, launchChromium, newPage, screenshot, sendPrompt, startDemoServer, waitIdle } from "./support.mjs";

const SECRET = "sk-e2e-SECRET-do-not-leak-0123456789";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function chunk(delta, finish = null, extra = {}) {
	return { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model: "fake-llama", choices: [{ index: 0, delta, finish_reason: finish }], ...extra };
}
const usageChunk = (p, c) => ({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model: "fake-llama", choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });

function textOf(content) {
	if (typeof content === "string") return content;
	return (content ?? []).map((p) => p?.text ?? "").join("");
}

/** A tiny OpenAI-compatible server: GET /v1/models and streaming POST /v1/chat/completions. */
async function startFakeOpenAI() {
	const requests = [];
	const server = http.createServer(async (req, res) => {
		let raw = "";
		for await (const part of req) raw += part;
		const record = { method: req.method, url: req.url, headers: req.headers, body: raw ? JSON.parse(raw) : undefined, closedEarly: false, finished: false };
		requests.push(record);
		res.on("close", () => {
			if (!res.writableFinished) record.closedEarly = true;
		});
		if (req.method === "GET" && req.url === "/v1/models") {
			res.writeHead(200, { "content-type": "application/json" });
			res.end(JSON.stringify({ object: "list", data: [{ id: "fake-llama", object: "model", owned_by: "e2e" }] }));
			return;
		}
		if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
			res.writeHead(404, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
			return;
		}
		const messages = record.body.messages ?? [];
		const last = messages.at(-1);
		const said = textOf(last?.content);
		if (/upstream error/.test(said)) {
			res.writeHead(400, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: "fake upstream rejected the request", type: "invalid_request_error" } }));
			return;
		}
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const send = async (obj, delay = 15) => {
			if (res.destroyed) return false;
			res.write(`data: ${typeof obj === "string" ? obj : JSON.stringify(obj)}\n\n`);
			await sleep(delay);
			return !res.destroyed;
		};
		if (last?.role === "tool") {
			await send(chunk({ role: "assistant", content: "" }));
			for (const piece of ["The calcu", "lator says ", textOf(last.content).replace(/\.$/, ""), "."]) await send(chunk({ content: piece }));
			await send(chunk({}, "stop"));
			await send(usageChunk(120, 12));
			await send("[DONE]", 0);
			record.finished = true;
			res.end();
			return;
		}
		if (/slow/.test(said)) {
			await send(chunk({ role: "assistant", content: "" }));
			for (let i = 0; i < 200; i++) if (!(await send(chunk({ content: `tick ${i} ` }), 100))) return;
			await send(chunk({}, "stop"));
			await send("[DONE]", 0);
			record.finished = true;
			res.end();
			return;
		}
		await send(chunk({ role: "assistant", content: "" }));
		for (const piece of ["The user wants ", "2+2; I'll use ", "the calculator."]) await send(chunk({ reasoning_content: piece }));
		await send(chunk({ tool_calls: [{ index: 0, id: "call_fake_1", type: "function", function: { name: "calculator", arguments: "" } }] }));
		for (const piece of ['{"expre', 'ssion"', ': "2', '+2"}']) await send(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }), 40);
		await send(chunk({}, "tool_calls"));
		await send(usageChunk(100, 20));
		await send("[DONE]", 0);
		record.finished = true;
		res.end();
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	return {
		base: `http://127.0.0.1:${server.address().port}/v1`,
		requests,
		close: () =>
			new Promise((r) => {
				server.close(r);
				server.closeAllConnections();
			}),
	};
}

test("a real pi-ai provider (OpenAI-compatible, faked locally) end to end into the page", { timeout: 300_000 }, async (t) => {
	await ensureAppBuilt();
	const fake = await startFakeOpenAI();
	t.after(() => fake.close());
	// No OPENAI_MODEL: the server discovers the model list with GET /v1/models.
	const server = await startDemoServer({ OPENAI_BASE_URL: fake.base, OPENAI_API_KEY: SECRET });
	t.after(() => server.close());
	const browser = await launchChromium();
	t.after(() => browser.close());
	const { page, problems, expectAbort } = await newPage(browser);
	const chats = () => fake.requests.filter((r) => r.method === "POST");

	await t.test("/api/config offers the discovered model first, and never the key", async () => {
		const res = await fetch(`${server.origin}/api/config`);
		const raw = await res.text();
		assert.equal(res.status, 200);
		assert.ok(!raw.includes(SECRET), "the key is not in /api/config");
		const config = JSON.parse(raw);
		assert.deepEqual(
			config.models.map((m) => `${m.provider}/${m.id}`),
			["openai-compatible/fake-llama", "demo/offline-demo"],
		);
		assert.deepEqual(config.defaultModel, { provider: "openai-compatible", id: "fake-llama" });
		assert.ok(config.models.every((m) => m.baseUrl === ""), "no upstream URL either");
	});

	await t.test("a prompt goes through pi-ai's openai-completions provider; the page runs the tool", async () => {
		await page.goto(server.url);
		await page.waitForSelector('[data-testid="welcome"]');
		assert.equal(await page.locator('[data-testid="model-picker"]').inputValue(), "openai-compatible/fake-llama");
		assert.equal(await page.locator('[data-testid="demo-badge"]').count(), 0);
		await sendPrompt(page, "What is 2+2? Use the calculator.");
		await waitIdle(page);
		const card = page.locator('[data-testid="tool-card"][data-tool="calculator"]').last();
		assert.equal(await card.getAttribute("data-status"), "done");
		assert.equal(await card.getAttribute("data-tool-call-id"), "call_fake_1");
		assert.match(await card.locator('[data-testid="tool-result"]').innerText(), /^2\+2 = 4$/);
		assert.match(await page.locator('[data-testid="thinking"]').last().textContent(), /I'll use the calculator/);
		assert.equal(await page.locator('[data-testid="assistant-text"]').last().innerText(), "The calculator says 2+2 = 4.");
		assert.equal(await page.locator('[data-testid="usage"]').innerText(), "Tokens: 220 in · 32 out");
		await screenshot(page, "openai", "tool-round-trip");

		const [first, second] = chats();
		assert.equal(chats().length, 2);
		for (const r of [first, second]) {
			assert.equal(r.url, "/v1/chat/completions");
			assert.equal(r.headers.authorization, `Bearer ${SECRET}`, "the server sends the key upstream");
			assert.equal(r.body.model, "fake-llama");
			assert.equal(r.body.stream, true);
		}
		const tool = first.body.tools.find((x) => x.function?.name === "calculator");
		assert.ok(tool, "the page's tools are declared upstream");
		assert.deepEqual(tool.function.parameters.required, ["expression"]);
		assert.deepEqual(first.body.tools.map((x) => x.function.name).sort(), ["calculator", "current_time", "fetch_page", "long_task"]);
		assert.match(textOf(first.body.messages[0].content), /pi-agent-wasm browser demo/);
		assert.equal(first.body.messages.at(-1).role, "user");
		const assistant = second.body.messages.find((m) => m.role === "assistant");
		assert.equal(assistant.tool_calls[0].id, "call_fake_1");
		assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), { expression: "2+2" });
		const toolMsg = second.body.messages.at(-1);
		assert.equal(toolMsg.role, "tool");
		assert.equal(toolMsg.tool_call_id, "call_fake_1");
		assert.match(textOf(toolMsg.content), /2\+2 = 4/);
	});

	await t.test("the page's abort aborts the upstream request", async () => {
		const before = chats().length;
		await sendPrompt(page, "please be slow");
		await page.locator('[data-testid="assistant-text"]', { hasText: "tick 3" }).waitFor();
		expectAbort();
		await page.click('[data-testid="abort"]');
		await waitIdle(page, 5_000);
		const req = chats()[before];
		const deadline = Date.now() + 5_000;
		while (!req.closedEarly && Date.now() < deadline) await sleep(50);
		assert.equal(req.closedEarly, true, "the upstream connection was closed before the response finished");
		assert.equal(req.finished, false);
		assert.equal(await page.locator('[data-testid="assistant-message"]').last().getAttribute("data-stop-reason"), "aborted");
		assert.match(await page.locator('[data-testid="assistant-text"]').last().innerText(), /^tick 0 tick 1 tick 2 tick 3/);
		await screenshot(page, "openai", "aborted-upstream");
	});

	await t.test("an upstream error is shown as an error", async () => {
		await sendPrompt(page, "trigger an upstream error");
		await waitIdle(page);
		assert.match(await page.locator('[data-testid="message-error"]').last().innerText(), /fake upstream rejected the request/);
		await screenshot(page, "openai", "upstream-error");
	});

	await t.test("the key never reaches the page or the server's log", async () => {
		assert.ok(!(await page.content()).includes(SECRET));
		assert.ok(!server.output().includes(SECRET), "not in the server's output");
		assert.match(server.output(), /openai-compatible\/fake-llama/);
		assert.deepEqual(problems, []);
	});
});
