// streamProxy: the README's browser setup, direct calls, and the proxy event protocol.
import {
  Agent,
  streamProxy,
  type AssistantMessage,
  type AssistantMessageEventStream,
  type Model,
  type ProxyAssistantMessageEvent,
  type ProxyStreamOptions,
  type TranscriptContext,
} from "pi-agent-wasm";

// The reference README's proxy example.
export const agent = new Agent({
  streamFn: (model, context, options) =>
    streamProxy(model, context, {
      ...options,
      authToken: "...",
      proxyUrl: "https://your-server.com",
    }),
});

declare const model: Model<any>;
declare const context: TranscriptContext;

export async function direct(signal: AbortSignal): Promise<AssistantMessage> {
  const options: ProxyStreamOptions = {
    authToken: "token",
    proxyUrl: "https://proxy.example",
    signal,
    temperature: 0.3,
    samplingParams: { top_p: 0.9 },
    maxTokens: 2048,
    reasoning: "medium",
    cacheRetention: "short",
    sessionId: "s1",
    headers: { "x-trace": "1" },
    metadata: { user_id: "u" },
    transport: "sse",
    thinkingBudgets: { medium: 4096 },
    maxRetryDelayMs: 1000,
  };
  const stream: AssistantMessageEventStream = streamProxy(model, context, options);
  for await (const event of stream) {
    if (event.type === "text_delta") console.log(event.delta);
  }
  return stream.result();
}

// What a proxy server sends, one `data:` line per event.
export function serverSide(event: ProxyAssistantMessageEvent): string {
  switch (event.type) {
    case "start":
      return "start";
    case "text_start":
    case "thinking_start":
      return `${event.type}:${event.contentIndex}`;
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return event.delta;
    case "text_end":
    case "thinking_end":
      return event.contentSignature ?? "";
    case "toolcall_start":
      return `${event.id}:${event.toolName}`;
    case "toolcall_end":
      return event.toolCall.name;
    case "done":
      return `${event.reason} ${event.usage.totalTokens} ${event.providerThinkingLevel ?? ""}`;
    case "error":
      return `${event.reason} ${event.errorMessage ?? ""} ${event.usage.cost.total}`;
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
