// The page of the server end-to-end tests, the same in every server (Node http, Hono, Next.js):
// an Agent with a tool, streaming through streamProxy to the server's /api/stream, its session kept
// on the server through httpStore at /api/sessions. `start({ token, session })` sets `window.app`,
// which the test drives.
import { Agent, streamProxy } from "pi-agent-wasm";
import { attachSession, httpStore } from "pi-agent-wasm/session";

const add = {
	name: "add",
	label: "Add",
	description: "Add two numbers",
	parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
	execute: async (_id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
};

const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? (b.type === "toolCall" ? `[${b.name}]` : "")).join(""));

export async function start({ token, session: id }) {
	const errors = [];
	const agent = new Agent({
		initialState: { systemPrompt: "Be brief.", model: { provider: "anthropic", id: "claude-sonnet-4-6", api: "anthropic-messages" }, tools: [add] },
		streamFn: (model, context, options) => streamProxy(model, context, { ...options, proxyUrl: "", authToken: token }),
	});
	const session = await attachSession(agent, {
		id,
		store: httpStore("/api/sessions", { headers: { authorization: `Bearer ${token}` } }),
		flushMs: 20,
		onError: (e) => errors.push(e.message),
	});
	window.app = {
		agent,
		session,
		errors,
		restored: session.restored,
		transcript: () => agent.state.messages.filter((m) => m.role !== "system").map((m) => `${m.role}:${textOf(m)}`),
		lastStopReason: () => agent.state.messages.at(-1)?.stopReason,
		streamedText: () => textOf(agent.state.streamingMessage ?? { content: [] }),
		prompt: (text) => void agent.prompt(text),
		run: (text) => agent.prompt(text).then(() => session.flush()),
		idle: () => !agent.state.isStreaming,
		abort: () => agent.abort(),
	};
	document.body.dataset.ready = "1";
	return window.app;
}
