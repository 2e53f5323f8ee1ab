// An app written for pi-agent-core 1.6.0: tools typed with `@earendil-works/pi-schema`'s builders and
// with TypeBox, `AgentToolParams`, an `outputSchema` that is any JSON Schema object, `streamProxy` with
// `disableContinuation`. Compiled against ours (tests/types/tsconfig.json) and against 1.6.0 itself
// (tsconfig.v16.json, through v16-shim.d.ts), so it only asks for what 1.6.0 allows.
import { Type } from "typebox";
import { num, obj, opt, str, type Static as SchemaStatic } from "@earendil-works/pi-schema";
import {
  Agent,
  streamProxy,
  type AgentTool,
  type AgentToolParams,
  type AgentToolResult,
  type Model,
  type ProxyStreamOptions,
  type TranscriptContext,
} from "pi-agent-wasm";

// ---- a tool whose parameters come from pi-schema's builders ------------------------------------------

const moveParams = obj({ from: str(), to: str(), overwrite: opt(num()) });
type MoveArgs = SchemaStatic<typeof moveParams>;

export const move: AgentTool<typeof moveParams, { moved: boolean }> = {
  name: "move",
  label: "Move",
  description: "Moves a file",
  parameters: moveParams,
  outputSchema: obj({ moved: str() }),
  prepareArguments: (raw) => raw as MoveArgs,
  execute: async (_id, params, signal) => {
    const from: string = params.from;
    const to: string = params.to;
    const overwrite: number | undefined = params.overwrite;
    // @ts-expect-error -- the arguments are typed from the builders: no such field
    params.missing;
    signal?.throwIfAborted();
    return { content: [{ type: "text", text: `${from} -> ${to} ${overwrite ?? 0}` }], details: { moved: true } };
  },
};

// `AgentToolParams` names the arguments type of a schema.
export const args: AgentToolParams<typeof moveParams> = { from: "a", to: "b" };
// @ts-expect-error -- `from` must be a string
export const badArgs: AgentToolParams<typeof moveParams> = { from: 1, to: "b" };

// ---- a TypeBox tool, as 1.4's -------------------------------------------------------------------------

const countParams = Type.Object({ count: Type.Number(), tags: Type.Array(Type.String()) });

export const counter: AgentTool<typeof countParams> = {
  name: "counter",
  label: "Counter",
  description: "Counts",
  parameters: countParams,
  outputSchema: { type: "object", properties: { total: { type: "number" } } },
  execute: async (_id, { count, tags }) => ({ content: [{ type: "text", text: `${count} ${tags.join(",")}` }], details: null }),
};
export const countArgs: AgentToolParams<typeof countParams> = { count: 1, tags: [] };

// ---- a generic helper over any schema object, as 1.6 allows ---------------------------------------------

function defineTool<P extends object, D>(tool: AgentTool<P, D>): AgentTool<P, D> {
  return tool;
}

export const sum = defineTool({
  name: "sum",
  label: "Sum",
  description: "Adds",
  parameters: obj({ a: num(), b: num() }),
  execute: async (_id, { a, b }): Promise<AgentToolResult<{ total: number }>> => ({ content: [{ type: "text", text: String(a + b) }], details: { total: a + b } }),
});

// `AgentTool<any>` takes any arguments.
export const loose: AgentTool<any> = {
  name: "loose",
  label: "Loose",
  description: "",
  parameters: { type: "object" },
  execute: async (_id, params) => ({ content: [{ type: "text", text: String(params.anything) }], details: undefined }),
};

export const agent = new Agent({
  initialState: { tools: [move, counter, sum, loose] },
  streamFn: (model, context, options) =>
    streamProxy(model, context, { ...options, authToken: "token", proxyUrl: "https://proxy.example", disableContinuation: true }),
});

declare const model: Model<any>;
declare const context: TranscriptContext;
export const options: ProxyStreamOptions = { authToken: "t", proxyUrl: "https://proxy.example", sessionId: "s", disableContinuation: false };
export const stream = streamProxy(model, context, options);
