// Constructors of the events and messages that several Rust modules emit
// (Rust side: src/js/events.rs). Each builds a plain object in one call, with
// the reference's key order, so user code sees ordinary objects with stable shapes.


export const evAgentStart = () => ({ type: "agent_start" });

export const evAgentEnd = (messages) => ({ type: "agent_end", messages });

export const evTurnStart = () => ({ type: "turn_start" });

export const evTurnEnd = (message, toolResults) => ({ type: "turn_end", message, toolResults });

export const evMessageStart = (message) => ({ type: "message_start", message });

export const evMessageStartCopy = (message) => ({ type: "message_start", message: { ...message } });

export const evMessageEnd = (message) => ({ type: "message_end", message });

export const evMessageUpdate = (partial, assistantMessageEvent) => ({
  type: "message_update",
  assistantMessageEvent,
  message: { ...partial },
});

export const evToolStart = (toolCallId, toolName, args) => ({ type: "tool_execution_start", toolCallId, toolName, args });

export const evToolUpdate = (toolCallId, toolName, args, partialResult) => ({
  type: "tool_execution_update",
  toolCallId,
  toolName,
  args,
  partialResult,
});

/** The start event of `toolCall` (its `id`, `name` and `arguments` read in this order). */
export const evToolStartOf = (toolCall) => evToolStart(toolCall.id, toolCall.name, toolCall.arguments);

/** The end event of a tool call's outcome (tools.js `toolCallOutcome`). */
export const evToolEndOf = ({ toolCall, result, isError, durationMs }) =>
  evToolEnd(toolCall.id, toolCall.name, result, isError, durationMs);

export function evToolEnd(toolCallId, toolName, result, isError, durationMs) {
  const event = { type: "tool_execution_end", toolCallId, toolName, result, isError };
  if (durationMs !== undefined) event.durationMs = durationMs;
  return event;
}


export const errorToolResult = (text) => ({ content: [{ type: "text", text }], details: {} });

export function toolResultMessage(toolCall, result, isError, durationMs) {
  const message = {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    content: result.content ?? [],
    details: result.details,
    usage: result.usage,
    isError,
  };
  if (durationMs !== undefined) message.durationMs = durationMs;
  message.timestamp = Date.now();
  return message;
}

/** The tool-result message of a tool call's outcome (tools.js `toolCallOutcome`). */
export const toolResultMessageOf = ({ toolCall, result, isError, durationMs }) => toolResultMessage(toolCall, result, isError, durationMs);

export function failureMessage(model, stopReason, errorMessage, usage) {
  return {
    role: "assistant",
    content: [{ type: "text", text: "" }],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage,
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

export function userMessage(text, images) {
  const content = [{ type: "text", text }];
  if (images && images.length > 0) content.push(...images);
  return { role: "user", content, timestamp: Date.now() };
}


export const EMPTY_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

export const getEmptyUsage = () => EMPTY_USAGE;
