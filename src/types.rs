//! The package's TypeScript declarations, written here and emitted by wasm-bindgen.
//!
//! The npm package ships no hand-kept `.d.ts`. Each constant below is a
//! `typescript_custom_section`: wasm-bindgen copies its text to the top of the
//! generated `pi_agent_wasm.d.ts` (sections sorted by their text, lines
//! re-indented by brace depth, hence the one-line signatures), and the
//! package's `index.d.ts` re-exports that module.
//!
//! What wasm-bindgen generates from Rust signatures (the `Agent` class, the
//! exported functions) it also declares, typed through `unchecked_param_type` /
//! `unchecked_optional_param_type` / `unchecked_return_type` annotations that
//! name the types declared here. The exceptions are `Agent.prompt`, whose two
//! overloads wasm-bindgen cannot express (the Rust method is `skip_typescript`),
//! and the members defined in JS (option accessors, listeners,
//! snapshots): all are an `interface Agent` here, merged into the class. The JS
//! classes and values of `src/js/glue.js` (`EventStream`,
//! `AssistantMessageEventStream`, `createAssistantMessageEventStream`) and
//! `src/agent_loop/request.js` (`DEFAULT_AGENT_IDENTITY`) are declared here
//! with `export declare`.
//!
//! The declarations mirror `@earendil-works/pi-agent-core` 1.4.0 and the
//! `@earendil-works/pi-ai` 1.4.0 types it uses (names and shapes are the API; the
//! text is our own), so code written for the reference type-checks unchanged.
//! Deliberate differences, all of them wider than the reference:
//!
//! - TypeBox is an optional peer. The one `import type` from `typebox` is
//!   guarded by `@ts-ignore`; with TypeBox installed, `TSchema`/`Static` are
//!   TypeBox's own (tool `execute` params are inferred exactly as in the
//!   reference), without it `TSchema` is `{}` and `Static<T>` is `any`.
//! - `TranscriptContext` carries no brand, `Model.compat` is an open record,
//!   `EventStream` declares no `done` member and `StreamFn` compares its
//!   parameters bivariantly, so that pi-ai's own values (its models, its
//!   `streamSimple`, its streams) are accepted where ours are expected.
//! - `AgentOptions.streamFn` is optional (`setDefaultStreamFn`).
//!
//! `CustomAgentMessages` is declared here and merges with an app's
//! `declare module "pi-agent-wasm" { interface CustomAgentMessages { … } }`
//! through `index.d.ts`'s `export *` (TypeScript ≥ 3.9 merges augmentations
//! into star re-exports). The consumer checks are in `tests/types/`.
//!
//! Sections never contain a quote followed by `#` (the raw-string delimiter).
//! Check changes with `node tests/types/run.mjs --scratch` (no build needed).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const JSON_AND_SCHEMAS: &str = r#"
// ---- JSON values and schemas -------------------------------------------------

// @ts-ignore -- `typebox` is an optional peer dependency: when it is not installed this import is `any`.
import type { Static as TypeBoxStatic, TSchema as TypeBoxSchema } from "typebox";
// @ts-ignore -- `@earendil-works/pi-schema` (the schema builders of pi 1.6) is an optional peer too.
import type { Static as PiSchemaStatic } from "@earendil-works/pi-schema";

/** Declarations not marked `export` below stay private to this module. */
export {};

type IsAnyType<T> = 0 extends 1 & T ? true : false;
/** Whether the optional `typebox` peer resolved (an unresolved import is `any`). */
type HasTypeBox = IsAnyType<TypeBoxSchema> extends true ? false : true;

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * A JSON Schema: a TypeBox 1.x schema (`Type.Object({ … })`) or a plain JSON Schema object.
 * This is TypeBox's `TSchema` when the `typebox` package is installed.
 */
export type TSchema = HasTypeBox extends true ? TypeBoxSchema : {};
/**
 * The value type a schema describes: TypeBox's `Static` when the `typebox` package is installed
 * (TypeBox schemas and `as const` plain JSON Schemas are inferred), otherwise `any`.
 */
export type Static<T extends TSchema> = HasTypeBox extends true ? TypeBoxStatic<T> : any;

/** Whether the optional `@earendil-works/pi-schema` peer resolved. */
type HasPiSchema = IsAnyType<PiSchemaStatic<{}>> extends true ? false : true;
/** pi-schema's `Static` (a builder's recorded type, TypeBox's common kinds), `unknown` without the peer. */
type PiStatic<T> = HasPiSchema extends true ? PiSchemaStatic<T> : unknown;
/** A TypeBox schema, by the marks TypeBox 1.x puts on its types. */
type IsTypeBoxSchema<T> = [T] extends [{ readonly "~kind": unknown } | { readonly "~unsafe": unknown }] ? true : false;

