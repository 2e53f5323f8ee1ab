// Every type the reference exports, compared with pi-agent-wasm's: `Both` means each is assignable
// to the other (the same type for practical purposes); `RefToOurs` means the reference's values are
// accepted by ours (ours is wider, on purpose; see src/types.rs).
import type * as Ref from "@earendil-works/pi-agent-core";
import type * as Ai from "@earendil-works/pi-ai";
import type * as Ours from "pi-agent-wasm";

type Extends<A, B> = [A] extends [B] ? true : false;
type Both<A, B> = [Extends<A, B>, Extends<B, A>];
const both: [true, true] = [true, true];

// pi-agent-core 1.4.0 (index.d.ts).
export const agentEvent: Both<Ref.AgentEvent, Ours.AgentEvent> = both;
export const agentEventSink: Both<Ref.AgentEventSink, Ours.AgentEventSink> = both;
export const agentMessage: Both<Ref.AgentMessage, Ours.AgentMessage> = both;
export const customAgentMessages: Both<Ref.CustomAgentMessages, Ours.CustomAgentMessages> = both;
export const agentContext: Both<Ref.AgentContext, Ours.AgentContext> = both;
export const agentState: Both<Ref.AgentState, Ours.AgentState> = both;
export const agentInitialState: Both<Ref.AgentInitialState, Ours.AgentInitialState> = both;
export const agentToolResult: Both<Ref.AgentToolResult<{ n: number }>, Ours.AgentToolResult<{ n: number }>> = both;
export const agentToolResultDefault: Both<Ref.AgentToolResult, Ours.AgentToolResult> = both;
export const agentToolCall: Both<Ref.AgentToolCall, Ours.AgentToolCall> = both;
export const agentToolCallOutcome: Both<Ref.AgentToolCallOutcome, Ours.AgentToolCallOutcome> = both;
export const agentToolUpdateCallback: Both<Ref.AgentToolUpdateCallback, Ours.AgentToolUpdateCallback> = both;
export const agentTool: Both<Ref.AgentTool, Ours.AgentTool> = both;
export const agentToolAny: Both<Ref.AgentTool<any>, Ours.AgentTool<any>> = both;
type Schema = Ai.TSchema & { type: "object"; properties: { a: { type: "number" } }; required: ["a"] };
export const agentToolTyped: Both<Ref.AgentTool<Schema, string>, Ours.AgentTool<Schema, string>> = both;
export const beforeToolCallContext: Both<Ref.BeforeToolCallContext, Ours.BeforeToolCallContext> = both;
export const beforeToolCallResult: Both<Ref.BeforeToolCallResult, Ours.BeforeToolCallResult> = both;
export const afterToolCallContext: Both<Ref.AfterToolCallContext, Ours.AfterToolCallContext> = both;
export const afterToolCallResult: Both<Ref.AfterToolCallResult, Ours.AfterToolCallResult> = both;
export const agentTurnContext: Both<Ref.AgentTurnContext, Ours.AgentTurnContext> = both;
export const agentTurnDecision: Both<Ref.AgentTurnDecision, Ours.AgentTurnDecision> = both;
export const finishTurn: Both<Ref.FinishTurn, Ours.FinishTurn> = both;
export const agentLoopTurnUpdate: Both<Ref.AgentLoopTurnUpdate, Ours.AgentLoopTurnUpdate> = both;
export const prepareRequestContext: Both<Ref.PrepareRequestContext, Ours.PrepareRequestContext> = both;
export const agentRequestUpdate: Both<Ref.AgentRequestUpdate, Ours.AgentRequestUpdate> = both;
export const prepareRequest: Both<Ref.PrepareRequest, Ours.PrepareRequest> = both;
export const prepareNextTurnContext: Both<Ref.PrepareNextTurnContext, Ours.PrepareNextTurnContext> = both;
export const queueMode: Both<Ref.QueueMode, Ours.QueueMode> = both;
export const toolExecutionMode: Both<Ref.ToolExecutionMode, Ours.ToolExecutionMode> = both;
export const thinkingLevel: Both<Ref.ThinkingLevel, Ours.ThinkingLevel> = both;
export const toolCallHooks: Both<Ref.ToolCallHooks, Ours.ToolCallHooks> = both;
export const runToolCallOptions: Both<Ref.RunToolCallOptions, Ours.RunToolCallOptions> = both;
export const proxyAssistantMessageEvent: Both<Ref.ProxyAssistantMessageEvent, Ours.ProxyAssistantMessageEvent> = both;
export const proxyStreamOptions: Both<Ref.ProxyStreamOptions, Ours.ProxyStreamOptions> = both;
// Wider on purpose: `telemetry` (pi-telemetry's span) is `unknown`.
export const agentLoopConfig: Extends<Ref.AgentLoopConfig, Ours.AgentLoopConfig> = true;
// Wider on purpose: `streamFn` is optional (setDefaultStreamFn); stream functions compare bivariantly.
export const agentOptions: Extends<Ref.AgentOptions, Ours.AgentOptions> = true;
export const streamFn: Extends<Ref.StreamFn, Ours.StreamFn> = true;
export const defaultIdentity: Both<typeof Ref.DEFAULT_AGENT_IDENTITY, typeof import("pi-agent-wasm").DEFAULT_AGENT_IDENTITY> = both;

