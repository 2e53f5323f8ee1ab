// The events that end a failed Agent run (src/agent/mod.rs `handle_run_failure`):
// an error result for each tool call left unanswered, then the failure itself.

import { evAgentEnd, evTurnEnd, evMessageStart, evMessageEnd, evToolEnd, errorToolResult, toolResultMessage } from "../js/events.js";
import { optionOf } from "./options.js";

/** The tool calls of the transcript's last assistant message that have no result yet. */
export function unansweredToolCalls(messages) {
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "assistant") {
      last = i;
      break;
    }
  }
  if (last < 0) return [];
  const message = messages[last];
  if (message.stopReason === "error" || message.stopReason === "aborted" || !Array.isArray(message.content)) return [];
  const answered = new Set();
  for (let i = last + 1; i < messages.length; i++) if (messages[i]?.role === "toolResult") answered.add(messages[i].toolCallId);
  return message.content.filter((c) => c?.type === "toolCall" && !answered.has(c.id));
}

const setHas = (set, value) => set instanceof Set && set.has(value);

/**
 * The events answering one unanswered tool call of a failed run (see agent/mod.rs
 * `handle_run_failure`): its `tool_execution_end` if it was started, then its
 * error result message; none when the call cannot be read.
 */
export function unansweredEvents(call, failure, pending) {
  const reason = failure.errorMessage;
  const result = errorToolResult(`Tool call was not completed: the run ended early (${typeof reason === "string" ? reason : ""})`);
  let message;
  try {
    message = toolResultMessage(call, result, true);
  } catch {
    return [];
  }
  const id = optionOf(call, "id");
  const events = setHas(pending, id) ? [evToolEnd(id, optionOf(call, "name"), result, true)] : [];
  events.push(evMessageStart(message), evMessageEnd(message));
  return events;
}

/** The events that end a failed run with `failure`. */
export const failureEvents = (failure) => [
  evMessageStart(failure),
  evMessageEnd(failure),
  evTurnEnd(failure, []),
  evAgentEnd([failure]),
];
