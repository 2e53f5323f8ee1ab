// pi-agent-wasm/session on a WorkerAgent in Node, on pkg/: the WorkerAgent and the agent it drives
// (serveAgent) talk over a MessageChannel in one process, the session keeps a memory store. The
// browser tests (tests/browser/session/) do the same with a real Worker and real reloads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { MODEL, channelWorker, ok, sleep, textOf, tool, usage } from "../support/fixtures.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
// A missing build fails the tests instead of skipping them.
if (!existsSync(new URL("worker/index.js", PKG))) throw new Error("pkg/ has no worker.js (run node scripts/build.mjs)");
const { Agent, createAssistantMessageEventStream } = await import(new URL("index.js", PKG));
const { attachSession, memoryStore } = await import(new URL("session/index.js", PKG));
const { WorkerAgent } = await import(new URL("worker/index.js", PKG));
const { serveAgent } = await import(new URL("worker/host.js", PKG));


/** Runs in "the worker": a prompt starting with a tool's name calls it; after a tool result, "after <result>". */
function streamFn(model, context) {
  const s = createAssistantMessageEventStream();
  const last = context.messages.at(-1);
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 1 };
  (async () => {
    await sleep(0);
    s.push({ type: "start", partial });
    const name = last.role === "user" ? textOf(last).split(" ")[0] : "";
    if (name === "lookup" || name === "fetch") {
      const block = { type: "toolCall", id: `${name}-1`, name, arguments: {} };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: 0, partial });
      s.push({ type: "toolcall_end", contentIndex: 0, toolCall: block, partial });
      partial.stopReason = "toolUse";
    } else {
      const text = last.role === "toolResult" ? `after ${textOf(last)}` : `ok: ${textOf(last)}`;
      partial.content.push({ type: "text", text });
      s.push({ type: "text_start", contentIndex: 0, partial });
      s.push({ type: "text_delta", contentIndex: 0, delta: text, partial });
      s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    }
    s.push({ type: "done", reason: partial.stopReason, message: partial });
  })();
  return s;
}

/** A WorkerAgent whose "worker" is the other end of a MessageChannel, served here; `lookup` is a worker tool. */
function workerAgent(options) {
  const spawn = channelWorker(serveAgent, { streamFn, tools: [tool("lookup", async () => ok("found in the worker"))] });
  return new WorkerAgent({ initialState: { model: MODEL, tools: [tool("fetch", async () => ok("page"))] }, worker: spawn, ...options });
}

const records = async (store, id) => (await store.load(id)).split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l).t);

test("WorkerAgent: an approval of a worker tool waits again after restore; resume() runs it in the worker", async () => {
  const store = memoryStore();
  let asked = 0;
  const approve = () => (asked++, new Promise(() => {}));
  const a = workerAgent({ beforeToolCall: approve });
  await attachSession(a, { id: "w1", store, flushMs: 5, tabs: false });
  // The app reads and sets its own hook; what the worker calls is the session's wrapper of it.
  assert.equal(a.beforeToolCall, approve);
  a.prompt("lookup something");
  while (asked === 0) await sleep(1);
  a.steer({ role: "user", content: [{ type: "text", text: "and hurry" }], timestamp: 7 });
  await sleep(20);
  assert.ok((await records(store, "w1")).includes("tw"), "the call waiting for approval is in the log");

  const seen = [];
  const b = workerAgent({ beforeToolCall: async ({ toolCall }) => (seen.push(toolCall.id), undefined) });
  const session = await attachSession(b, { id: "w1", store, tabs: false });
  assert.deepEqual(session.pendingApprovals.map((p) => p.toolCall.id), ["lookup-1"]);
  assert.deepEqual(b.peekQueuedMessages().map(textOf), ["and hurry"]);
  await session.resume();
  assert.deepEqual(seen, ["lookup-1"], "beforeToolCall is asked again, in the page");
  const shown = (agent) => agent.state.messages.map((m) => `${m.role}:${textOf(m)}`);
  // The worker's tool was declared to the model by a system message of the first run.
  assert.deepEqual(shown(a), ["system:", "system:", "user:lookup something", "assistant:"]);
  assert.deepEqual(shown(b), [...shown(a), "toolResult:found in the worker", "user:and hurry", "assistant:ok: and hurry"]);
  a.terminate();
  b.terminate();
});

test("WorkerAgent: a hook set after attaching is wrapped; detach() unwraps it; the same as an Agent", async () => {
  for (const make of [workerAgent, (o) => new Agent({ initialState: { model: MODEL, tools: [tool("fetch", async () => ok("page"))] }, streamFn, ...o })]) {
    const store = memoryStore();
    const agent = make({});
    const session = await attachSession(agent, { id: "w2", store, flushMs: 1, tabs: false });
    const hook = async () => undefined;
    agent.beforeToolCall = hook;
    assert.equal(agent.beforeToolCall, hook);
    await agent.prompt("fetch it");
    await session.flush();
    const logged = await records(store, "w2");
    assert.deepEqual(logged.filter((t) => t === "tw" || t === "tg"), ["tw", "tg"]);
    await session.detach();
    assert.equal(agent.beforeToolCall, hook);
    await agent.prompt("fetch again");
    assert.deepEqual(await records(store, "w2"), logged, "nothing is written after detach()");
    assert.equal(textOf(agent.state.messages.at(-1)), "after page");
    agent.terminate?.();
  }
});

test("WorkerAgent: a worker that ends during resume() gives the call one error result; the run goes on in a fresh worker", async () => {
  const store = memoryStore();
  let asked = 0;
  const a = workerAgent({ beforeToolCall: () => (asked++, new Promise(() => {})) });
  await attachSession(a, { id: "w3", store, flushMs: 5, tabs: false });
  a.prompt("fetch it");
  while (asked === 0) await sleep(1);
  await sleep(20);
  let approvals = 0;
  const b = workerAgent({ beforeToolCall: () => (approvals++, new Promise(() => {})) });
  const session = await attachSession(b, { id: "w3", store, tabs: false });
  const resumed = session.resume();
  while (approvals === 0) await sleep(1);
  b.terminate();
  await resumed;
  const results = b.state.messages.filter((m) => m.role === "toolResult");
  assert.equal(results.length, 1);
  assert.equal(results[0].isError, true);
  assert.match(textOf(results[0]), /terminated/);
  assert.equal(textOf(b.state.messages.at(-1)), `after ${textOf(results[0])}`);
  a.terminate();
  b.terminate();
});

test("WorkerAgent: a fresh worker after terminate() is sent the transcript whole (it knows none of its objects)", async () => {
  const agent = workerAgent({});
  await agent.prompt("one");
  agent.terminate();
  await agent.prompt("two");
  assert.deepEqual(agent.state.messages.map((m) => `${m.role}:${textOf(m)}`), ["system:", "system:", "user:one", "assistant:ok: one", "user:two", "assistant:ok: two"]);
  agent.terminate();
});

test("attachSession refuses an object that is not an Agent or a WorkerAgent", async () => {
  const fake = { state: { messages: [] }, subscribe: () => () => true, subscribeState: () => () => true, getSnapshot: () => ({}) };
  await assert.rejects(attachSession(fake, { id: "w4", store: memoryStore(), tabs: false }), {
    name: "TypeError",
    message: "attachSession(agent, options): agent must be an Agent or a WorkerAgent of pi-agent-wasm",
  });
});