/**
 * The arguments type `execute` receives for a tool with parameter schema `TParameters`: TypeBox's
 * `Static` for a TypeBox schema (and an `as const` plain JSON Schema) when `typebox` is installed,
 * pi-schema's for a schema built with `@earendil-works/pi-schema`, `any` for `AgentTool<any>` (and
 * when neither package is installed), else `unknown`. Both 1.4's and 1.6's tools infer their
 * parameters.
 */
export type AgentToolParams<TParameters> = IsAnyType<TParameters> extends true
  ? any
  : IsTypeBoxSchema<TParameters> extends true
    ? HasTypeBox extends true
      ? TypeBoxStatic<TParameters & TypeBoxSchema>
      : PiStatic<TParameters>
    : unknown extends PiStatic<TParameters>
      ? HasTypeBox extends true
        ? TypeBoxStatic<TParameters & TypeBoxSchema>
        : any
      : PiStatic<TParameters>;

type JsonPropertyOk<T> = IsAnyType<T> extends true
  ? false
  : unknown extends T
    ? false
    : [Exclude<T, undefined>] extends [never]
      ? true
      : JsonCompatible<Exclude<T, undefined>>;
type NonJsonKeys<T extends object> = {
  [K in keyof T]-?: K extends string | number ? (JsonPropertyOk<T[K]> extends true ? never : K) : K;
}[keyof T];
type JsonCompatibleEach<T> = T extends null | boolean | number | string
  ? true
  : T extends undefined
    ? false
    : T extends readonly (infer Item)[]
      ? JsonCompatible<Item>
      : T extends (...args: never[]) => unknown
        ? false
        : T extends object
          ? [NonJsonKeys<T>] extends [never]
            ? true
            : false
          : false;
/** Whether values of `T` survive a JSON round trip (`any` and `unknown` do not qualify). */
type JsonCompatible<T> = IsAnyType<T> extends true
  ? false
  : unknown extends T
    ? false
    : [T] extends [JsonValue]
      ? [JsonValue] extends [T]
        ? true
        : JsonCompatibleEach<T>
      : JsonCompatibleEach<T>;
/** The JSON form of a typed value; optional properties stay optional. */
type JsonRepresentation<T> = IsAnyType<T> extends true
  ? JsonValue
  : unknown extends T
    ? JsonValue
    : [T] extends [JsonValue]
      ? T
      : T extends readonly unknown[]
        ? { [K in keyof T]: JsonRepresentation<Exclude<T[K], undefined>> }
        : T extends object
          ? { [K in keyof T]: JsonRepresentation<Exclude<T[K], undefined>> }
          : never;
"#;

#[wasm_bindgen(typescript_custom_section)]
const CONTENT_AND_MESSAGES: &str = r#"
// ---- Content blocks and messages (pi-ai) -------------------------------------

/** A text block. */
export interface TextContent {
  type: "text";
  text: string;
  /** Provider signature of the block, passed back on later requests. */
  textSignature?: string;
}

/** A reasoning block. */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Provider signature; for redacted thinking, the opaque encrypted payload. */
  thinkingSignature?: string;
  /** Set when safety filters redacted the thinking. */
  redacted?: boolean;
}

/** An image block. */
export interface ImageContent {
  type: "image";
  /** Base64-encoded image bytes. */
  data: string;
  mimeType: string;
}

/** A tool call block of an assistant message. */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: JsonObject;
  thoughtSignature?: string;
  /** Namespace of a namespaced or dynamically loaded tool (OpenAI Responses). */
  namespace?: string;
  /** Set when the model's arguments were not a JSON object (`arguments` is then `{}`); validation fails with it. */
  argumentsError?: string;
}

/** Token counts and their cost. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The part of `cacheWrite` written with 1h retention (Anthropic only). */
  cacheWrite1h?: number;
  /** Reasoning tokens, already included in `output`, when the provider reports them. */
  reasoning?: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** Why an assistant response ended (`"pending"` while it streams). */
export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

/** Handle of a response a provider continues asynchronously. */
export interface DeferredHandle {
  provider: string;
  modelId: string;
  api: string;
  /** Provider token (a response id, a batch id plus row id, …). */
  id: string;
  expiresAt?: number;
  pollAfterMs?: number;
  /** Provider data needed to rebuild the final assistant message. */
  data?: JsonValue;
}

/** An error recorded while a response was produced. */
export interface DiagnosticErrorInfo {
  name?: string;
  message: string;
  stack?: string;
  code?: string | number;
}

/** A diagnostic attached to an assistant message. */
export interface AssistantMessageDiagnostic {
  type: string;
  timestamp: number;
  error?: DiagnosticErrorInfo;
  details?: JsonObject;
}

