// A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the coding-agent test. One
// server serves every conversation of the file: each opens a route of its own (`/s/<n>/v1`) with its
// script, and each POST <route>/chat/completions gets the next answer of that script, streamed as SSE
// chunks the way OpenAI streams them (a role chunk, reasoning, text and tool-call argument deltas, the
// finish reason, a usage chunk, `[DONE]`), or an HTTP error. Every request body is recorded, with its
// URL as the client wrote it after the route. `hold` answers stop after their content and wait until
// the client goes away (for aborts). Started and closed by the test.
import http from "node:http";

/**
 * An answer:
 *   { reasoning?, text?, toolCalls?: [{ id, name, arguments }], finish?, usage?, hold?, cut?, pause? }
 * streams, in that order, `reasoning` as `reasoning_content` deltas, `text`, the tool calls, the
 * finish reason (default "tool_calls" when there are tool calls, else "stop") and the usage chunk
 * (`usage` replaces its token counts). With `hold` it stops before the finish reason and waits for
 * the client to go away; with `cut`, it closes the connection there; with `pause: name`, it waits
 * there until the route's `release(name)`. Or
 *   { status, message, headers? }
 * answers with that HTTP status and the OpenAI error body `{ error: { message } }`.
 */
function chunksOf(answer, n) {
	const id = `chatcmpl-${n}`;
	const chunk = (delta, finish = null) => ({ id, object: "chat.completion.chunk", created: 1700000000, model: "scripted-model", choices: [{ index: 0, delta, finish_reason: finish }] });
	const out = [chunk({ role: "assistant", content: "" })];
	// Reasoning and text in pieces of up to 8 characters, so the client sees several deltas.
	const reasoning = answer.reasoning ?? "";
	for (let i = 0; i < reasoning.length; i += 8) out.push(chunk({ reasoning_content: reasoning.slice(i, i + 8) }));
	const text = answer.text ?? "";
	for (let i = 0; i < text.length; i += 8) out.push(chunk({ content: text.slice(i, i + 8) }));
	(answer.toolCalls ?? []).forEach((call, index) => {
		const args = JSON.stringify(call.arguments);
		out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
		for (let i = 0; i < args.length; i += 16) out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 16) } }] }));
	});
	return out;
}

/** Writes `answer`, the `n`th of its script, to `res`; `gate(name)` resolves when `name` is released. */
async function respond(res, answer, n, gate) {
	if (answer.status) {
		res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
		return res.end(JSON.stringify({ error: { message: answer.message, type: "scripted_error" } }));
	}
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
	for (const chunk of chunksOf(answer, n)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
	// Held open until the client aborts (the socket closes) or the route closes.
	if (answer.hold) return;
	// The connection drops mid-answer, as when a provider's server or a proxy fails.
	if (answer.cut) return res.destroy();
	if (answer.pause) await gate(answer.pause);
	const finish = answer.finish ?? (answer.toolCalls?.length ? "tool_calls" : "stop");
	const usage = { prompt_tokens: 100 + n, completion_tokens: 10 + n, ...answer.usage };
	usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
	res.write(`data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 1700000000, model: "scripted-model", choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`);
	res.write(`data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 1700000000, model: "scripted-model", choices: [], usage })}\n\n`);
	res.end("data: [DONE]\n\n");
}

/**
 * Starts the server. `open(script)` gives a conversation its route: `{ url, requests, close }`, where
 * `url` is the route's base (`…/s/<n>`), `requests` what reached it, and `close()` ends its held answers.
 */
export async function startOpenAIServer() {
	const routes = new Map();
	let opened = 0;
	const server = http.createServer(async (req, res) => {
		let body = "";
		for await (const part of req) body += part;
		const match = /^\/s\/(\d+)(\/.*)$/.exec(req.url);
		const route = match && routes.get(match[1]);
		if (req.method !== "POST" || !route || !match[2].endsWith("/chat/completions")) {
			res.writeHead(404, { "content-type": "application/json" });
			return res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
		}
		const n = route.next++;
		route.requests.push({ url: match[2], authorization: req.headers.authorization, body: JSON.parse(body) });
		const answer = route.script[n];
		if (answer === undefined) {
			res.writeHead(500, { "content-type": "application/json" });
			return res.end(JSON.stringify({ error: { message: "script exhausted" } }));
		}
		if (answer.hold) {
			route.held.add(res);
			res.on("close", () => route.held.delete(res));
		}
		await respond(res, answer, n, route.gate);
	});
	// Keep-alive sockets are the client's; closing the server ends them.
	const sockets = new Set();
	server.on("connection", (socket) => {
		sockets.add(socket);
		socket.on("close", () => sockets.delete(socket));
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	const base = `http://127.0.0.1:${server.address().port}`;
	return {
		open(script) {
			const key = String(++opened);
			const gates = new Map();
			const opening = (name) => {
				if (!gates.has(name)) {
					let release;
					gates.set(name, { promise: new Promise((resolve) => (release = resolve)), release });
				}
				return gates.get(name);
			};
			const route = { script, next: 0, requests: [], held: new Set(), gate: (name) => opening(name).promise };
			routes.set(key, route);
			return {
				url: `${base}/s/${key}`,
				requests: route.requests,
				release: (name) => opening(name).release(),
				close() {
					for (const { release } of gates.values()) release();
					for (const res of route.held) res.destroy();
					routes.delete(key);
				},
			};
		},
		close: () => {
			for (const socket of sockets) socket.destroy();
			return new Promise((resolve) => server.close(resolve));
		},
	};
}