// The Agent class: every public member of the reference exists on ours and accepts its values.
// (Optional hook fields are `T | undefined` properties here: wasm-bindgen cannot declare `field?:`.)
type AgentMemberMismatch = {
  [P in keyof Ref.Agent]-?: P extends keyof Ours.Agent ? (Extends<Ref.Agent[P], Ours.Agent[P]> extends true ? never : P) : P;
}[keyof Ref.Agent];
export const agentMembers: [AgentMemberMismatch] extends [never] ? true : false = true;
export const agentConstructor: Extends<ConstructorParameters<typeof Ref.Agent>, ConstructorParameters<typeof import("pi-agent-wasm").Agent>> = true;

// The functions.
type Fn = typeof import("pi-agent-wasm");
type RefFn = typeof import("@earendil-works/pi-agent-core");
export const agentLoop: Extends<Parameters<RefFn["agentLoop"]>, Parameters<Fn["agentLoop"]>> = true;
export const agentLoopResult: Extends<ReturnType<RefFn["agentLoop"]>, ReturnType<Fn["agentLoop"]>> = true;
export const agentLoopContinue: Extends<Parameters<RefFn["agentLoopContinue"]>, Parameters<Fn["agentLoopContinue"]>> = true;
export const runAgentLoop: Extends<Parameters<RefFn["runAgentLoop"]>, Parameters<Fn["runAgentLoop"]>> = true;
export const runAgentLoopContinue: Extends<Parameters<RefFn["runAgentLoopContinue"]>, Parameters<Fn["runAgentLoopContinue"]>> = true;
export const runToolCall: Both<Parameters<RefFn["runToolCall"]>, Parameters<Fn["runToolCall"]>> = both;
export const runToolCallResult: Both<ReturnType<RefFn["runToolCall"]>, ReturnType<Fn["runToolCall"]>> = both;
export const setDefaultStreamFn: Extends<Parameters<RefFn["setDefaultStreamFn"]>, Parameters<Fn["setDefaultStreamFn"]>> = true;
export const streamProxy: Extends<Parameters<RefFn["streamProxy"]>, Parameters<Fn["streamProxy"]>> = true;
export const streamProxyResult: Extends<ReturnType<RefFn["streamProxy"]>, ReturnType<Fn["streamProxy"]>> = true;