/**
 * Prompt text and tool declarations at one point of the transcript. The leading system message is
 * the system prompt; later ones add `content`, replace or remove (`null`) named `sections`, and
 * change the tool set with `toolsAdded` / `toolsRemoved`.
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: Tool[];
  toolsRemoved?: ToolReference[];
  timestamp: number;
}

/** A user turn. */
export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

/** A model response. */
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: Api;
  provider: string;
  model: string;
  responseModel?: string;
  responseId?: string;
  /** The provider-native effort level the response used. */
  providerThinkingLevel?: string;
  /** The thinking level the agent loop requested for this response. */
  thinkingLevel?: ModelThinkingLevel;
  diagnostics?: AssistantMessageDiagnostic[];
  usage: Usage;
  stopReason: StopReason;
  deferred?: DeferredHandle;
  errorMessage?: string;
  rawStopReason?: string;
  /** Whether the provider said the model ended its turn (informational). */
  endTurn?: boolean;
  /** Unix time in milliseconds when the request started. */
  timestamp: number;
  /** Milliseconds from `timestamp` to the end of the response (monotonic clock). */
  durationMs?: number;
}

/** A tool call another tool made while it ran. */
export interface NestedToolCallRecord {
  id: string;
  name: string;
  /** Omitted when too large; `argumentsBytes` then gives the size. */
  arguments?: JsonObject;
  argumentsBytes?: number;
  status: "ok" | "error" | "unfinished";
  durationMs?: number;
  error?: string;
}

/** The nested calls a tool made (bounded). */
export interface NestedToolCalls {
  calls: NestedToolCallRecord[];
  /** False when calls were dropped or truncated, or had not finished. */
  complete: boolean;
}

/**
 * The result of a tool call, as sent to the model. `details` holds the JSON form of `TDetails`;
 * a `TDetails` that cannot be represented as JSON makes this type `never`.
 */
export type ToolResultMessage<TDetails = JsonValue> = JsonCompatible<TDetails> extends true
  ? {
      role: "toolResult";
      toolCallId: string;
      toolName: string;
      content: (TextContent | ImageContent)[];
      details?: JsonRepresentation<TDetails>;
      /** Usage of the tool execution itself (not part of the main context accounting). */
      usage?: Usage;
      /** Calls this tool made to other tools; kept for the record, never sent to the model. */
      nestedCalls?: NestedToolCalls;
      isError: boolean;
      timestamp: number;
      /** Milliseconds the tool's execution took (monotonic clock). */
      durationMs?: number;
    }
  : never;

/** A message an LLM understands. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/**
 * App-specific message types, added by declaration merging:
 *
 * ```ts
 * declare module "pi-agent-wasm" {
 *   interface CustomAgentMessages {
 *     notification: { role: "notification"; text: string; timestamp: number };
 *   }
 * }
 * ```
 *
 * Each property's type joins `AgentMessage`; `convertToLlm` turns them into `Message`s or drops them.
 */
export interface CustomAgentMessages {}

/** A transcript entry: an LLM message or one of the app's `CustomAgentMessages`. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

/** Tool declaration sent to the model. `parameters` is a TypeBox or plain JSON Schema. */
export interface Tool<TParameters extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: TParameters;
  /** Provider-side constrained sampling for the tool's arguments. */
  constrainedSampling?: false | ConstrainedSamplingConfig;
}

/** Constrained sampling: JSON Schema (`strict`) or provider grammars. */
export type ConstrainedSamplingConfig =
  | { type: "json_schema"; strict: "prefer" | "require" }
  | { type: "grammar"; variants: Partial<Record<"openai_lark" | "openai_regex", string>> };

/** Names a tool (`SystemMessage.toolsRemoved`). */
export interface ToolReference {
  name: string;
}

/** Request input with shorthand `systemPrompt` and `tools` (folded into a leading system message). */
export interface Context {
  systemPrompt?: string;
  messages: Message[];
  tools?: Tool[];
}

/**
 * The normalized request a stream function receives: prompt and tool declarations are carried by
 * the transcript's system messages. (pi-ai brands this type; ours is structural, so pi-ai's
 * `TranscriptContext` is accepted too.)
 */
export type TranscriptContext = {
  messages: Message[];
};
"#;

#[wasm_bindgen(typescript_custom_section)]
const MODELS_AND_OPTIONS: &str = r#"
// ---- Models and request options (pi-ai) --------------------------------------

/** APIs pi-ai implements. */
export type KnownApi =
  | "openai-completions"
  | "mistral-conversations"
  | "openai-responses"
  | "azure-openai-responses"
  | "openai-codex-responses"
  | "anthropic-messages"
  | "bedrock-converse-stream"
  | "google-generative-ai"
  | "google-vertex"
  | "pi-messages";
