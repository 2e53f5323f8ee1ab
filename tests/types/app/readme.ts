// The reference README's examples, adapted only where they call pi-ai (a `models` catalog is
// declared here) or Node (`process.stdout`).
import { Agent, agentLoop, agentLoopContinue, type AgentContext, type AgentLoopConfig, type AgentMessage, type Api, type Message, type Model, type StreamFn } from "pi-agent-wasm";

declare const models: {
  getModel(provider: string, id: string): Model<Api> | undefined;
  streamSimple: StreamFn;
};
declare function getModel(provider: string, id: string): Model<Api>;

// Quick start.
const model = models.getModel("anthropic", "claude-sonnet-4-6");
if (!model) throw new Error("Model not found");

const agent = new Agent({
  initialState: {
    systemPrompt: "You are a helpful assistant.",
    model,
  },
  streamFn: models.streamSimple.bind(models),
});

agent.subscribe((event) => {
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
    // Stream just the new text chunk
    console.log(event.assistantMessageEvent.delta);
  }
});

await agent.prompt("Hello!");

// continue() and queued input.
agent.followUp({ role: "user", content: "After the retry", timestamp: Date.now() });
await agent.continue();
agent.steer({ role: "user", content: "Continue from here", timestamp: Date.now() });
await agent.continue();

// finishTurn migration.
declare function shouldStop(turn: unknown, signal?: AbortSignal): Promise<boolean>;
agent.finishTurn = async (turn, signal) => {
  if (turn.message.stopReason === "error" || turn.message.stopReason === "aborted") return;
  return (await shouldStop(turn, signal)) ? { action: "end" } : undefined;
};

// Low-level API.
const context: AgentContext = {
  messages: [{ role: "system", content: "You are helpful.", timestamp: Date.now() }],
  tools: [],
};

const config: AgentLoopConfig = {
  model: getModel("openai", "gpt-4o"),
  convertToLlm: (msgs) => msgs.filter((m): m is Message => ["user", "assistant", "toolResult"].includes(m.role)),
  toolExecution: "parallel", // overridden by per-tool executionMode if set
  beforeToolCall: async ({ toolCall, args, context }) => (toolCall && args && context ? undefined : undefined),
  afterToolCall: async ({ toolCall, result, isError, context }) => (toolCall && result && isError && context ? undefined : undefined),
};

const userMessage: AgentMessage = { role: "user", content: "Hello", timestamp: Date.now() };

const streamFn = models.streamSimple.bind(models);
for await (const event of agentLoop([userMessage], context, config, undefined, streamFn)) {
  console.log(event.type);
}

// Continue from existing context
for await (const event of agentLoopContinue(context, config, undefined, streamFn)) {
  console.log(event.type);
}
