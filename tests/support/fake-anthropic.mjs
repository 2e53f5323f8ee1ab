// A stand-in for Anthropic's Messages API on 127.0.0.1, for end-to-end tests that run a real
// server with pi-ai's real Anthropic provider (redirect-anthropic.mjs sends its requests here). It
// streams the API's Server-Sent Events, and like the real API it refuses a request whose tool
// calls are not answered at once by their results (400). The answer depends on the last message:
//   a tool result           -> "The result is <its text>."
//   a text with "add"       -> a tool call add({ a: 2, b: 3 }), its input streamed in pieces
//   "slow"                  -> text deltas every 30 ms for up to a minute (for aborts)
//   anything else           -> "Hello! You said: <text>"
// `requests` records each request (its key and body), `aborted` counts the requests whose client
// closed the connection before the end (the provider saw the abort), `refused` the 400s.
import http from "node:http";

const text = (content) => (typeof content === "string" ? content : content.filter((b) => b.type === "text").map((b) => b.text).join(""));

/** What the real API says when tool calls are not answered at once, or undefined when they are. */
function unansweredToolUse(messages) {
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i];
		const uses = Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_use").map((b) => b.id) : [];
		if (m.role !== "assistant" || uses.length === 0) continue;
		const next = messages[i + 1];
		const results = Array.isArray(next?.content) ? next.content.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id) : [];
		if (next?.role !== "user" || uses.some((id) => !results.includes(id))) {
			return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${uses.join(", ")}`;
		}
	}
	return undefined;
}

export async function startFakeAnthropic({ key } = {}) {
	const state = { requests: [], aborted: 0, refused: [], url: "" };
	const server = http.createServer((req, res) => {
		let raw = "";
		req.setEncoding("utf8");
		req.on("data", (d) => (raw += d));
		req.on("end", async () => {
			let body;
			try {
				body = JSON.parse(raw);
			} catch {
				res.writeHead(400, { "content-type": "application/json" });
				return res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "malformed JSON" } }));
			}
			state.requests.push({ key: req.headers["x-api-key"], path: req.url, body });
			const refuse = (status, type, message) => {
				state.refused.push(message);
				res.writeHead(status, { "content-type": "application/json" });
				res.end(JSON.stringify({ type: "error", error: { type, message } }));
			};
			if (key !== undefined && req.headers["x-api-key"] !== key) return refuse(401, "authentication_error", `invalid x-api-key: ${req.headers["x-api-key"]}`);
			const problem = unansweredToolUse(body.messages ?? []);
			if (problem) return refuse(400, "invalid_request_error", problem);
			let finished = false;
			res.on("close", () => {
				if (!finished) state.aborted++;
			});
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
			const send = (type, data = {}) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
			const last = body.messages.at(-1);
			const result = Array.isArray(last.content) ? last.content.find((b) => b.type === "tool_result") : undefined;
			const said = text(last.content);
			send("message_start", {
				message: { id: `msg_${state.requests.length}`, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
			});
			let stop = "end_turn";
			if (!result && /\badd\b/.test(said)) {
				send("content_block_start", { index: 0, content_block: { type: "tool_use", id: `toolu_${state.requests.length}`, name: "add", input: {} } });
				for (const piece of ['{"a": ', "2, ", '"b": 3', "}"]) send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: piece } });
				send("content_block_stop", { index: 0 });
				stop = "tool_use";
			} else {
				send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
				if (said === "slow") {
					for (let i = 0; i < 2000 && !res.destroyed; i++) {
						send("content_block_delta", { index: 0, delta: { type: "text_delta", text: `word${i} ` } });
						await new Promise((r) => setTimeout(r, 30));
					}
				} else {
					const reply = result ? `The result is ${text(result.content)}.` : `Hello! You said: ${said}`;
					for (const piece of reply.match(/.{1,6}/gs)) send("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
				}
				send("content_block_stop", { index: 0 });
			}
			send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 9 } });
			send("message_stop");
			finished = true;
			res.end();
		});
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	state.url = `http://127.0.0.1:${server.address().port}`;
	state.close = () =>
		new Promise((r) => {
			server.close(() => r());
			server.closeAllConnections();
		});
	return state;
}