/** A model API: a known one or any custom string. */
export type Api = KnownApi | (string & {});

/** Input kinds a model accepts. */
export type ModelInputModality = "text" | "image";
/** A model-level thinking level (pi-ai's, including `"off"`). */
export type ModelThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";
/**
 * Thinking/reasoning level requested by the agent. `"xhigh"` and `"max"` exist only for some
 * model families.
 */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";
/** Provider values per thinking level; `null` marks a level unsupported. */
export type ThinkingLevelMap = { [Level in ModelThinkingLevel]?: string | null };
/** Token budgets per thinking level (token-budget providers only). */
export interface ThinkingBudgets {
  minimal?: number;
  low?: number;
  medium?: number;
  high?: number;
}

/** Prices per million tokens, with optional tiers above an input size. */
export type ModelCost = {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  tiers?: { input: number; output: number; cacheRead: number; cacheWrite: number; inputTokensAbove: number }[];
};
/** Provider input limits. */
export type ModelInputLimits = {
  maxRequestBytes?: number;
  images?: {
    resize?: { maxWidth?: number; maxHeight?: number; maxBytes?: number; jpegQuality?: number };
    maxPerMessage?: number;
    maxPerRequest?: number;
  };
};
/** Prompt cache lifetimes per retention tier. */
export type ModelPromptCache = { short?: number; long?: number };
/** Extra sampling parameters merged into request bodies. */
export type SamplingParams = Record<string, unknown>;

/** A chat model of the catalog. agent-core itself reads only `id`, `api` and `provider`. */
export interface Model<TApi extends Api> {
  id: string;
  name: string;
  api: TApi;
  provider: string;
  baseUrl: string;
  input: ModelInputModality[];
  inputLimits?: ModelInputLimits;
  cost: ModelCost;
  headers?: Record<string, string>;
  /** Chat is the default model type. */
  type?: "chat";
  reasoning: boolean;
  thinkingLevelMap?: ThinkingLevelMap;
  promptCache?: ModelPromptCache;
  contextWindow: number;
  maxTokens: number;
  samplingParams?: SamplingParams;
  samplingParamsByThinkingLevel?: Partial<Record<ModelThinkingLevel, SamplingParams>>;
  /** Compatibility overrides for the model's API (pi-ai's per-API compat settings). */
  compat?: { [setting: string]: unknown };
}

/** Preferred transport of providers that offer several. */
export type Transport = "sse" | "websocket" | "websocket-cached" | "auto";
/** Prompt cache retention preference. */
export type CacheRetention = "none" | "short" | "long";
/** Provider-neutral tool selection. */
export type ToolChoice = "auto" | "none";

/** The HTTP response a provider request received. */
export interface ProviderResponse {
  status: number;
  headers: Record<string, string>;
}

/** `User-Agent` mode: `"detailed"` (default), `"short"` (`pi`) or a custom value. */
export type UserAgentMode = "short" | "detailed" | { custom: string };
/** Who requests are attributed to (provider attribution headers). */
export interface ClientAttribution {
  name: string;
  url: string;
  categories?: string[];
}
/** How requests identify the app to providers; absent fields use the defaults. */
export interface ClientIdentity {
  userAgent?: UserAgentMode;
  /** Attribution headers; `null` turns off attribution set by a merged identity. */
  attribution?: ClientAttribution | null;
  /** Version in the detailed `User-Agent`. */
  version?: string;
}

