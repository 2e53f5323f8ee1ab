// Every hook with its context and result types, as Agent options, Agent fields and loop config.
import {
  Agent,
  type AfterToolCallContext,
  type AfterToolCallResult,
  type AgentContext,
  type AgentLoopConfig,
  type AgentLoopTurnUpdate,
  type AgentMessage,
  type AgentRequestUpdate,
  type AgentToolCall,
  type AgentToolResult,
  type AgentTurnContext,
  type AgentTurnDecision,
  type AssistantMessage,
  type BeforeToolCallContext,
  type BeforeToolCallResult,
  type FinishTurn,
  type Message,
  type Model,
  type PrepareNextTurnContext,
  type PrepareRequest,
  type PrepareRequestContext,
  type StreamFn,
  type ThinkingLevel,
  type ToolCallHooks,
  type ToolResultMessage,
} from "pi-agent-wasm";

declare const streamFn: StreamFn;
const isLlmMessage = (m: AgentMessage): m is Message =>
  m.role === "user" || m.role === "assistant" || m.role === "toolResult" || m.role === "system";
declare const cheapModel: Model<any>;
declare function loadCanonicalMessages(signal?: AbortSignal): Promise<AgentMessage[]>;
declare function shouldStop(turn: AgentTurnContext, signal?: AbortSignal): Promise<boolean>;

const beforeToolCall = async (ctx: BeforeToolCallContext, signal?: AbortSignal): Promise<BeforeToolCallResult | undefined> => {
  const message: AssistantMessage = ctx.assistantMessage;
  const call: AgentToolCall = ctx.toolCall;
  const args: unknown = ctx.args;
  const context: AgentContext = ctx.context;
  if (signal?.aborted || call.name === "bash") return { block: true, reason: "bash is disabled", terminate: true };
  console.log(message.stopReason, args, context.messages.length);
  return undefined;
};

const afterToolCall = async (ctx: AfterToolCallContext): Promise<AfterToolCallResult | undefined> => {
  const result: AgentToolResult<any> = ctx.result;
  if (ctx.toolCall.name === "notify_done" && !ctx.isError) return { terminate: true };
  if (!ctx.isError) return { details: { ...result.details, audited: true } };
  return { content: [{ type: "text", text: "failed" }], isError: true, structuredContent: { ok: false } };
};

const finishTurn: FinishTurn = async (turn, signal) => {
  const message: AssistantMessage = turn.message;
  const results: ToolResultMessage[] = turn.toolResults;
  const newMessages: AgentMessage[] = turn.newMessages;
  if (message.stopReason === "error" || message.stopReason === "aborted") return;
  const decision: AgentTurnDecision = (await shouldStop(turn, signal)) ? { action: "end" } : { action: "continue" };
  return results.length + newMessages.length > 10 ? decision : undefined;
};

const prepareRequest: PrepareRequest = async ({ context, model, thinkingLevel }: PrepareRequestContext, signal) => {
  const update: AgentRequestUpdate = { context: { ...context, messages: await loadCanonicalMessages(signal) } };
  if (thinkingLevel === "off") return { ...update, model, thinkingLevel: "low" };
  return update;
};

const prepareNextTurn = (context: PrepareNextTurnContext): AgentLoopTurnUpdate | undefined =>
  context.toolResults.length > 3 ? { model: cheapModel, thinkingLevel: "minimal", messages: [] } : undefined;

// As constructor options (the reference README's list).
export const agent = new Agent({
  streamFn,
  initialState: { systemPrompt: "You are helpful.", thinkingLevel: "medium", tools: [], messages: [] },
  convertToLlm: (messages) => messages.filter(isLlmMessage),
  transformContext: async (messages, signal) => (signal?.aborted ? messages : messages.slice(-50)),
  steeringMode: "one-at-a-time",
  followUpMode: "all",
  sessionId: "session-123",
  identity: { attribution: { name: "my-app", url: "https://my-app.example" } },
  getApiKey: async (provider) => (provider === "anthropic" ? "key" : undefined),
  toolExecution: "parallel",
  beforeToolCall,
  afterToolCall,
  finishTurn,
  prepareRequest,
  prepareNextTurn: async (signal) => (signal?.aborted ? undefined : { thinkingLevel: "high" }),
  prepareNextTurnWithContext: (context, signal) => (signal?.aborted ? undefined : prepareNextTurn(context)),
  onPayload: async (payload, model) => (model.api === "openai-responses" ? payload : undefined),
  onResponse: (response) => console.log(response.status, response.headers["x-request-id"]),
  onProviderStreamEvent: (data) => console.log(data),
  thinkingBudgets: { minimal: 128, low: 512, medium: 1024, high: 2048 },
  transport: "sse",
  maxRetryDelayMs: 30_000,
});

// As fields of the agent (README "State Management").
agent.beforeToolCall = async ({ toolCall }) => (toolCall.name === "rm" ? { block: true } : undefined);
agent.afterToolCall = async ({ toolCall, result }) => (toolCall.name && result.isError ? { isError: false } : undefined);
agent.prepareRequest = async ({ context }) => ({ context: { ...context, messages: await loadCanonicalMessages() } });
agent.finishTurn = async () => undefined;
agent.finishTurn = (turn) => (turn.message.stopReason === "length" ? { action: "continue" } : undefined);
agent.prepareNextTurn = undefined;
agent.transformContext = undefined;
agent.getApiKey = (provider) => provider;
agent.toolExecution = "sequential";
agent.transport = "websocket";
agent.sessionId = undefined;
agent.thinkingBudgets = { low: 1 };
agent.identity = { userAgent: { custom: "my-app/1.0" }, attribution: null };
agent.maxRetryDelayMs = 0;
agent.convertToLlm = (messages) => messages.flatMap((m) => (m.role === "user" ? [m] : []));

const level: ThinkingLevel = agent.state.thinkingLevel;
agent.state.thinkingLevel = level === "off" ? "xhigh" : "max";

// As loop configuration.
export const hooks: ToolCallHooks = { beforeToolCall, afterToolCall };
export const config: AgentLoopConfig = {
  model: cheapModel,
  convertToLlm: (messages) => messages.filter(isLlmMessage),
  ...hooks,
  finishTurn,
  prepareRequest,
  prepareNextTurn,
  getSteeringMessages: async () => [],
  getFollowUpMessages: async () => [{ role: "user", content: "more", timestamp: Date.now() }],
  toolExecution: "sequential",
  reasoning: "high",
  temperature: 0.2,
  maxTokens: 1024,
  cacheRetention: "long",
  headers: { "x-extra": "1", "x-removed": null },
  metadata: { user_id: "u1" },
  toolChoice: "auto",
  deferred: { window: "1h" },
};
