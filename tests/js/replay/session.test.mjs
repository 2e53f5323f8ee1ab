// A run restored by pi-agent-wasm/session replays: the restored transcript, the calls resume()
// runs outside any run (with their approval), the results it appends, and the continue() after.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, MODEL, PKG, ok, recordAndReplay, scripted, sleep, textOf, tool, until } from "./support.mjs";

const { attachSession, memoryStore } = await import(new URL("session/index.js", PKG));

test("resume() after a reload, with an approval asked again, replays", async () => {
  const store = memoryStore();
  const tools = () => [tool("fetch_page", async (id, args, signal, onUpdate) => (onUpdate?.(ok("loading")), await sleep(1), ok("the page")))];
  let asked = 0;
  const first = new Agent({
    initialState: { systemPrompt: "sys", model: MODEL, tools: tools() },
    streamFn: scripted([{ text: "fetching", calls: [{ id: "f1", name: "fetch_page", args: { path: "/a" } }, { id: "f2", name: "fetch_page", args: { path: "/b" } }] }]),
    beforeToolCall: () => (asked++, new Promise(() => {})),
  });
  const s1 = await attachSession(first, { id: "r1", store, flushMs: 1, tabs: false });
  first.prompt("fetch both");
  await until(() => asked === 1);
  await s1.flush();

  // The page reloads: a new agent, recorded from the start, restores the session and resumes.
  let session;
  const { a, log } = await recordAndReplay({
    stream: scripted([{ text: "both fetched" }]),
    tools: tools(),
    agentOptions: { beforeToolCall: async ({ toolCall }) => (await sleep(2), toolCall.id === "f2" ? { block: true, reason: "denied by user" } : undefined) },
    attach: async (a) => {
      session = await attachSession(a, { id: "r1", store, tabs: false });
      assert.deepEqual(session.pendingCalls.map((p) => p.toolCall.id), ["f1", "f2"]);
    },
    drive: () => session.resume(),
  });
  assert.deepEqual(a.state.messages.filter((m) => m.role === "toolResult").map(textOf), ["the page", "denied by user"]);
  // The restore (the transcript, the queues), each call resume() ran and the result it appended, the run after.
  assert.deepEqual(log.inputs.map((x) => x.op), ["messages", "clearAllQueues", "runToolCall", "messages", "runToolCall", "messages", "continue"]);
});
