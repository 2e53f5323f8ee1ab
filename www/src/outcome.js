// One word per outcome, the same in every place the demo shows one (tool cards, answers, the status line):
// done, failed, aborted, denied, interrupted. Worked out from the transcript itself, so a restored or
// replayed conversation shows what the live one showed.
import { INTERRUPTED_STREAM, INTERRUPTED_TOOL } from "pi-agent-wasm/session";

export const DENIED_PREFIX = "Denied by the user: ";
const OPERATION_ABORTED = "Operation aborted";

export const textOf = (content) =>
	typeof content === "string" ? content : (content ?? []).filter((c) => c?.type === "text").map((c) => c.text).join("\n");

/** An answer's outcome: "done", "failed", "aborted" or "interrupted" (undefined while it streams). */
export function messageOutcome(message) {
	switch (message?.stopReason) {
		case "error":
			return "failed";
		case "aborted":
			return message.errorMessage === INTERRUPTED_STREAM || message.errorMessage?.startsWith("Interrupted") ? "interrupted" : "aborted";
		case "stop":
		case "length":
		case "toolUse":
			return "done";
		default:
			return undefined;
	}
}

/**
 * The outcome of each tool call that has a result: toolCallId -> word. A failed result is "aborted" when the call
 * was abandoned by the abort ("Operation aborted"), or when no answer followed its batch: the loop asks the model
 * again after every batch unless the run was stopped, so a batch followed by the next prompt (or, once the agent
 * is idle, by nothing) was cut by Stop. `steered(message)` tells a steering message delivered after the batch,
 * which the same run answers.
 */
export function toolOutcomes(messages, { idle = true, steered = () => false } = {}) {
	const out = new Map();
	let batch = [];
	const stopped = () => {
		for (const id of batch) if (out.get(id) === "failed") out.set(id, "aborted");
		batch = [];
	};
	for (const m of messages) {
		if (m.role === "toolResult") {
			const text = textOf(m.content);
			let word = m.isError ? "failed" : "done";
			if (text.startsWith(DENIED_PREFIX)) word = "denied";
			else if (text === INTERRUPTED_TOOL) word = "interrupted";
			else if (m.isError && text === OPERATION_ABORTED) word = "aborted";
			out.set(m.toolCallId, word);
			batch.push(m.toolCallId);
		} else if (m.role === "assistant") {
			if (m.stopReason === "aborted") stopped();
			batch = [];
		} else if (m.role === "user") {
			if (batch.length > 0 && !steered(m)) stopped();
			batch = [];
		}
	}
	if (idle) stopped();
	return out;
}

/** Whether an answer's usage is known: an answer cut by an abort, a reload or an error may report zeros. */
export function usageKnown(message) {
	const u = message?.usage;
	if (!u) return false;
	const counted = (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
	return counted > 0 || !["aborted", "error"].includes(message.stopReason);
}
