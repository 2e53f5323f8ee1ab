// What a tool call's outcome means (src/agent_loop/tools.rs): the result of
// `execute`, of a blocking `beforeToolCall`, of an `afterToolCall` override, the
// hook contexts, `onUpdate`, and the lookups of a batch. Each step of a call that
// touches user code is one call from Rust: the look-up, the arguments'
// preparation and validation, each hook, `execute`, the result message.

import { isAborted, isObjectLike, isThenable, errText, mono } from "../js/values.js";
import { evToolUpdate, errorToolResult, toolResultMessageOf } from "../js/events.js";
import { validateToolArguments } from "../js/validate.js";
import { callSettleUntilAbort, exposeRunContext, OPERATION_ABORTED } from "../js/glue.js";

/**
 * `[result, isError]` of a settled `execute`: its result and whether it says
 * `isError: true`, or an error result (a failure, a result that cannot be read).
 * `errText` throwing propagates.
 */
function executedResult(ok, value) {
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
function blockedResult(outcome) {
  if (!isObjectLike(outcome) || !outcome.block) return undefined;
  const result = errorToolResult(outcome.reason || "Tool execution was blocked");
  if (outcome.terminate === true) result.terminate = true;
  return result;
}

/** `outcome` with an `afterToolCall` override applied field by field. */
function applyAfterToolCall(outcome, r) {
  const result = outcome.result;
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
  return toolCallOutcome(outcome.toolCall, next, r.isError ?? outcome.isError, outcome.durationMs);
}

/**
 * The arguments `execute` gets: `prepareArguments` (a call with the new arguments when it returns
 * other ones), then validation (validate.js, with validate.rs's `compile`), or their error.
 */
export function checkedArguments(tool, toolCall, compile) {
  const prepare = tool.prepareArguments;
  let call = toolCall;
  if (prepare != null) {
    if (typeof prepare !== "function") throw new TypeError("tool.prepareArguments must be a function");
    const original = toolCall.arguments;
    const prepared = Reflect.apply(prepare, tool, [original]);
    if (prepared !== original) call = { ...toolCall, arguments: prepared };
  }
  return validateToolArguments(tool, call, compile);
}

/** A call's tool-result message (events.js), appended to `messages` too. */
export function resultMessageInto(outcome, messages) {
  const message = toolResultMessageOf(outcome);
  messages.push(message);
  return message;
}

// The hooks and `execute` are each called, watched and their outcome read in one crossing
// (glue.js `callSettleUntilAbort`): `slot` settles with what the call means for the tool call.
// Each hook gets a fresh context object, and marks the run's transcript copy as seen by a hook, so
// that it is not reused (glue.js `exposeRunContext`).

/**
 * `beforeToolCall`: `slot` settles with the call's immediate result (`Operation aborted` once the
 * run is aborted, whatever the hook returned; the blocked result; an error result of what the hook
 * threw or rejected with), else `undefined`. `errText` throwing fails the slot.
 */
export function callBeforeToolCall(hook, config, assistantMessage, toolCall, args, context, signal, slot) {
  exposeRunContext(context);
  const hookContext = { assistantMessage, toolCall, args, context };
  callSettleUntilAbort(hook, config, [hookContext, signal], signal, slot, (ok, r) => {
    if (ok) {
      if (isAborted(signal)) return errorToolResult(OPERATION_ABORTED);
      try {
        return blockedResult(r);
      } catch (error) {
        r = error;
      }
    }
    return errorToolResult(errText(r));
  });
}

/**
 * `afterToolCall` on an executed call's `outcome`: `slot` settles with the final outcome (the
 * override applied, an error result of what the hook threw or rejected with, or `outcome` itself).
 */
export function callAfterToolCall(hook, config, assistantMessage, outcome, args, context, signal, slot) {
  exposeRunContext(context);
  const { toolCall, result, isError } = outcome;
  const hookContext = { assistantMessage, toolCall, args, result, isError, context };
  callSettleUntilAbort(hook, config, [hookContext, signal], signal, slot, (ok, r) => {
    if (ok) {
      if (!r) return outcome;
      try {
        return applyAfterToolCall(outcome, r);
      } catch (error) {
        r = error;
      }
    }
    return toolCallOutcome(toolCall, errorToolResult(errText(r)), true, outcome.durationMs);
  });
}

/**
 * How long after the abort a tool's `execute` that has not settled is still waited for, beyond the
 * two macrotasks any call gets: a tool that honours the abort but needs a moment to clean up (a
 * process to kill, a request to cancel) keeps its own result, as in 1.4.0 (pi-coding-agent's `bash`
 * reports `Command aborted`); one that ignores the abort is abandoned then.
 */
const EXECUTE_GRACE_MS = 1000;

/**
 * A tool's `execute` with its `onUpdate` gate (returned): `slot` settles with the call's outcome,
 * timed, once `execute` settles; the gate is closed then. `errText` throwing fails the slot.
 */
export function callExecute(tool, toolCall, args, signal, deliver, eventCall, slot) {
  const gate = updateGate(deliver, eventCall);
  const start = mono();
  callSettleUntilAbort(executeTool, tool, [toolCall, args, signal, gate.onUpdate], signal, slot, (ok, value) => {
    const durationMs = Math.round(mono() - start);
    gate.open = false;
    const [result, isError] = executedResult(ok, value);
    return toolCallOutcome(toolCall, result, isError, durationMs);
  }, EXECUTE_GRACE_MS);
  return gate;
}

/** `tool.execute(toolCall.id, ...)`, read and checked as a call of it, with `this` the tool. */
function executeTool(toolCall, args, signal, onUpdate) {
  const f = this.execute;
  if (typeof f !== "function") throw new TypeError(f == null ? "tool.execute is not a function" : "tool.execute must be a function");
  return Reflect.apply(f, this, [toolCall.id, args, signal, onUpdate]);
}

/** What the deliveries of a closed gate's updates left to await, if anything. */
export const pendingUpdates = (gate) => (gate.pending.length > 0 ? gate.pending : undefined);

/**
 * A tool's `onUpdate`: while open, each partial result goes to `deliver` at once
 * (as a `tool_execution_update` event when `toolCall` is given, else as is), and
 * what delivery returns is kept in `pending`, marked handled so that a rejection
 * waits for the loop instead of being reported as unhandled. Late calls are
 * ignored, as in the reference.
 */
function updateGate(deliver, toolCall) {
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

/** Whether an outcome's result asks to end the inner loop (`terminate: true`). */
export const terminates = (outcome) => outcome.result.terminate === true;

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

/** `findTool` of `toolCall?.name`. */
export function toolFor(tools, toolCall) {
  return findTool(tools, toolCall?.name);
}

/** `runToolCall`'s outcome object, the form a tool call's outcome has throughout the pipeline. */
export function toolCallOutcome(toolCall, result, isError, durationMs) {
  const outcome = { toolCall, result, isError };
  if (durationMs !== undefined) outcome.durationMs = durationMs;
  return outcome;
}