/** Options of a stream function call (pi-ai's `SimpleStreamOptions`). */
export interface SimpleStreamOptions {
  signal?: AbortSignal;
  /** Parent telemetry span (pi-telemetry). */
  telemetry?: unknown;
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
  /** Provider-scoped environment values. */
  env?: Record<string, string>;
  /** Inspects or replaces the provider payload before it is sent; return `undefined` to keep it. */
  onPayload?: (payload: unknown, model: Model<Api>) => unknown | undefined | Promise<unknown | undefined>;
  /** Called when the HTTP response arrives, before its body is read. */
  onResponse?: (response: ProviderResponse, model: Model<Api>) => void | Promise<void>;
  /** Extra headers; `null` removes a default header. */
  headers?: Record<string, string | null>;
  identity?: ClientIdentity;
  timeoutMs?: number;
  maxRetries?: number;
  /** Cap for server-requested retry delays (0 disables the cap). */
  maxRetryDelayMs?: number;
  /** Observes each raw provider stream event (read-only). */
  onProviderStreamEvent?: (data: unknown, model: Model<Api>) => void | Promise<void>;
  temperature?: number;
  samplingParams?: SamplingParams;
  maxTokens?: number;
  transport?: Transport;
  cacheRetention?: CacheRetention;
  sessionId?: string;
  /**
   * Asks the provider not to use or record server-side continuation state for this request (for
   * replays such as cache warming); providers without such state ignore it.
   */
  disableContinuation?: boolean;
  websocketConnectTimeoutMs?: number;
  metadata?: Record<string, unknown>;
  toolChoice?: ToolChoice;
  /** Reasoning level (pi-ai's levels: no `"off"`). */
  reasoning?: Exclude<ThinkingLevel, "off">;
  /** Ask a capable provider for a deferred (asynchronous) response. */
  deferred?: boolean | { window?: "15m" | "1h" | "24h" };
  thinkingBudgets?: ThinkingBudgets;
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const STREAMS: &str = r#"
// ---- Assistant message events and event streams ------------------------------

/**
 * Events of one streamed assistant response: `start`, then block updates, then `done` or `error`
 * (a stream may also fail with `error` before `start`). `partial` is the live response so far.
 */
export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse" | "deferred">; message: AssistantMessage }
  | { type: "error"; reason: Extract<StopReason, "aborted" | "error">; error: AssistantMessage };

/**
 * An async-iterable queue of events with a final result. `push` delivers an event (the first one
 * `isComplete` accepts also settles `result()` with `extractResult(event)`); `end` finishes the
 * stream. Each event goes to one consumer.
 */
export declare class EventStream<T, R = T> implements AsyncIterable<T> {
  constructor(isComplete: (event: T) => boolean, extractResult: (event: T) => R);
  /** Delivers an event; ignored once the stream is done. */
  push(event: T): void;
  /** Ends the stream, settling `result()` with `result` when given. */
  end(result?: R): void;
  [Symbol.asyncIterator](): AsyncIterator<T>;
  /** The final result (the same promise on every call). */
  result(): Promise<R>;
}

/**
 * The stream a `StreamFn` returns: completes on `done` / `error` with the final message, and sets
 * that message's `durationMs`.
 */
export declare class AssistantMessageEventStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
  constructor();
}

/** Creates an `AssistantMessageEventStream` (for custom stream functions). */
export declare function createAssistantMessageEventStream(): AssistantMessageEventStream;

/**
 * What a `StreamFn` returns: any async iterable of `AssistantMessageEvent`s whose `result()` gives
 * the final message. An `AssistantMessageEventStream` (ours or pi-ai's) is one; so is a plain
 * object `{ [Symbol.asyncIterator]() {…}, result() {…} }`.
 */
export interface AssistantMessageEventSource {
  [Symbol.asyncIterator](): AsyncIterator<AssistantMessageEvent>;
  result(): Promise<AssistantMessage>;
}

/**
 * A stream function: `streamProxy`, pi-ai's `streamSimple`, or your own. It receives a
 * normalized transcript (prompt and tools are in its system messages) and must encode failures in
 * the stream (a final message with `stopReason` `"error"` or `"aborted"`), never throw.
 */
export type StreamFn = {
  // Method syntax: parameters compare bivariantly, so pi-ai's stream functions are accepted.
  bivarianceHack(model: Model<Api>, context: TranscriptContext, options?: SimpleStreamOptions): AssistantMessageEventSource | Promise<AssistantMessageEventSource>;
}["bivarianceHack"];
"#;

#[wasm_bindgen(typescript_custom_section)]
const TOOLS_AND_HOOKS: &str = r#"
// ---- Tools and tool hooks -----------------------------------------------------

/** How the tool calls of one assistant message run. */
export type ToolExecutionMode = "sequential" | "parallel";

/** A tool call block of an assistant message. */
export type AgentToolCall = Extract<AssistantMessage["content"][number], { type: "toolCall" }>;

/** A tool's final or partial result. */
export interface AgentToolResult<T = JsonValue | undefined> {
  /** Text or images returned to the model. */
  content: (TextContent | ImageContent)[];
  /** Structured details for logs and UIs. */
  details: T;
  /** Machine-readable result matching `outputSchema` (not sent to the model). */
  structuredContent?: JsonValue;
  usage?: Usage;
  /** Reports a failure without throwing; `details` and `structuredContent` are kept. */
  isError?: boolean;
  /** Asks to stop after this tool batch (only when every result in the batch asks). */
  terminate?: boolean;
}

/** Streams partial results of the running `execute()` call; calls after it settled are ignored. */
export type AgentToolUpdateCallback<T = any> = (partialResult: AgentToolResult<T>) => void;

/**
 * A tool the agent can run. `parameters` is a TypeBox schema (`Type.Object({ … })`), a schema built
 * with `@earendil-works/pi-schema`, or any JSON Schema object; `execute` receives the validated
 * arguments, typed by {@link AgentToolParams}.
 */
