// The 995 validation and coercion vectors recorded from the reference
// (tests/fixtures/schema/vectors.json, scripts/gen-schema-vectors.mjs), replayed
// through the shipped wasm: `runToolCall` with a tool whose `execute` returns
// the arguments it got. The native `cargo test` replays the same file against
// the pure Rust module with its Rust host; this run covers what only the
// package has: the JS host (the engine's RegExp, URL parser and number
// formatting), the copy of arguments across the boundary, the wasm stack budget
// and the error text the loop builds around the validator's lines.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const { runToolCall } = await import("../../pkg/index.js");
const vectors = JSON.parse(readFileSync(new URL("../fixtures/schema/vectors.json", import.meta.url), "utf8"));

/** The schema as the reference saw it: TypeBox's hidden kind marks as non-enumerable keys. */
function liveSchema(vector) {
  const schema = structuredClone(vector.schema);
  for (const [path, marks] of vector.hidden ?? []) {
    let node = schema;
    for (const key of path) node = node?.[key];
    if (node === null || typeof node !== "object") continue;
    for (const [key, value] of Object.entries(marks)) {
      Object.defineProperty(node, key, { value, enumerable: false, configurable: true, writable: true });
    }
  }
  if (vector.legacy && schema !== null && typeof schema === "object") {
    Object.defineProperty(schema, Symbol.for("TypeBox.Kind"), { value: "Object", enumerable: false });
  }
  return schema;
}

async function replay(vector) {
  let received;
  const tool = {
    name: "t",
    label: "t",
    description: "vector",
    parameters: liveSchema(vector),
    execute: async (_id, args) => {
      received = args;
      return { content: [{ type: "text", text: "ran" }], details: {} };
    },
  };
  const toolCall = { type: "toolCall", id: "call_1", name: "t", arguments: structuredClone(vector.input) };
  const outcome = await runToolCall(toolCall, { tools: [tool] });
  const text = outcome.result?.content?.[0]?.text;
  if ("ok" in vector) {
    assert.equal(outcome.isError, false, `expected success, got: ${text}`);
    // JSON has no -0 (the reference coerces "-0" to -0 too; the fixture records 0).
    assert.deepStrictEqual(JSON.parse(JSON.stringify(received)), vector.ok);
  } else if ("lines" in vector) {
    assert.equal(outcome.isError, true);
    const expected = `Validation failed for tool "t":\n${vector.lines.join("\n")}\n\nReceived arguments:\n${JSON.stringify(vector.input, null, 2)}`;
    assert.equal(text, expected);
  } else {
    assert.equal(outcome.isError, true);
    assert.equal(text, vector.error);
  }
}

test(`schema vectors through the package (${vectors.length}, known divergences skipped)`, async () => {
  const failures = [];
  let replayed = 0;
  for (const vector of vectors) {
    if (vector.diverges) continue;
    replayed++;
    try {
      await replay(vector);
    } catch (error) {
      failures.push(`${vector.name}: ${error.message.split("\n").slice(0, 6).join(" | ")}`);
    }
  }
  assert.ok(replayed > 900, `only ${replayed} vectors replayed`);
  assert.deepEqual(failures, []);
});
