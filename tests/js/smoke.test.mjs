// Smoke test of the final, optimised pkg/: it loads (a broken wasm-opt fails
// here first), exports exactly the reference's runtime names plus ours, and runs
// one prompt end to end.
import assert from "node:assert/strict";
import { test } from "node:test";

const pkg = await import("../../pkg/index.js");
const reference = await import("@earendil-works/pi-agent-core");

test("pkg/ exports every runtime name of pi-agent-core 1.4.0", () => {
  for (const name of Object.keys(reference)) assert.ok(name in pkg, `missing export ${name}`);
  for (const name of ["EventStream", "AssistantMessageEventStream", "createAssistantMessageEventStream"]) {
    assert.equal(typeof pkg[name], "function", name);
  }
  assert.deepEqual(pkg.DEFAULT_AGENT_IDENTITY, reference.DEFAULT_AGENT_IDENTITY);
  assert.ok(!("initSync" in pkg), "initialisation is internal");
});

test("an Agent answers a prompt through a scripted stream function", async () => {
  const { Agent, createAssistantMessageEventStream } = pkg;
  const agent = new Agent({
    initialState: { systemPrompt: "You are terse." },
    streamFn: (model, context) => {
      const stream = createAssistantMessageEventStream();
      const message = {
        role: "assistant",
        content: [{ type: "text", text: `seen ${context.messages.length}` }],
        api: model.api,
        provider: model.provider,
        model: model.id,
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: Date.now(),
      };
      queueMicrotask(() => stream.push({ type: "done", reason: "stop", message }));
      return stream;
    },
  });
  const types = [];
  agent.subscribe((event) => types.push(event.type));
  await agent.prompt("hello");
  assert.deepEqual(types, [
    "agent_start", "turn_start", "message_start", "message_end",
    "message_start", "message_end", "turn_end", "agent_end",
  ]);
  const last = agent.state.messages.at(-1);
  assert.equal(last.content[0].text, "seen 2");
  assert.equal(last.thinkingLevel, "off");
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.state.systemPrompt, "You are terse.");
});

test("a bad option is a TypeError naming it, not a crash", () => {
  assert.throws(() => new pkg.Agent({ streamFn: 42 }), { name: "TypeError", message: /streamFn/ });
  assert.throws(() => new pkg.Agent({ streamFn: () => {}, beforeToolCall: "yes" }), { name: "TypeError", message: /beforeToolCall/ });
  assert.throws(() => new pkg.Agent({ streamFn: () => {}, initialState: { messages: 3 } }), { name: "TypeError", message: /messages/ });
  // The module still works afterwards.
  assert.ok(new pkg.Agent({ streamFn: () => {} }));
});
