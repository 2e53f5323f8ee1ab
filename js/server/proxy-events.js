// The proxy protocol that `streamProxy` reads: one Server-Sent Events line per pi-ai
// `AssistantMessageEvent`, `data: <ProxyAssistantMessageEvent JSON>\n\n`, without the `partial`
// message a provider's events carry (the client rebuilds it). Same shapes as pi-agent-core
// 1.4.0's `ProxyAssistantMessageEvent`.

const EMPTY_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
export const emptyUsage = () => ({ ...EMPTY_USAGE, cost: { ...EMPTY_USAGE.cost } });

/**
 * The SSE line of one pi-ai event, or "" for an event the protocol has no place for. Deltas,
 * nearly every event of a stream, are written without building an object first.
 */
export function proxyLine(event) {
  switch (event?.type) {
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return `data: {"type":"${event.type}","contentIndex":${Number(event.contentIndex)},"delta":${JSON.stringify(String(event.delta ?? ""))}}\n\n`;
    default: {
      const proxied = toProxyEvent(event);
      return proxied ? `data: ${JSON.stringify(proxied)}\n\n` : "";
    }
  }
}

/** pi-ai `AssistantMessageEvent` -> `ProxyAssistantMessageEvent` (no `partial`), or undefined. */
export function toProxyEvent(event) {
  const i = event.contentIndex;
  const block = () => event.partial?.content?.[i];
  switch (event.type) {
    case "start":
      return { type: "start" };
    case "text_start":
    case "thinking_start":
      return { type: event.type, contentIndex: i };
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return { type: event.type, contentIndex: i, delta: event.delta };
    case "text_end":
      return { type: "text_end", contentIndex: i, contentSignature: block()?.textSignature };
    case "thinking_end":
      return { type: "thinking_end", contentIndex: i, contentSignature: block()?.thinkingSignature };
    case "toolcall_start": {
      const b = block();
      return { type: "toolcall_start", contentIndex: i, id: b?.id ?? "", toolName: b?.name ?? "" };
    }
    case "toolcall_end": {
      const call = event.toolCall ?? block() ?? {};
      const toolCall = { type: "toolCall", id: call.id, name: call.name, arguments: call.arguments ?? {} };
      for (const key of ["thoughtSignature", "namespace", "argumentsError"]) if (call[key] !== undefined) toolCall[key] = call[key];
      return { type: "toolcall_end", contentIndex: i, toolCall };
    }
    case "done":
      return withThinkingLevel({ type: "done", reason: event.reason, usage: event.message?.usage ?? emptyUsage() }, event.message);
    case "error":
      return withThinkingLevel(
        { type: "error", reason: event.reason === "aborted" ? "aborted" : "error", errorMessage: event.error?.errorMessage, usage: event.error?.usage ?? emptyUsage() },
        event.error,
      );
    default:
      return undefined;
  }
}

function withThinkingLevel(out, message) {
  if (message?.providerThinkingLevel !== undefined) out.providerThinkingLevel = message.providerThinkingLevel;
  return out;
}

/** The line of an error event the server makes itself (a limit, a provider stream that failed). */
export const errorLine = (errorMessage, usage = emptyUsage(), reason = "error") =>
  `data: ${JSON.stringify({ type: "error", reason, errorMessage, usage })}\n\n`;
