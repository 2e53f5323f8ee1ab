// pi-agent-wasm/session in Node, on pkg/ (memory store; the browser tests use IndexedDB across
// real reloads): restore mid-stream, mid-tool, during an approval and with queued steering; a
// store that throws. Replay has its own tests (tests/js/replay/).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";

const PKG = new URL("../../../pkg/", import.meta.url);
const built = existsSync(new URL("session/index.js", PKG));
// A missing build fails the tests instead of skipping them.
if (!built) throw new Error("pkg/ has no session.js (run node scripts/build.mjs)");
const { Agent, createAssistantMessageEventStream } = built ? await import(new URL("index.js", PKG)) : {};
const { attachSession, memoryStore, INTERRUPTED_STREAM, INTERRUPTED_TOOL } = built ? await import(new URL("session/index.js", PKG)) : {};

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A stream function answering from `script` (one entry per request: { text, calls, hold }); `hold`
 * is a promise the stream waits on after its first half (a page that goes away mid-stream).
 */
function scripted(script) {
  let n = 0;
  const fn = (model, context, options) => {
    const spec = script[n++] ?? { text: "done" };
    fn.contexts.push(context.messages.slice());
    const s = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 10 + n };
    (async () => {
      await sleep(0);
      s.push({ type: "start", partial });
      const text = spec.text ?? "";
      if (text) {
        partial.content.push({ type: "text", text: "" });
        s.push({ type: "text_start", contentIndex: 0, partial });
        for (let i = 0; i < text.length; i++) {
          if (spec.hold && i === Math.floor(text.length / 2)) await spec.hold;
          if (options?.signal?.aborted) {
            partial.stopReason = "aborted";
            return s.push({ type: "error", reason: "aborted", error: { ...partial, errorMessage: "Request was aborted" } });
          }
          partial.content[0].text += text[i];
          s.push({ type: "text_delta", contentIndex: 0, delta: text[i], partial });
          if (i % 4 === 0) await sleep(0);
        }
        s.push({ type: "text_end", contentIndex: 0, content: text, partial });
      }
      for (const c of spec.calls ?? []) {
        const i = partial.content.length;
        const block = { type: "toolCall", id: c.id, name: c.name, arguments: {} };
        partial.content.push(block);
        s.push({ type: "toolcall_start", contentIndex: i, partial });
        block.arguments = c.args ?? {};
        s.push({ type: "toolcall_delta", contentIndex: i, delta: JSON.stringify(c.args ?? {}), partial });
        s.push({ type: "toolcall_end", contentIndex: i, toolCall: block, partial });
      }
      if (spec.calls?.length) partial.stopReason = "toolUse";
      // A provider whose finished message is not what its deltas streamed.
      const message = spec.final === undefined ? partial : { ...partial, content: [{ type: "text", text: spec.final }] };
      s.push({ type: "done", reason: partial.stopReason, message });
    })();
    return s;
  };
  fn.contexts = [];
  return fn;
}

const textOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));
const noStream = () => {
  throw new Error("this agent is not expected to stream");
};
const tool = (name, execute, extra = {}) => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute, ...extra });
const ok = (text) => ({ content: [{ type: "text", text }], details: {} });

test("an answer cut mid-stream comes back aborted and interrupted; the next prompt works", async () => {
  const store = memoryStore();
  let release;
  const hold = new Promise((r) => (release = r));
  const a = new Agent({ initialState: { systemPrompt: "sys", model: MODEL }, streamFn: scripted([{ text: "Hello there, world!", hold }]) });
  await attachSession(a, { id: "s1", store, flushMs: 5, tabs: false });
  const run = a.prompt("hi");
  while (!a.state.streamingMessage || textOf(a.state.streamingMessage).length < 5) await sleep(1);
  await sleep(20); // the batch reaches the store

  const b = new Agent({ initialState: { systemPrompt: "sys", model: MODEL }, streamFn: scripted([{ text: "again" }]) });
  const session = await attachSession(b, { id: "s1", store, tabs: false });
  assert.equal(session.restored, true);
  assert.equal(session.interrupted, true);
  const msgs = b.state.messages;
  assert.deepEqual(msgs.map((m) => m.role), ["system", "user", "assistant"]);
  const cut = msgs[2];
  assert.equal(cut.stopReason, "aborted");
  assert.equal(cut.errorMessage, INTERRUPTED_STREAM);
  assert.ok("Hello there, world!".startsWith(textOf(cut)) && textOf(cut).length >= 5, textOf(cut));
  await b.prompt("continue");
  assert.equal(textOf(b.state.messages.at(-1)), "again");
  release();
  a.abort();
  await run;
});

