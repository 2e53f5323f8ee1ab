// JSON types and ToolResultMessage's `details` typing.
import type { AgentToolResult, JsonObject, JsonValue, ToolResultMessage } from "pi-agent-wasm";

export const value: JsonValue = { a: [1, "two", null, { b: true }] };
export const object: JsonObject = { nested: { list: [1, 2, 3] } };

type Details = { path: string; size?: number; lines: number[] };
export const result: ToolResultMessage<Details> = {
  role: "toolResult",
  toolCallId: "c1",
  toolName: "read_file",
  content: [{ type: "text", text: "..." }],
  details: { path: "a.txt", lines: [1, 2] },
  isError: false,
  timestamp: 0,
};
export const path: string | undefined = result.details?.path;

// Values that are not JSON (functions, Dates, `unknown`) make the message type `never`.
type NotJson = ToolResultMessage<{ when: Date }>;
export const notJson: [NotJson] extends [never] ? true : false = true;
type Opaque = ToolResultMessage<unknown>;
export const opaque: [Opaque] extends [never] ? true : false = true;
type Plain = ToolResultMessage;
export const plain: Plain["details"] = { any: ["json"] };

export const toolResult: AgentToolResult = { content: [], details: undefined };
export const withDetails: AgentToolResult<{ n: number }> = { content: [{ type: "image", data: "", mimeType: "image/png" }], details: { n: 1 } };
