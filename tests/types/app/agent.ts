// The Agent class as the reference README uses it: state, prompting, queues, control, events.
import {
  Agent,
  DEFAULT_AGENT_IDENTITY,
  type AgentEvent,
  type AgentInitialState,
  type AgentMessage,
  type AgentOptions,
  type AgentState,
  type AgentTool,
  type ClientIdentity,
  type ImageContent,
  type Model,
  type QueueMode,
  type StreamFn,
  type ToolExecutionMode,
  type Transport,
} from "pi-agent-wasm";

declare const streamFn: StreamFn;
declare const model: Model<any>;
declare const myTool: AgentTool<any>;
declare const newMessages: AgentMessage[];
declare const base64Data: string;
declare function flushSessionState(signal: AbortSignal): Promise<void>;

const initialState: AgentInitialState = { systemPrompt: "You are a helpful assistant.", model, thinkingLevel: "off", tools: [myTool], messages: [] };
const options: AgentOptions = { initialState, streamFn };
const agent = new Agent(options);

// State.
const state: AgentState = agent.state;
const prompt: string = state.systemPrompt;
const streaming: boolean = state.isStreaming;
const partial: AgentMessage | undefined = state.streamingMessage;
const pending: ReadonlySet<string> = state.pendingToolCalls;
const error: string | undefined = state.errorMessage;
console.log(prompt, streaming, partial, pending.has("call-1"), error);
agent.state.model = model;
agent.state.thinkingLevel = "medium";
agent.state.tools = [myTool];
agent.state.messages = newMessages; // top-level array is copied
agent.state.messages.push({ role: "user", content: "appended", timestamp: Date.now() });

// Fields with defaults.
const transport: Transport = agent.transport;
const toolExecution: ToolExecutionMode = agent.toolExecution;
const stream: StreamFn = agent.streamFunction;
const identity: ClientIdentity | undefined = agent.identity;
const defaults: ClientIdentity = DEFAULT_AGENT_IDENTITY;
console.log(transport, toolExecution, stream, identity, defaults.attribution?.name);

export async function run(): Promise<void> {
  // Prompting.
  await agent.prompt("Hello");
  const images: ImageContent[] = [{ type: "image", data: base64Data, mimeType: "image/jpeg" }];
  await agent.prompt("What's in this image?", images);
  await agent.prompt({ role: "user", content: "Hello", timestamp: Date.now() });
  await agent.prompt([
    { role: "system", content: "", sections: { skills: "<skills>...</skills>" }, timestamp: Date.now() },
    { role: "user", content: "Continue", timestamp: Date.now() },
  ]);
  await agent.continue();

  // Steering and follow-up.
  agent.steeringMode = "one-at-a-time";
  agent.followUpMode = "all";
  const steeringMode: QueueMode = agent.steeringMode;
  const followUpMode: QueueMode = agent.followUpMode;
  console.log(steeringMode, followUpMode);
  agent.steer({ role: "user", content: "Stop! Do this instead.", timestamp: Date.now() });
  agent.followUp({ role: "user", content: "Also summarize the result.", timestamp: Date.now() });
  const queued: boolean = agent.hasQueuedMessages();
  const next: AgentMessage[] = agent.peekQueuedMessages();
  console.log(queued, next.length);
  agent.clearSteeringQueue();
  agent.clearFollowUpQueue();
  agent.clearAllQueues();

  // Control.
  const signal: AbortSignal | undefined = agent.signal;
  signal?.addEventListener("abort", () => {});
  agent.abort();
  await agent.waitForIdle();
  agent.reset();

  // Events.
  const unsubscribe: () => void = agent.subscribe(async (event: AgentEvent, runSignal: AbortSignal) => {
    if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
      console.log(event.assistantMessageEvent.delta);
    }
    if (event.type === "agent_end") {
      await flushSessionState(runSignal);
    }
  });
  unsubscribe();
}