export interface AgentTool<TParameters extends TSchema = TSchema, TDetails = any> extends Tool<TParameters> {
  /** Label for UIs. */
  label: string;
  /** Rewrites raw arguments before validation (compatibility shim). */
  prepareArguments?: (args: unknown) => AgentToolParams<TParameters>;
  /** JSON Schema of `structuredContent` in successful results. */
  outputSchema?: TSchema | object;
  /** Runs the call. Throw (or return `isError: true`) on failure. */
  execute: (toolCallId: string, params: AgentToolParams<TParameters>, signal?: AbortSignal, onUpdate?: AgentToolUpdateCallback<TDetails>) => Promise<AgentToolResult<TDetails>>;
  /** Recovery policy for an effect whose outcome is unknown (declared; not read by the loop). */
  replay?: "never" | "safe";
  /** Per-tool mode; one `"sequential"` tool makes its whole batch sequential. */
  executionMode?: ToolExecutionMode;
}

/** What `beforeToolCall` may return: `block: true` skips the tool with an error result. */
export interface BeforeToolCallResult {
  block?: boolean;
  /** Text of the error result of a blocked call. */
  reason?: string;
  /** Asks to stop after this batch when the call is blocked. */
  terminate?: boolean;
}

/** Field-by-field overrides `afterToolCall` may return (no deep merge). */
export interface AfterToolCallResult {
  /** Replaces the content; drops `structuredContent` unless that is returned too. */
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: JsonValue;
  isError?: boolean;
  usage?: Usage;
  terminate?: boolean;
}

/** Argument of `beforeToolCall`. */
export interface BeforeToolCallContext {
  /** The assistant message that requested the call. */
  assistantMessage: AssistantMessage;
  /** The raw tool call block. */
  toolCall: AgentToolCall;
  /** The validated arguments. */
  args: unknown;
  /** The agent context when the call is prepared. */
  context: AgentContext;
}

/** Argument of `afterToolCall`. */
export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: unknown;
  /** The executed result, before overrides. */
  result: AgentToolResult<any>;
  isError: boolean;
  context: AgentContext;
}

/** The outcome of one tool call after its hooks ran. */
export interface AgentToolCallOutcome {
  toolCall: AgentToolCall;
  result: AgentToolResult<any>;
  isError: boolean;
  /** Milliseconds `execute()` took; absent when the tool did not run. */
  durationMs?: number;
}

/** The `beforeToolCall` and `afterToolCall` hooks of `AgentLoopConfig`. */
export type ToolCallHooks = Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall">;

/** Options of `runToolCall`. */
export interface RunToolCallOptions extends ToolCallHooks {
  /** The tools the call resolves against. */
  tools: readonly AgentTool<any>[];
  /** Passed to the hooks as the message that issued the call. */
  assistantMessage: AssistantMessage;
  /** Passed to the hooks as the agent context. */
  context: AgentContext;
  signal?: AbortSignal;
  /** Receives the tool's partial results. */
  onUpdate?: (partialResult: AgentToolResult<any>) => Promise<void> | void;
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const LOOP_CONFIG_AND_EVENTS: &str = r#"
// ---- The agent loop: context, configuration, events ---------------------------

/** How many queued messages one drain delivers. */
export type QueueMode = "all" | "one-at-a-time";

/** What the loop runs on. */
export interface AgentContext {
  /** The transcript. */
  messages: AgentMessage[];
  /** The tools that may run. */
  tools?: AgentTool<any>[];
}

/** A completed turn: its assistant message and tool results. */
export interface AgentTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  /** The context after the turn's messages were appended. */
  context: AgentContext;
  /** What the run would return if it ended now. */
  newMessages: AgentMessage[];
}

/** `finishTurn`'s decision; `undefined` keeps normal scheduling. */
export type AgentTurnDecision = { action: "continue" } | { action: "end" };

/**
 * Called after a turn's assistant message and tool results, before `turn_end`. `"end"` ends the
 * run; `"continue"` ensures one more request. Ignored for error and aborted responses.
 */
export type FinishTurn = (turn: AgentTurnContext, signal?: AbortSignal) => AgentTurnDecision | void | Promise<AgentTurnDecision | undefined> | Promise<void>;

/** State to use from the next provider request on. */
export interface AgentLoopTurnUpdate {
  context?: AgentContext;
  /** Messages to append (with their events) before the next request. */
  messages?: AgentMessage[];
  model?: Model<any>;
  thinkingLevel?: ThinkingLevel;
}

/** Argument of `prepareRequest`. */
export interface PrepareRequestContext {
  context: AgentContext;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
}

/** What `prepareRequest` may replace. */
export type AgentRequestUpdate = Omit<AgentLoopTurnUpdate, "messages">;

