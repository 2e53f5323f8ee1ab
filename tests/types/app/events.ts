// AgentEvent and AssistantMessageEvent as a UI consumes them: exhaustive switches that narrow
// every variant, checked for completeness with `never`.
import type {
  AgentEvent,
  AgentMessage,
  AssistantMessage,
  AssistantMessageEvent,
  ToolCall,
  ToolResultMessage,
} from "pi-agent-wasm";

export function describeEvent(event: AgentEvent): string {
  switch (event.type) {
    case "agent_start":
      return "agent started";
    case "agent_end": {
      const messages: AgentMessage[] = event.messages;
      return `agent ended with ${messages.length} new messages`;
    }
    case "turn_start":
      return "turn started";
    case "turn_end": {
      const message: AgentMessage = event.message;
      const results: ToolResultMessage[] = event.toolResults;
      const failed = results.filter((r) => r.isError).map((r) => r.toolName);
      return `turn ended (${message.role}), failed tools: ${failed.join(", ")}`;
    }
    case "message_start":
      return `message_start ${event.message.role}`;
    case "message_update": {
      const streamed: AssistantMessageEvent = event.assistantMessageEvent;
      return `update ${event.message.role} ${describeAssistantEvent(streamed)}`;
    }
    case "message_end":
      return `message_end ${event.message.role}`;
    case "tool_execution_start": {
      const id: string = event.toolCallId;
      const name: string = event.toolName;
      return `${name}(${JSON.stringify(event.args)}) #${id}`;
    }
    case "tool_execution_update":
      return `${event.toolName} progress ${JSON.stringify(event.partialResult)}`;
    case "tool_execution_end": {
      const isError: boolean = event.isError;
      const ms: number | undefined = event.durationMs;
      return `${event.toolName} ${isError ? "failed" : "done"} in ${ms ?? "?"} ms: ${JSON.stringify(event.result)}`;
    }
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

export function describeAssistantEvent(event: AssistantMessageEvent): string {
  switch (event.type) {
    case "start":
      return `start ${event.partial.model}`;
    case "text_start":
    case "thinking_start":
    case "toolcall_start":
      return `${event.type} @${event.contentIndex}`;
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta": {
      const delta: string = event.delta;
      return `${event.type} +${delta.length}`;
    }
    case "text_end":
    case "thinking_end": {
      const content: string = event.content;
      return `${event.type} ${content}`;
    }
    case "toolcall_end": {
      const call: ToolCall = event.toolCall;
      return `call ${call.name}(${JSON.stringify(call.arguments)})`;
    }
    case "done": {
      const reason: "stop" | "length" | "toolUse" | "deferred" = event.reason;
      const message: AssistantMessage = event.message;
      return `done ${reason} ${message.usage.totalTokens}`;
    }
    case "error": {
      const reason: "aborted" | "error" = event.reason;
      return `error ${reason}: ${event.error.errorMessage ?? ""}`;
    }
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

// A handler table keyed by `AgentEvent["type"]`, each handler receiving its own variant.
type Handlers = { [K in AgentEvent["type"]]: (event: Extract<AgentEvent, { type: K }>) => void };
const log: string[] = [];
export const handlers: Handlers = {
  agent_start: () => log.push("start"),
  agent_end: (e) => log.push(String(e.messages.length)),
  turn_start: () => log.push("turn"),
  turn_end: (e) => log.push(String(e.toolResults.length)),
  message_start: (e) => log.push(e.message.role),
  message_update: (e) => log.push(e.assistantMessageEvent.type),
  message_end: (e) => log.push(e.message.role),
  tool_execution_start: (e) => log.push(e.toolCallId),
  tool_execution_update: (e) => log.push(e.toolName),
  tool_execution_end: (e) => log.push(String(e.isError)),
};
export function dispatch(event: AgentEvent): void {
  (handlers[event.type] as (event: AgentEvent) => void)(event);
}

// Narrowing messages by role.
export function textOf(message: AgentMessage): string {
  if (message.role === "assistant") {
    return message.content.map((block) => (block.type === "text" ? block.text : block.type === "thinking" ? block.thinking : block.name)).join("");
  }
  if (message.role === "user") {
    return typeof message.content === "string" ? message.content : message.content.map((b) => (b.type === "text" ? b.text : b.mimeType)).join("");
  }
  if (message.role === "toolResult") {
    return message.content.map((b) => (b.type === "text" ? b.text : `[${b.mimeType}]`)).join("");
  }
  if (message.role === "system") {
    return typeof message.content === "string" ? message.content : message.content.map((b) => b.text).join("\n");
  }
  return "";
}