test("mid-tool: a running call gets one interrupted result; a replay-safe one runs again on resume()", async () => {
  const store = memoryStore();
  let hang;
  const tools = [
    tool("slow", () => new Promise((r) => (hang = r))),
    tool("safe", async () => ok("safe ran"), { replay: "safe" }),
  ];
  const calls = [{ id: "c1", name: "slow" }, { id: "c2", name: "safe" }];
  const a = new Agent({ initialState: { model: MODEL, tools }, streamFn: scripted([{ calls }]) });
  let safeStarted = 0;
  tools[1].execute = async () => (safeStarted++, new Promise(() => {}));
  await attachSession(a, { id: "s2", store, flushMs: 5, tabs: false });
  a.prompt("go");
  while (!hang || safeStarted === 0) await sleep(1);
  await sleep(20);

  let safeRuns = 0;
  const tools2 = [tool("slow", async () => ok("slow again")), tool("safe", async () => (safeRuns++, ok("safe ran")), { replay: "safe" })];
  const b = new Agent({ initialState: { model: MODEL, tools: tools2 }, streamFn: scripted([{ text: "after tools" }]) });
  const session = await attachSession(b, { id: "s2", store, tabs: false });
  const results = b.state.messages.filter((m) => m.role === "toolResult");
  assert.equal(results.length, 1);
  assert.equal(results[0].toolCallId, "c1");
  assert.equal(results[0].isError, true);
  assert.equal(textOf(results[0]), INTERRUPTED_TOOL);
  assert.deepEqual(session.pendingCalls.map((p) => p.toolCall.id), ["c2"]);
  await session.resume();
  assert.equal(safeRuns, 1);
  const all = b.state.messages.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, m.isError]);
  assert.deepEqual(all, [["c1", true], ["c2", false]]);
  assert.equal(textOf(b.state.messages.at(-1)), "after tools");
  hang(ok("late"));
});

test("a call waiting for approval waits again after restore; queued steering is still queued", async () => {
  const store = memoryStore();
  const tools = [tool("fetch", async () => ok("page"))];
  let asked = 0;
  const a = new Agent({
    initialState: { model: MODEL, tools },
    streamFn: scripted([{ calls: [{ id: "f1", name: "fetch" }] }]),
    beforeToolCall: () => (asked++, new Promise(() => {})),
  });
  await attachSession(a, { id: "s3", store, flushMs: 5, tabs: false });
  a.prompt("fetch it");
  while (asked === 0) await sleep(1);
  const steer = { role: "user", content: [{ type: "text", text: "also say hi" }], timestamp: 77 };
  a.steer(steer);
  a.followUp({ role: "user", content: [{ type: "text", text: "then bye" }], timestamp: 78 });
  await sleep(20);

  const seen = [];
  const streamFn = scripted([{ text: "fetched" }, { text: "bye" }]);
  const b = new Agent({
    initialState: { model: MODEL, tools },
    streamFn,
    beforeToolCall: async ({ toolCall }) => (seen.push(toolCall.id), undefined),
  });
  const session = await attachSession(b, { id: "s3", store, tabs: false });
  assert.deepEqual(session.pendingApprovals.map((p) => p.toolCall.id), ["f1"]);
  assert.equal(b.hasQueuedMessages(), true);
  assert.deepEqual(b.peekQueuedMessages().map(textOf), ["also say hi"]);
  await session.resume();
  assert.deepEqual(seen, ["f1"], "beforeToolCall is asked again");
  const roles = b.state.messages.map((m) => m.role + (m.role === "user" ? ":" + textOf(m) : ""));
  assert.deepEqual(roles, ["system", "user:fetch it", "assistant", "toolResult", "user:also say hi", "assistant", "user:then bye", "assistant"]);
  assert.equal(b.hasQueuedMessages(), false);
});