/** Called before every provider request, including the first; its update applies from then on. */
export type PrepareRequest = (request: PrepareRequestContext, signal?: AbortSignal) => AgentRequestUpdate | void | Promise<AgentRequestUpdate | undefined> | Promise<void>;

/** Argument of `prepareNextTurn`. */
export interface PrepareNextTurnContext extends AgentTurnContext {}

/** Configuration of `agentLoop` and friends; also the options passed to the stream function. */
export interface AgentLoopConfig extends SimpleStreamOptions {
  model: Model<any>;
  /** Turns the transcript into LLM messages before each request; drop UI-only messages here. Must not throw. */
  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  /** Rewrites the transcript (pruning, injected context) before `convertToLlm`. Must not throw. */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** Resolves the API key before each request. Must not throw. */
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  /** Called after `turn_end` when the loop continues; may replace context, model or level, or add messages. */
  prepareNextTurn?: (context: PrepareNextTurnContext) => AgentLoopTurnUpdate | undefined | Promise<AgentLoopTurnUpdate | undefined>;
  /** Messages to inject after the current turn's tool calls. Must not throw. */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** Messages to process when the agent would otherwise stop. Must not throw. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  /** Default `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  /** Runs after argument validation, before `execute`; may block the call. */
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  /** Runs after `execute`, before the result's events; may override parts of the result. */
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
}

/**
 * What the loop and the `Agent` emit, discriminated by `type`. `agent_end` is the last event of a
 * run; an `Agent` becomes idle once its listeners for it settled.
 */
export type AgentEvent =
  | { type: "agent_start" }
  | { type: "agent_end"; messages: AgentMessage[] }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: any }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: any; partialResult: any }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: any;
      isError: boolean;
      /** Milliseconds `execute()` took; absent when the tool did not run. */
      durationMs?: number;
    };

/** Receives the loop's events; a returned promise is awaited. */
export type AgentEventSink = (event: AgentEvent) => Promise<void> | void;
"#;

#[wasm_bindgen(typescript_custom_section)]
const AGENT_OPTIONS_AND_STATE: &str = r#"
// ---- Agent: options and state ------------------------------------------------

/** The state of an `Agent` (`agent.state`). Assigning `tools` or `messages` copies the array. */
export interface AgentState {
  /** The system prompt replayed from the transcript's system messages (read-only). */
  readonly systemPrompt: string;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  /** The executable tools; differences from the transcript's declarations are announced to the model. */
  tools: AgentTool<any>[];
  /** The transcript. */
  messages: AgentMessage[];
  /** True from the start of a run until its `agent_end` listeners settled. */
  readonly isStreaming: boolean;
  /** The partial assistant message being streamed. */
  readonly streamingMessage?: AgentMessage;
  /** Ids of the tool calls executing. */
  readonly pendingToolCalls: ReadonlySet<string>;
  /** Error of the last failed or aborted turn. */
  readonly errorMessage?: string;
}

/** `initialState` of an `Agent`: `systemPrompt` and `tools` seed the leading system message. */
export type AgentInitialState = Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage">>;

/** Options of `new Agent(options)`. */
export interface AgentOptions {
  initialState?: AgentInitialState;
  convertToLlm?: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** The stream function; defaults to the one set with `setDefaultStreamFn` (required by pi-agent-core). */
  streamFn?: StreamFn;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  onPayload?: SimpleStreamOptions["onPayload"];
  onResponse?: SimpleStreamOptions["onResponse"];
  onProviderStreamEvent?: SimpleStreamOptions["onProviderStreamEvent"];
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  prepareNextTurn?: (signal?: AbortSignal) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  prepareNextTurnWithContext?: (context: PrepareNextTurnContext, signal?: AbortSignal) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  /** Default `"one-at-a-time"`. */
  steeringMode?: QueueMode;
  /** Default `"one-at-a-time"`. */
  followUpMode?: QueueMode;
  sessionId?: string;
  thinkingBudgets?: ThinkingBudgets;
  /** Default `"auto"`. */
  transport?: Transport;
  maxRetryDelayMs?: number;
  /** Default `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  /** Merged field by field over `DEFAULT_AGENT_IDENTITY`; `{ attribution: null }` sends no attribution. */
  identity?: ClientIdentity;
}

/**
 * A frozen view of an agent's state (`agent.getSnapshot()`), for UI frameworks: it keeps its
 * identity until the state changes, and `messages` keeps its identity until the transcript changes.
 */
export interface AgentSnapshot {
  readonly systemPrompt: string;
  readonly model: Model<any>;
  readonly thinkingLevel: ThinkingLevel;
  readonly tools: readonly AgentTool<any>[];
  readonly messages: readonly AgentMessage[];
  readonly isStreaming: boolean;
  readonly streamingMessage?: AgentMessage;
  readonly pendingToolCalls: ReadonlySet<string>;
  readonly errorMessage?: string;
}

