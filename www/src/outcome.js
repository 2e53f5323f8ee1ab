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
 * The outcome of each tool call that has a result: toolCallId -> word. A failed result is "aborted" when the
 * run was aborted right after it (the next answer ended aborted) or the call was abandoned by the abort.
 */
export function toolOutcomes(messages) {
	const out = new Map();
	let waiting = [];
	for (const m of messages) {
		if (m.role === "toolResult") {
			const text = textOf(m.content);
			let word = m.isError ? "failed" : "done";
			if (text.startsWith(DENIED_PREFIX)) word = "denied";
			else if (text === INTERRUPTED_TOOL) word = "interrupted";
			else if (m.isError && text === OPERATION_ABORTED) word = "aborted";
			out.set(m.toolCallId, word);
			if (word === "failed") waiting.push(m.toolCallId);
		} else if (m.role === "assistant") {
			if (m.stopReason === "aborted") for (const id of waiting) out.set(id, "aborted");
			waiting = [];
		} else waiting = [];
	}
	return out;
}

/** Whether an answer's usage is known: an answer cut by an abort, a reload or an error may report zeros. */
export function usageKnown(message) {
	const u = message?.usage;
	if (!u) return false;
	const counted = (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
	return counted > 0 || !["aborted", "error"].includes(message.stopReason);
}