test("a store that throws is reported once and the agent keeps working", async () => {
  let calls = 0;
  const store = { load: () => "", append: () => { calls++; throw new Error("QuotaExceededError"); }, clear: () => {} };
  const errors = [];
  const a = new Agent({ initialState: { model: MODEL }, streamFn: scripted([{ text: "one" }, { text: "two" }]) });
  const session = await attachSession(a, { id: "s4", store, flushMs: 1, tabs: false, onError: (e) => errors.push(e.message) });
  await a.prompt("a");
  await a.prompt("b");
  await session.flush();
  assert.deepEqual(errors, ["QuotaExceededError"]);
  assert.equal(session.error.message, "QuotaExceededError");
  assert.equal(textOf(a.state.messages.at(-1)), "two");
  assert.equal(calls, 1, "no write after the first failure");
  // A load that rejects: reported, nothing restored, the agent works.
  const bad = { load: async () => { throw new Error("blocked"); }, append: () => {}, clear: () => {} };
  const b = new Agent({ initialState: { model: MODEL }, streamFn: scripted([{ text: "fine" }]) });
  const seen = [];
  const s2 = await attachSession(b, { id: "x", store: bad, tabs: false, onError: (e) => seen.push(e.message) });
  assert.equal(s2.restored, false);
  await b.prompt("hi");
  assert.deepEqual(seen, ["blocked"]);
});

test("an answer is written once: as deltas while it streams, then only the rest of it", async () => {
  const inner = memoryStore();
  const writes = [];
  const store = { ...inner, append: (id, text) => (writes.push(text), inner.append(id, text)) };
  const text = "x".repeat(1000) + "\n\"y\"\u2028".repeat(250);
  const a = new Agent({ initialState: { model: MODEL }, streamFn: scripted([{ text }]) });
  const sa = await attachSession(a, { id: "s5", store, flushMs: 20, tabs: false });
  await a.prompt("go");
  await sa.flush();
  const b = new Agent({ initialState: { model: MODEL }, streamFn: noStream });
  const s = await attachSession(b, { id: "s5", store, tabs: false });
  assert.equal(s.restored, true);
  assert.equal(textOf(b.state.messages[1]), text);
  assert.deepEqual(b.state.messages[1], a.state.messages[1]);
  assert.ok(writes.length > 3, `the answer spans writes (${writes.length})`);
  const total = writes.join("").length;
  // The text once, raw (a quote or a newline is one character, not two), plus a record's
  // envelope per write.
  assert.ok(total < text.length + 80 * writes.length + 1000, `wrote ${total} characters in ${writes.length} writes for a ${text.length}-character answer`);
});

test("an agent whose subscribe calls the session with every delta: the same restore, mid-stream and finished", async () => {
  // As a WorkerAgent's subscribe, which takes no options.
  const everyEvent = (agent) => {
    agent.subscribe = (listener) => Agent.prototype.subscribe.call(agent, listener);
    return agent;
  };
  const text = "Streamed, then finished. ".repeat(20);
  for (const wrap of [(agent) => agent, everyEvent]) {
    const store = memoryStore();
    let release;
    const hold = new Promise((r) => (release = r));
    const a = wrap(new Agent({ initialState: { model: MODEL }, streamFn: scripted([{ text, hold }]) }));
    const sa = await attachSession(a, { id: "s7", store, flushMs: 5, tabs: false });
    const run = a.prompt("go");
    while (textOf(a.state.streamingMessage ?? { content: [] }).length < text.length / 2) await sleep(1);
    await sa.flush();
    const cut = new Agent({ initialState: { model: MODEL }, streamFn: noStream });
    await attachSession(cut, { id: "s7", store: { ...store, replace: async () => {}, append: async () => {} }, tabs: false });
    assert.equal(textOf(cut.state.messages[1]), text.slice(0, text.length / 2));
    release();
    await run;
    await sa.flush();
    const b = new Agent({ initialState: { model: MODEL }, streamFn: noStream });
    await attachSession(b, { id: "s7", store, tabs: false });
    assert.deepEqual(b.state.messages[1], a.state.messages[1]);
    assert.equal((await store.load("s7")).split(text).length, 1, "the finished answer does not repeat its text");
  }
});

test("a finished answer that is not what its deltas streamed is restored as finished", async () => {
  const store = memoryStore();
  const text = "abcdefgh".repeat(100);
  for (const final of ["abcdefgh".repeat(50) + "ZZZ", "zz" + text, text + " and more"]) {
    const a = new Agent({ initialState: { model: MODEL }, streamFn: scripted([{ text, final }]) });
    const id = `s6-${final.length}-${final[0]}`;
    const sa = await attachSession(a, { id, store, flushMs: 10, tabs: false });
    await a.prompt("go");
    await sa.flush();
    assert.equal(textOf(a.state.messages[1]), final);
    const b = new Agent({ initialState: { model: MODEL }, streamFn: noStream });
    await attachSession(b, { id, store, tabs: false });
    assert.equal(textOf(b.state.messages[1]), final);
    assert.deepEqual(b.state.messages[1], a.state.messages[1]);
  }
});