/**
 * `prompt`'s overloads, and the members defined in JS (option accessors, listeners,
 * snapshots), merged into the `Agent` class that wasm-bindgen declares.
 */
export interface Agent {
  /** Starts a run with one message or a batch of messages. */
  prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  /** Starts a run with a user message made of `input` and optional images. */
  prompt(input: string, images?: ImageContent[]): Promise<void>;
  afterToolCall: AgentOptions["afterToolCall"];
  beforeToolCall: AgentOptions["beforeToolCall"];
  convertToLlm: NonNullable<AgentOptions["convertToLlm"]>;
  finishTurn: AgentOptions["finishTurn"];
  getApiKey: AgentOptions["getApiKey"];
  identity: AgentOptions["identity"];
  maxRetryDelayMs: AgentOptions["maxRetryDelayMs"];
  onPayload: AgentOptions["onPayload"];
  onProviderStreamEvent: AgentOptions["onProviderStreamEvent"];
  onResponse: AgentOptions["onResponse"];
  prepareNextTurn: AgentOptions["prepareNextTurn"];
  prepareNextTurnWithContext: AgentOptions["prepareNextTurnWithContext"];
  prepareRequest: AgentOptions["prepareRequest"];
  sessionId: AgentOptions["sessionId"];
  streamFunction: StreamFn;
  thinkingBudgets: AgentOptions["thinkingBudgets"];
  toolExecution: ToolExecutionMode;
  transformContext: AgentOptions["transformContext"];
  transport: Transport;
  /**
   * Adds a listener, called with every event and the run's `AbortSignal`, awaited in
   * subscription order. With `{ deltas: false }` it is not called for the stream's per-token
   * events (`message_update` of a `text_delta`, `thinking_delta` or `toolcall_delta`), whose text
   * `state.streamingMessage` holds. Returns a function that removes it.
   */
  subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void, options?: { deltas?: boolean }): () => void;
  /**
   * A frozen view of the state for UI frameworks. It keeps its identity until the state
   * changes; its `messages` array keeps its identity until the transcript changes, and
   * message objects are the transcript's own.
   */
  getSnapshot(): AgentSnapshot;
  /**
   * Calls `listener` after state changes, at any time (not only during a run). Changes are
   * coalesced to one call per animation frame (or per macrotask where there are no frames);
   * pass `{ coalesce: false }` to be called synchronously on every change. Returns an
   * unsubscribe function.
   */
  subscribeState(listener: () => void, options?: { coalesce?: boolean }): () => boolean;
}

/** The agent loop's request identity: attribution to pi. `AgentOptions.identity` overrides it field by field. */
export declare const DEFAULT_AGENT_IDENTITY: ClientIdentity;
"#;

#[wasm_bindgen(typescript_custom_section)]
const PROXY: &str = r#"
// ---- streamProxy ---------------------------------------------------------------

/** Events a proxy server sends: `AssistantMessageEvent`s without `partial`, rebuilt client-side. */
export type ProxyAssistantMessageEvent =
  | { type: "start" }
  | { type: "text_start"; contentIndex: number }
  | { type: "text_delta"; contentIndex: number; delta: string }
  | { type: "text_end"; contentIndex: number; contentSignature?: string }
  | { type: "thinking_start"; contentIndex: number }
  | { type: "thinking_delta"; contentIndex: number; delta: string }
  | { type: "thinking_end"; contentIndex: number; contentSignature?: string }
  | { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
  | { type: "toolcall_delta"; contentIndex: number; delta: string }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall }
  | {
      type: "done";
      reason: Extract<StopReason, "stop" | "length" | "toolUse">;
      usage: AssistantMessage["usage"];
      providerThinkingLevel?: string;
    }
  | {
      type: "error";
      reason: Extract<StopReason, "aborted" | "error">;
      errorMessage?: string;
      usage: AssistantMessage["usage"];
      providerThinkingLevel?: string;
    };

/** Options of `streamProxy`: the serializable stream options plus the proxy's address and token. */
export interface ProxyStreamOptions extends Pick<SimpleStreamOptions, "temperature" | "samplingParams" | "maxTokens" | "reasoning" | "cacheRetention" | "sessionId" | "disableContinuation" | "headers" | "metadata" | "transport" | "thinkingBudgets" | "maxRetryDelayMs"> {
  /** Aborts the proxy request. */
  signal?: AbortSignal;
  /** Sent as `Authorization: Bearer <authToken>`. */
  authToken: string;
  /** The proxy's base URL; requests go to `${proxyUrl}/api/stream`. */
  proxyUrl: string;
}
"#;
