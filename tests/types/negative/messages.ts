// Messages and state are strict: unknown roles, missing fields and read-only state do not compile.
import { Agent, type AgentMessage, type AssistantMessage, type Model, type StreamFn, type UserMessage } from "pi-agent-wasm";

// @ts-expect-error -- no such role (custom roles must be declared in CustomAgentMessages)
export const bogus: AgentMessage = { role: "bogus", text: "x", timestamp: 0 };
// @ts-expect-error -- a declared custom message still needs its fields
export const noteWithoutText: AgentMessage = { role: "note", timestamp: 0 };
// @ts-expect-error -- timestamp is required
export const noTimestamp: UserMessage = { role: "user", content: "x" };
// @ts-expect-error -- user content is text or images
export const toolCallInUser: UserMessage = { role: "user", content: [{ type: "toolCall", id: "", name: "", arguments: {} }], timestamp: 0 };

declare const assistant: AssistantMessage;
// @ts-expect-error -- not a StopReason
assistant.stopReason = "finished";
// @ts-expect-error -- not a ThinkingLevel of a message
assistant.thinkingLevel = "extreme";

declare const streamFn: StreamFn;
declare const model: Model<any>;
const agent = new Agent({ streamFn, initialState: { model } });

// @ts-expect-error -- read-only
agent.state.isStreaming = true;
// @ts-expect-error -- read-only
agent.state.systemPrompt = "new prompt";
// @ts-expect-error -- a ReadonlySet
agent.state.pendingToolCalls.add("call-1");
// @ts-expect-error -- not a ThinkingLevel
agent.state.thinkingLevel = "extreme";

// @ts-expect-error -- a Model needs its catalog fields
export const halfModel: Model<"openai-responses"> = { id: "x", api: "openai-responses", provider: "openai" };
