// The low-level loop: agentLoop / agentLoopContinue iteration, runAgentLoop with an event sink,
// a custom stream function, and the default stream function.
import {
  agentLoop,
  agentLoopContinue,
  createAssistantMessageEventStream,
  runAgentLoop,
  runAgentLoopContinue,
  setDefaultStreamFn,
  type AgentContext,
  type AgentEvent,
  type AgentEventSink,
  type AgentLoopConfig,
  type AgentMessage,
  type Api,
  type AssistantMessage,
  type AssistantMessageEventStream,
  type EventStream,
  type Message,
  type Model,
  type SimpleStreamOptions,
  type StreamFn,
  type TranscriptContext,
  type UserMessage,
} from "pi-agent-wasm";

const model: Model<"openai-responses"> = {
  id: "gpt-4o",
  name: "GPT-4o",
  api: "openai-responses",
  provider: "openai",
  baseUrl: "https://api.openai.com/v1",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
};

// A scripted stream function: answers with the number of transcript messages.
export const scripted: StreamFn = (m: Model<Api>, context: TranscriptContext, options?: SimpleStreamOptions) => {
  const stream: AssistantMessageEventStream = createAssistantMessageEventStream();
  const message: AssistantMessage = {
    role: "assistant",
    content: [],
    api: m.api,
    provider: m.provider,
    model: m.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
  };
  queueMicrotask(() => {
    if (options?.signal?.aborted) {
      stream.push({ type: "error", reason: "aborted", error: { ...message, stopReason: "aborted", errorMessage: "aborted" } });
      return;
    }
    stream.push({ type: "start", partial: message });
    message.content.push({ type: "text", text: "" });
    stream.push({ type: "text_start", contentIndex: 0, partial: message });
    const text = `seen ${context.messages.length}`;
    stream.push({ type: "text_delta", contentIndex: 0, delta: text, partial: message });
    stream.push({ type: "text_end", contentIndex: 0, content: text, partial: message });
    stream.push({ type: "done", reason: "stop", message });
  });
  return stream;
};

// An async stream function works too.
export const asyncStreamFn: StreamFn = async (m, context, options) => scripted(m, context, options);

setDefaultStreamFn(scripted);
setDefaultStreamFn(undefined);

const context: AgentContext = {
  messages: [{ role: "system", content: "You are helpful.", timestamp: Date.now() }],
  tools: [],
};

const config: AgentLoopConfig = {
  model,
  convertToLlm: (msgs) => msgs.filter((m): m is Message => ["system", "user", "assistant", "toolResult"].includes(m.role)),
  toolExecution: "parallel",
  beforeToolCall: async ({ toolCall, args, context }) => (toolCall.name && args && context ? undefined : undefined),
  afterToolCall: async ({ toolCall, result, isError, context }) => (toolCall && result && isError && context ? undefined : undefined),
};

const userMessage: UserMessage = { role: "user", content: "Hello", timestamp: Date.now() };

export async function lowLevel(): Promise<AgentMessage[]> {
  const stream: EventStream<AgentEvent, AgentMessage[]> = agentLoop([userMessage], context, config, undefined, scripted);
  for await (const event of stream) {
    console.log(event.type);
  }
  const produced: AgentMessage[] = await stream.result();

  // Continue from the existing context.
  for await (const event of agentLoopContinue(context, config, undefined, scripted)) {
    if (event.type === "agent_end") console.log(event.messages.length);
  }

  // Awaited event sinks.
  const controller = new AbortController();
  const seen: AgentEvent["type"][] = [];
  const emit: AgentEventSink = async (event) => {
    seen.push(event.type);
  };
  const more: AgentMessage[] = await runAgentLoop([userMessage], context, config, emit, controller.signal, scripted);
  const again = await runAgentLoopContinue(context, config, (event) => void seen.push(event.type), undefined, asyncStreamFn);
  return [...produced, ...more, ...again];
}

// The loop's streams are plain async iterables.
export const iterable: AsyncIterable<AgentEvent> = agentLoop([], context, config, undefined, scripted);
