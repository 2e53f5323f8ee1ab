// The agent and the small stores the UI reads beside the agent's own snapshot: tool activity (progress,
// durations from tool_execution_* events), the approval queue of beforeToolCall, and the messages the
// user queued (steering and follow-ups) until the agent delivers them.
import { streamProxy } from "pi-agent-wasm";
import { createAgent } from "./workerMode.jsx";
import { TOOLS, needsApproval } from "./tools.js";
import { DENIED_PREFIX } from "./outcome.js";

export const SYSTEM_PROMPT = [
	"You are the assistant of the pi-agent-wasm browser demo. The agent loop runs in the user's browser (Rust compiled to WebAssembly) and your tools run in the page:",
	"- calculator: exact arithmetic; use it instead of computing in your head",
	"- current_time: the browser's date and time",
	"- fetch_page: a page of this site, such as /about.txt (the user approves each call)",
	"- long_task: a demo task that reports progress while it runs",
	"Use tools when they help. Keep answers short. If the user declines a tool, respect that and continue without it.",
].join("\n");

/** A tiny external store for useSyncExternalStore: immutable values, replaced on every change. */
function createStore(initial) {
	let value = initial;
	const listeners = new Set();
	return {
		get: () => value,
		set(next) {
			value = typeof next === "function" ? next(value) : next;
			for (const l of listeners) l();
		},
		subscribe(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
	};
}

let lastTimestamp = 0;
/** Strictly increasing timestamps, so a queued message can be recognised when it is delivered. */
function uniqueTimestamp() {
	lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
	return lastTimestamp;
}

export const DEFAULT_BODY_LIMIT = 2 * 1024 * 1024;
const encoder = new TextEncoder();
const utf8Length = (s) => encoder.encode(s).length;

export function userMessage(text) {
	return { role: "user", content: [{ type: "text", text }], timestamp: uniqueTimestamp() };
}

export function createChatAgent(config) {
	const models = config.models;
	const defaultModel = models.find((m) => m.provider === config.defaultModel?.provider && m.id === config.defaultModel?.id) ?? models[0];

	// toolCallId -> { status: "running" | "done", progress?, updates, durationMs?, isError? }
	const activity = createStore(new Map());
	const patchActivity = (id, patch) =>
		activity.set((prev) => {
			const next = new Map(prev);
			next.set(id, { ...(prev.get(id) ?? { updates: 0 }), ...patch });
			return next;
		});

	// Pending approvals (first one shown) and the decisions taken: toolCallId -> { approved, reason }.
	const approvals = createStore({ pending: [], decisions: new Map() });

	function requestApproval(toolCall, args, signal) {
		return new Promise((resolve) => {
			const settle = (decision) => {
				signal?.removeEventListener("abort", onAbort);
				approvals.set((prev) => {
					const decisions = new Map(prev.decisions);
					decisions.set(toolCall.id, decision);
					return { pending: prev.pending.filter((p) => p.id !== toolCall.id), decisions };
				});
				resolve(decision);
			};
			const onAbort = () => settle({ approved: false, aborted: true, reason: "The run was aborted" });
			if (signal?.aborted) return onAbort();
			signal?.addEventListener("abort", onAbort, { once: true });
			const entry = {
				id: toolCall.id,
				toolName: toolCall.name,
				args,
				approve: () => settle({ approved: true }),
				deny: (reason) => settle({ approved: false, reason: reason?.trim() || "No reason given" }),
			};
			approvals.set((prev) => ({ ...prev, pending: [...prev.pending, entry] }));
		});
	}

	// What a screen reader is told: each finished answer once, never each token.
	const announcement = createStore("");

	// Messages the user queued; `delivered` remembers how each arrived (timestamp -> "steer" | "followUp").
	const queue = createStore({ pending: [], delivered: new Map() });

	// The model is reached through the dev server: the page holds a session token, never a provider key.
	const proxyOptions = { authToken: config.token, proxyUrl: window.location.origin };
	const agent = createAgent({
		initialState: { systemPrompt: SYSTEM_PROMPT, model: defaultModel, thinkingLevel: "off", tools: TOOLS },
		proxy: Object.assign((model, context, options) => streamProxy(model, context, { ...options, ...proxyOptions }), { options: proxyOptions }),
		beforeToolCall: async ({ toolCall, args }, signal) => {
			if (!needsApproval(toolCall.name)) return undefined;
			const decision = await requestApproval(toolCall, args, signal);
			if (decision.approved) return undefined;
			// The reason becomes the tool result the model reads.
			return { block: true, reason: `${DENIED_PREFIX}${decision.reason}` };
		},
	});

	agent.subscribe((event) => {
		try {
			switch (event.type) {
				case "tool_execution_start":
					patchActivity(event.toolCallId, { status: "running", startedAt: performance.now() });
					break;
				case "tool_execution_update": {
					const partial = event.partialResult ?? {};
					const text = (partial.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
					const prev = activity.get().get(event.toolCallId);
					patchActivity(event.toolCallId, { progress: { text, details: partial.details }, updates: (prev?.updates ?? 0) + 1 });
					break;
				}
				case "tool_execution_end":
					patchActivity(event.toolCallId, { status: "done", isError: event.isError, durationMs: event.durationMs });
					break;
				case "message_end": {
					const m = event.message;
					if (m?.role === "assistant") {
						const text = (m.content ?? []).filter((c) => c?.type === "text").map((c) => c.text).join("\n").trim();
						if (text) announcement.set(`Assistant: ${text.length > 1200 ? `${text.slice(0, 1200)}…` : text}`);
					}
					if (m?.role !== "user") break;
					const hit = queue.get().pending.find((q) => q.message.timestamp === m.timestamp);
					if (hit) {
						queue.set((prev) => {
							const delivered = new Map(prev.delivered);
							delivered.set(m.timestamp, hit.kind);
							return { pending: prev.pending.filter((q) => q !== hit), delivered };
						});
					}
					break;
				}
				default:
					break;
			}
		} catch (err) {
			// A throwing listener would fail the run; the UI bookkeeping must never do that.
			console.error("demo listener:", err);
		}
	});

	// The largest request body the server takes (shown before sending; a 413 names it too).
	const limit = createStore(Number(config.maxBodyBytes) > 0 ? Number(config.maxBodyBytes) : DEFAULT_BODY_LIMIT);
	const sizes = new WeakMap();
	/** Bytes of the request the next prompt would send, with `text` as its message (what streamProxy posts). */
	function requestBytes(text, messages = agent.state.messages) {
		let base = sizes.get(messages);
		if (base === undefined) {
			const { systemPrompt, model, tools } = agent.state;
			base = utf8Length(JSON.stringify({ model, context: { systemPrompt, messages, tools }, options: {} }));
			sizes.set(messages, base);
		}
		return base + utf8Length(JSON.stringify(userMessage(text))) + 1;
	}
	agent.subscribe((event) => {
		const m = event.type === "message_end" ? event.message : undefined;
		const limitText = m?.role === "assistant" && m.stopReason === "error" ? /limit (\d+) bytes/.exec(m.errorMessage ?? "") : null;
		if (limitText) limit.set(Number(limitText[1]));
	});

	return {
		agent,
		models,
		limit,
		requestBytes,
		/** Removes `message` (a prompt) and everything after it: a prompt that failed on its input goes. */
		removeFrom(message) {
			const messages = agent.state.messages;
			const at = messages.indexOf(message);
			if (at < 0 || agent.state.isStreaming) return false;
			agent.state.messages = messages.slice(0, at);
			return true;
		},
		activity,
		approvals,
		queue,
		announcement,
		send: (text) => agent.prompt(userMessage(text)),
		steer(text) {
			const message = userMessage(text);
			queue.set((prev) => ({ ...prev, pending: [...prev.pending, { kind: "steer", message }] }));
			agent.steer(message);
		},
		followUp(text) {
			const message = userMessage(text);
			queue.set((prev) => ({ ...prev, pending: [...prev.pending, { kind: "followUp", message }] }));
			agent.followUp(message);
		},
		abort() {
			agent.clearAllQueues();
			queue.set((prev) => ({ ...prev, pending: [] }));
			agent.abort();
		},
		reset() {
			agent.reset();
			activity.set(new Map());
			approvals.set({ pending: [], decisions: new Map() });
			queue.set({ pending: [], delivered: new Map() });
			announcement.set("");
		},
	};
}
