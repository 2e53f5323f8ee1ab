// A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the coding-agent test: each
// POST /v1/chat/completions gets the next answer of its script, streamed as SSE chunks the way OpenAI
// streams them (a role chunk, text and tool-call argument deltas, the finish reason, a usage chunk,
// `[DONE]`). Every request body is recorded. `hold` answers stop after their content and wait until
// the client goes away (for aborts). Started and closed by the test.
import http from "node:http";

/**
 * An answer: { text?, toolCalls?: [{ id, name, arguments }], finish?, hold? }.
 * `finish` defaults to "tool_calls" when there are tool calls, else "stop".
 */
function chunksOf(answer, n) {
	const id = `chatcmpl-${n}`;
	const chunk = (delta, finish = null) => ({ id, object: "chat.completion.chunk", created: 1700000000, model: "scripted-model", choices: [{ index: 0, delta, finish_reason: finish }] });
	const out = [chunk({ role: "assistant", content: "" })];
	const text = answer.text ?? "";
	// Text in pieces of up to 8 characters, so the client sees several deltas.
	for (let i = 0; i < text.length; i += 8) out.push(chunk({ content: text.slice(i, i + 8) }));
	(answer.toolCalls ?? []).forEach((call, index) => {
		const args = JSON.stringify(call.arguments);
		out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
		for (let i = 0; i < args.length; i += 16) out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 16) } }] }));
	});
	return out;
}

export async function startOpenAIServer(script) {
	const requests = [];
	let next = 0;
	const sockets = new Set();
	const server = http.createServer(async (req, res) => {
		let body = "";
		for await (const part of req) body += part;
		if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
			res.writeHead(404, { "content-type": "application/json" });
			return res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
		}
		const n = next++;
		requests.push({ url: req.url, authorization: req.headers.authorization, body: JSON.parse(body) });
		const answer = script[n];
		if (answer === undefined) {
			res.writeHead(500, { "content-type": "application/json" });
			return res.end(JSON.stringify({ error: { message: "script exhausted" } }));
		}
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		for (const chunk of chunksOf(answer, n)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
		if (answer.hold) {
			answer.onHold?.();
			// Held open until the client aborts (the socket closes) or the server closes.
			return;
		}
		const finish = answer.finish ?? (answer.toolCalls?.length ? "tool_calls" : "stop");
		res.write(`data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 1700000000, model: "scripted-model", choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`);
		res.write(`data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 1700000000, model: "scripted-model", choices: [], usage: { prompt_tokens: 100 + n, completion_tokens: 10 + n, total_tokens: 110 + 2 * n } })}\n\n`);
		res.end("data: [DONE]\n\n");
	});
	server.on("connection", (socket) => {
		sockets.add(socket);
		socket.on("close", () => sockets.delete(socket));
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}`,
		requests,
		close: () => {
			for (const socket of sockets) socket.destroy();
			return new Promise((resolve) => server.close(resolve));
		},
	};
}