// pi-ai 1.4.0.
export const message: Both<Ai.Message, Ours.Message> = both;
export const userMessage: Both<Ai.UserMessage, Ours.UserMessage> = both;
export const assistantMessage: Both<Ai.AssistantMessage, Ours.AssistantMessage> = both;
export const toolResultMessage: Both<Ai.ToolResultMessage, Ours.ToolResultMessage> = both;
export const toolResultMessageTyped: Both<Ai.ToolResultMessage<{ a: number; b?: string[] }>, Ours.ToolResultMessage<{ a: number; b?: string[] }>> = both;
export const toolResultMessageNever: Both<Ai.ToolResultMessage<{ d: Date }>, Ours.ToolResultMessage<{ d: Date }>> = both;
export const systemMessage: Both<Ai.SystemMessage, Ours.SystemMessage> = both;
export const textContent: Both<Ai.TextContent, Ours.TextContent> = both;
export const thinkingContent: Both<Ai.ThinkingContent, Ours.ThinkingContent> = both;
export const imageContent: Both<Ai.ImageContent, Ours.ImageContent> = both;
export const toolCall: Both<Ai.ToolCall, Ours.ToolCall> = both;
export const usage: Both<Ai.Usage, Ours.Usage> = both;
export const stopReason: Both<Ai.StopReason, Ours.StopReason> = both;
export const api: Both<Ai.Api, Ours.Api> = both;
export const knownApi: Both<Ai.KnownApi, Ours.KnownApi> = both;
export const tool: Both<Ai.Tool, Ours.Tool> = both;
export const toolReference: Both<Ai.ToolReference, Ours.ToolReference> = both;
export const contextType: Both<Ai.Context, Ours.Context> = both;
export const assistantMessageEvent: Both<Ai.AssistantMessageEvent, Ours.AssistantMessageEvent> = both;
export const thinkingBudgets: Both<Ai.ThinkingBudgets, Ours.ThinkingBudgets> = both;
export const transport: Both<Ai.Transport, Ours.Transport> = both;
export const cacheRetention: Both<Ai.CacheRetention, Ours.CacheRetention> = both;
export const clientIdentity: Both<Ai.ClientIdentity, Ours.ClientIdentity> = both;
export const jsonValue: Both<Ai.JsonValue, Ours.JsonValue> = both;
export const jsonObject: Both<Ai.JsonObject, Ours.JsonObject> = both;
export const modelThinkingLevel: Both<Ai.ModelThinkingLevel, Ours.ModelThinkingLevel> = both;
export const modelCost: Both<Ai.ModelCost, Ours.ModelCost> = both;
export const modelInputLimits: Both<Ai.ModelInputLimits, Ours.ModelInputLimits> = both;
export const thinkingLevelMap: Both<Ai.ThinkingLevelMap, Ours.ThinkingLevelMap> = both;
export const deferredHandle: Both<Ai.DeferredHandle, Ours.DeferredHandle> = both;
export const assistantMessageDiagnostic: Both<Ai.AssistantMessageDiagnostic, Ours.AssistantMessageDiagnostic> = both;
export const tSchema: Both<Ai.TSchema, Ours.TSchema> = both;
export const staticType: Both<Ai.Static<Schema>, Ours.Static<Schema>> = both;
// Wider on purpose: pi-ai's brand, per-API `compat` types, `protected done` and pi-telemetry span are
// not ours, so these hold one way (pi-ai's values are accepted by ours).
export const transcriptContext: Extends<Ai.TranscriptContext, Ours.TranscriptContext> = true;
export const model: Extends<Ai.Model<Ai.Api>, Ours.Model<Ours.Api>> = true;
export const modelAnthropic: Extends<Ai.Model<"anthropic-messages">, Ours.Model<any>> = true;
export const modelCompletions: Extends<Ai.Model<"openai-completions">, Ours.Model<any>> = true;
export const simpleStreamOptions: Extends<Ai.SimpleStreamOptions, Ours.SimpleStreamOptions> = true;
export const eventStreamToOurs: Extends<Ai.EventStream<number, string>, Ours.EventStream<number, string>> = true;
export const assistantMessageEventStream: Extends<Ai.AssistantMessageEventStream, Ours.AssistantMessageEventStream> = true;
export const streamFunction: Extends<Ai.StreamFunction<"anthropic-messages", Ai.SimpleStreamOptions>, Ours.StreamFn> = true;
