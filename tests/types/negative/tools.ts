// Tool parameters are typed from their schema: wrong uses do not compile.
import { Type } from "typebox";
import type { AgentTool, AgentToolResult } from "pi-agent-wasm";

const params = Type.Object({ count: Type.Number(), label: Type.Optional(Type.String()) });

export const wrongUse: AgentTool<typeof params> = {
  name: "counter",
  label: "Counter",
  description: "",
  parameters: params,
  execute: async (_id, p) => {
    // @ts-expect-error -- `count` is a number
    const asString: string = p.count;
    // @ts-expect-error -- not in the schema
    console.log(p.missing);
    // @ts-expect-error -- optional
    const label: string = p.label;
    return { content: [], details: { asString, label } };
  },
};

export const wrongParamType: AgentTool<typeof params> = {
  name: "counter",
  label: "Counter",
  description: "",
  parameters: params,
  // @ts-expect-error -- `count` is declared as a number in the schema
  execute: async (_id: string, p: { count: string }) => ({ content: [], details: p.count }),
};

export const wrongSchema: AgentTool<typeof params> = {
  name: "counter",
  label: "Counter",
  description: "",
  // @ts-expect-error -- not the declared schema
  parameters: Type.Object({ other: Type.String() }),
  execute: async () => ({ content: [], details: null }),
};

const plain = { type: "object", properties: { days: { type: "integer" } }, required: ["days"] } as const;
export const plainTool: AgentTool<typeof plain> = {
  name: "plain",
  label: "Plain",
  description: "",
  parameters: plain,
  execute: async (_id, p) => {
    // @ts-expect-error -- `days` is a number
    p.days.toUpperCase();
    return { content: [], details: null };
  },
};

export const missingDetails: AgentTool<typeof params> = {
  name: "x",
  label: "X",
  description: "",
  parameters: params,
  // @ts-expect-error -- `details` is required in a result
  execute: async () => ({ content: [{ type: "text", text: "ok" }] }),
};

// @ts-expect-error -- `label` is required
export const missingLabel: AgentTool<typeof params> = { name: "x", description: "", parameters: params, execute: async () => ({ content: [], details: 1 }) };

// @ts-expect-error -- content blocks of a result are text or images
export const badContent: AgentToolResult = { content: [{ type: "thinking", thinking: "" }], details: undefined };

// @ts-expect-error -- typed details
export const badDetails: AgentToolResult<{ n: number }> = { content: [], details: { n: "1" } };

export const badMode: AgentTool<typeof params> = {
  name: "x",
  label: "X",
  description: "",
  parameters: params,
  // @ts-expect-error -- "sequential" | "parallel"
  executionMode: "serial",
  execute: async () => ({ content: [], details: 1 }),
};
