// pi-agent-wasm next to @earendil-works/pi-ai 1.4.0: pi-ai's models, stream functions, streams and
// messages are accepted where pi-agent-wasm expects its own types (the reference README's setup).
import {
  createAssistantMessageEventStream as piCreateStream,
  createModels,
  type AssistantMessage as PiAssistantMessage,
  type Message as PiMessage,
  type Model as PiModel,
  type Api as PiApi,
  type Tool as PiTool,
  type ToolResultMessage as PiToolResultMessage,
} from "@earendil-works/pi-ai";
import { Agent, agentLoop, type AgentContext, type AgentMessage, type AgentTool, type Message, type StreamFn } from "pi-agent-wasm";

const models = createModels();
const model = models.getModel("anthropic", "claude-sonnet-4-6");
if (!model) throw new Error("Model not found");

// The README's quick start, unchanged apart from the import name.
const agent = new Agent({
  initialState: { systemPrompt: "You are a helpful assistant.", model },
  streamFn: models.streamSimple.bind(models),
});
agent.state.model = model;

// A stream function returning pi-ai's stream class.
export const custom: StreamFn = () => piCreateStream();

// pi-ai values flow into pi-agent-wasm's types.
declare const piMessages: PiMessage[];
declare const piAssistant: PiAssistantMessage;
declare const piToolResult: PiToolResultMessage;
declare const piTools: PiTool[];
const transcript: AgentMessage[] = [...piMessages, piAssistant, piToolResult];
agent.state.messages = transcript;
export const context: AgentContext = { messages: piMessages };
export const loop = agentLoop(piMessages, context, { model, convertToLlm: (m) => m as Message[] }, undefined, models.streamSimple.bind(models));

// pi-agent-wasm's messages flow into pi-ai's (the messages are the same shapes).
const ours: Message[] = agent.state.messages.filter((m): m is Message => m.role === "user" || m.role === "assistant");
export const back: PiMessage[] = ours;
export const piContext = { systemPrompt: "x", messages: ours, tools: piTools };
export const completion = models.completeSimple(model, piContext);

// A tool whose schema is built with pi-ai's re-exported TypeBox.
import { Type } from "@earendil-works/pi-ai";
const params = Type.Object({ q: Type.String() });
export const search: AgentTool<typeof params> = {
  name: "search",
  label: "Search",
  description: "",
  parameters: params,
  execute: async (_id, p) => ({ content: [{ type: "text", text: p.q }], details: null }),
};
export const modelsAccepted: PiModel<PiApi>[] = [model];

// pi-agent-wasm/server takes pi-ai's Models collection as it is.
import { createProxyHandler } from "pi-agent-wasm/server";
export const proxyRoute = createProxyHandler({
  stream: models,
  models: ["anthropic/claude-sonnet-4-6", model],
  authorize: (request) => request.headers.get("x-user"),
});
