// Every line after `// @ts-expect-error` must fail to compile: events are strictly discriminated.
import type { AgentEvent, AssistantMessageEvent, ProxyAssistantMessageEvent } from "pi-agent-wasm";

declare const event: AgentEvent;
declare const streamed: AssistantMessageEvent;

// A field of one variant is not readable on the union.
// @ts-expect-error
event.messages;
// @ts-expect-error
event.toolCallId;

// Nor on another variant.
if (event.type === "turn_start") {
  // @ts-expect-error
  console.log(event.message);
}
if (event.type === "message_start") {
  // @ts-expect-error
  console.log(event.assistantMessageEvent);
}
if (event.type === "tool_execution_start") {
  // @ts-expect-error
  console.log(event.result);
}
if (event.type === "tool_execution_end") {
  // @ts-expect-error -- may be absent
  const ms: number = event.durationMs;
  // @ts-expect-error
  const flag: string = event.isError;
}

// An unknown event type.
// @ts-expect-error
if (event.type === "tool_execution_progress") console.log(event);

// A switch that forgets a variant cannot assign the rest to `never`.
export function missingCase(e: AgentEvent): string {
  switch (e.type) {
    case "agent_start":
    case "agent_end":
    case "turn_start":
    case "turn_end":
    case "message_start":
    case "message_update":
    case "message_end":
    case "tool_execution_start":
    case "tool_execution_end":
      return e.type;
    default: {
      // @ts-expect-error -- "tool_execution_update" is not handled
      const unreachable: never = e;
      return unreachable;
    }
  }
}

export function missingAssistantCase(e: AssistantMessageEvent): string {
  switch (e.type) {
    case "start":
    case "text_start":
    case "text_delta":
    case "text_end":
    case "thinking_start":
    case "thinking_delta":
    case "thinking_end":
    case "toolcall_start":
    case "toolcall_delta":
    case "toolcall_end":
    case "done":
      return e.type;
    default: {
      // @ts-expect-error -- "error" is not handled
      const unreachable: never = e;
      return unreachable;
    }
  }
}

if (streamed.type === "text_start") {
  // @ts-expect-error -- only deltas carry `delta`
  console.log(streamed.delta);
}
if (streamed.type === "done") {
  // @ts-expect-error -- `done` carries `message`, `error` carries `error`
  console.log(streamed.error);
  // @ts-expect-error
  const reason: "aborted" = streamed.reason;
}

declare const proxied: ProxyAssistantMessageEvent;
if (proxied.type === "text_delta") {
  // @ts-expect-error -- proxy events carry no `partial`
  console.log(proxied.partial);
}
