// Tools: TypeBox schemas (params inferred from the schema), plain JSON Schemas, generic helpers,
// and runToolCall.
import { Type } from "typebox";
import {
  runToolCall,
  type AgentContext,
  type AgentTool,
  type AgentToolCall,
  type AgentToolCallOutcome,
  type AgentToolResult,
  type AgentToolUpdateCallback,
  type AssistantMessage,
  type JsonValue,
  type Static,
  type TSchema,
  type Tool,
} from "pi-agent-wasm";

// ---- TypeBox -------------------------------------------------------------------

const counterParams = Type.Object({
  count: Type.Number(),
  label: Type.Optional(Type.String()),
  tags: Type.Array(Type.String()),
  mode: Type.Union([Type.Literal("add"), Type.Literal("sub")]),
});

export const counter: AgentTool<typeof counterParams, { total: number }> = {
  name: "counter",
  label: "Counter",
  description: "Counts",
  parameters: counterParams,
  executionMode: "sequential",
  replay: "safe",
  prepareArguments: (args) => {
    const raw = (args ?? {}) as { count?: number };
    return { count: raw.count ?? 0, tags: [], mode: "add" };
  },
  execute: async (toolCallId, params, signal, onUpdate) => {
    const count: number = params.count; // a number, from the schema
    const doubled = params.count * 2;
    const label: string | undefined = params.label;
    const tags: string[] = params.tags;
    const mode: "add" | "sub" = params.mode;
    if (signal?.aborted) throw new Error("aborted");
    onUpdate?.({ content: [{ type: "text", text: `working on ${toolCallId}` }], details: { total: 0 } });
    return {
      content: [{ type: "text", text: `${label ?? "count"}: ${doubled} ${tags.join(",")} ${mode}` }],
      details: { total: count },
      structuredContent: { total: count },
      terminate: false,
    };
  },
};

// The reference README's tool, with its schema type spelled out.
const readFileParams = Type.Object({ path: Type.String({ description: "File path" }) });
declare function readFile(path: string): Promise<string>;
export const readFileTool: AgentTool<typeof readFileParams> = {
  name: "read_file",
  label: "Read File",
  description: "Read a file's contents",
  parameters: readFileParams,
  executionMode: "sequential",
  execute: async (toolCallId, params, signal, onUpdate) => {
    const content = await readFile(params.path);
    onUpdate?.({ content: [{ type: "text", text: "Reading..." }], details: {} });
    return {
      content: [{ type: "text", text: content }],
      details: { path: params.path, size: content.length },
    };
  },
};

// Failing by throwing, or by returning `isError: true`.
export const failing: AgentTool<typeof readFileParams> = {
  name: "fail",
  label: "Fail",
  description: "Fails",
  parameters: readFileParams,
  outputSchema: Type.Object({ ok: Type.Boolean() }),
  execute: async (_id, params) => {
    if (params.path === "") throw new Error(`File not found: ${params.path}`);
    return { content: [{ type: "text", text: "no" }], details: undefined, isError: true };
  },
};

// ---- Plain JSON Schema ---------------------------------------------------------

const plainParams = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer" } },
  required: ["city"],
  additionalProperties: false,
} as const;

export const weather: AgentTool<typeof plainParams> = {
  name: "weather",
  label: "Weather",
  description: "Forecast",
  parameters: plainParams,
  execute: async (_id, params) => {
    const city: string = params.city; // inferred from the `as const` JSON Schema (with TypeBox installed)
    const days: number | undefined = params.days;
    return { content: [{ type: "text", text: `${city} ${days ?? 1}` }], details: null };
  },
};

// A JSON Schema object that is not `as const`: params are opaque (`unknown`), as in the reference.
export const untypedSchema: AgentTool = {
  name: "echo",
  label: "Echo",
  description: "Echoes",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: async (_id, params) => {
    const text = (params as { text?: string }).text ?? "";
    return { content: [{ type: "text", text }], details: { echoed: text } };
  },
};

// ---- Generic helpers ---------------------------------------------------------------

function defineTool<P extends TSchema, D = JsonValue | undefined>(tool: AgentTool<P, D>): AgentTool<P, D> {
  return tool;
}

export const inferred = defineTool({
  name: "inferred",
  label: "Inferred",
  description: "Parameters inferred through a generic helper",
  parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
  execute: async (_id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
});
type Sum = Static<typeof inferred.parameters>;
export const sum: Sum = { a: 1, b: 2 };

const declaration: Tool = { name: counter.name, description: counter.description, parameters: counter.parameters };
export const tools: AgentTool<any>[] = [counter, readFileTool, failing, weather, untypedSchema, inferred];
export const declared: Tool[] = [declaration, { name: "x", description: "", parameters: {}, constrainedSampling: { type: "json_schema", strict: "prefer" } }];

export const progress: AgentToolUpdateCallback<{ total: number }> = (partial: AgentToolResult<{ total: number }>) => {
  console.log(partial.details.total);
};

// ---- runToolCall -------------------------------------------------------------------

declare const assistantMessage: AssistantMessage;
const context: AgentContext = { messages: [], tools };
const call: AgentToolCall = { type: "toolCall", id: "call-1", name: "counter", arguments: { count: 2, tags: [], mode: "add" } };

export async function callNested(signal: AbortSignal): Promise<number> {
  const outcome: AgentToolCallOutcome = await runToolCall(call, {
    tools,
    assistantMessage,
    context,
    signal,
    onUpdate: async (partial) => {
      console.log(partial.content.length);
    },
    beforeToolCall: async ({ toolCall }) => (toolCall.name === "bash" ? { block: true, reason: "no shell" } : undefined),
    afterToolCall: async ({ isError }) => (isError ? { terminate: true } : undefined),
  });
  const ms: number | undefined = outcome.durationMs;
  return outcome.isError ? -1 : (ms ?? 0);
}
