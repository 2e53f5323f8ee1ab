// What a tool call's outcome means (src/agent_loop/tools.rs): the result of
// `execute`, of a blocking `beforeToolCall`, of an `afterToolCall` override, the
// hook contexts, `onUpdate`, and the lookups of a batch.

import { isObjectLike, isThenable, errText } from "../js/values.js";
import { evToolUpdate, errorToolResult } from "../js/events.js";
import { exposeRunContext } from "../js/glue.js";

/**
 * `[result, isError]` of a settled `execute`: its result and whether it says
 * `isError: true`, or an error result (a failure, a result that cannot be read).
 * `errText` throwing propagates.
 */
export function executedResult(ok, value) {
  if (ok) {
    if (value == null) return [errorToolResult(`Cannot read properties of ${value} (reading 'isError')`), true];
    try {
      return [value, value.isError === true];
    } catch (error) {
      value = error;
    }
  }
  return [errorToolResult(errText(value)), true];
}

/** A blocking `beforeToolCall` outcome's error result (`terminate` kept), else `undefined`. */
export function blockedResult(outcome) {
  if (!isObjectLike(outcome) || !outcome.block) return undefined;
  const result = errorToolResult(outcome.reason || "Tool execution was blocked");
  if (outcome.terminate === true) result.terminate = true;
  return result;
}

/** `afterToolCall` override, field by field. Returns [result, isError]. */
export function applyAfterToolCall(result, isError, r) {
  const structured = r.structuredContent ?? (r.content ? undefined : result.structuredContent);
  const next = {
    ...result,
    content: r.content ?? result.content,
    details: r.details ?? result.details,
    usage: r.usage ?? result.usage,
    terminate: r.terminate ?? result.terminate,
  };
  if (structured === undefined) delete next.structuredContent;
  else next.structuredContent = structured;
  return [next, r.isError ?? isError];
}

export const withArguments = (toolCall, args) => ({ ...toolCall, arguments: args });

// Both mark the run's transcript copy as seen by a hook, so that it is not reused (glue.js `exposeRunContext`).
export function beforeContext(assistantMessage, toolCall, args, context) {
  exposeRunContext(context);
  return { assistantMessage, toolCall, args, context };
}
export function afterContext(assistantMessage, toolCall, args, result, isError, context) {
  exposeRunContext(context);
  return { assistantMessage, toolCall, args, result, isError, context };
}

/**
 * A tool's `onUpdate`: while open, each partial result goes to `deliver` at once
 * (as a `tool_execution_update` event when `toolCall` is given, else as is), and
 * what delivery returns is kept in `pending`, marked handled so that a rejection
 * waits for the loop instead of being reported as unhandled. Late calls are
 * ignored, as in the reference.
 */
export function updateGate(deliver, toolCall) {
  const gate = {
    open: true,
    pending: [],
    onUpdate(partialResult) {
      if (!gate.open || deliver === undefined) return;
      let out;
      try {
        out = deliver(toolCall === undefined ? partialResult : evToolUpdate(toolCall.id, toolCall.name, toolCall.arguments, partialResult));
      } catch (error) {
        out = Promise.reject(error);
      }
      if (isThenable(out)) {
        markHandled(out);
        gate.pending.push(out);
      }
    },
  };
  return gate;
}

export function markHandled(value) {
  try {
    if (isThenable(value)) Promise.resolve(value).then(undefined, () => {});
  } catch {
    // A thenable whose `then` throws is rejected when it is awaited; nothing to mark.
  }
}

/** Whether any called tool declares `executionMode: "sequential"`. */
export function anySequential(tools, toolCalls) {
  for (const toolCall of toolCalls) if (findTool(tools, toolCall.name)?.executionMode === "sequential") return true;
  return false;
}

/** `message.content.filter((c) => c?.type === "toolCall")`, with V8's errors for missing or non-array content. */
export function toolCallsOf(message) {
  const content = message?.content;
  if (content == null) throw new TypeError(`Cannot read properties of ${content} (reading 'filter')`);
  if (!Array.isArray(content)) throw new TypeError("message.content.filter is not a function");
  return content.filter((c) => c?.type === "toolCall");
}

export const findTool = (tools, name) => (Array.isArray(tools) ? tools.find((t) => t.name === name) : undefined);

export function toolCallOutcome(toolCall, result, isError, durationMs) {
  const outcome = { toolCall, result, isError };
  if (durationMs !== undefined) outcome.durationMs = durationMs;
  return outcome;
}
