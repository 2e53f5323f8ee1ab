// A WorkerAgent turns each run of text deltas the worker posts into `message_update` events and states
// on the page. What code on the page can see of them: a listener taking deltas and a state watcher told
// of every change (`{ coalesce: false }`) each see every delta, with `state.streamingMessage` a new
// object holding the text so far; with neither, the run's states between two deltas are not observable,
// and after the run (read from a timer or a coalesced watcher) the state holds the streamed text as a
// new object, as it would after the last delta. In Node: the worker is the other end of a MessageChannel.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { assertStrictContext } from "../../support/strict-transcript.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
if (!existsSync(new URL("worker/index.js", PKG))) throw new Error("pkg/ has no worker/index.js (run node scripts/build.mjs)");
const { createAssistantMessageEventStream } = await import(new URL("index.js", PKG));
const { WorkerAgent } = await import(new URL("worker/index.js", PKG));
const { serveAgent } = await import(new URL("worker/host.js", PKG));

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const PARTS = Array.from({ length: 200 }, (_, i) => `part ${i}; `);
const TEXT = PARTS.join("");
const textOf = (m) => m?.content?.filter((b) => b.type === "text").map((b) => b.text).join("") ?? "";

/**
 * Streams TEXT in 200 deltas into one partial, as pi-ai's providers do (what the worker posts as runs of
 * deltas), in `tasks` groups 30 ms apart: each group is a run the page receives in one batch. Each delta
 * waits for the loop to read the one before (a partial that ran ahead of its events would show the whole
 * text at every delta).
 */
const streamIn = (tasks) => (model, context) => {
  assertStrictContext(context);
  const s = createAssistantMessageEventStream();
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 1 };
  (async () => {
    await sleep(0);
    s.push({ type: "start", partial });
    partial.content.push({ type: "text", text: "" });
    s.push({ type: "text_start", contentIndex: 0, partial });
    const per = PARTS.length / tasks;
    for (let i = 0; i < PARTS.length; i++) {
      await (i > 0 && i % per === 0 ? sleep(30) : new Promise((r) => setImmediate(r)));
      partial.content[0].text += PARTS[i];
      s.push({ type: "text_delta", contentIndex: 0, delta: PARTS[i], partial });
    }
    await new Promise((r) => setImmediate(r));
    s.push({ type: "text_end", contentIndex: 0, content: TEXT, partial });
    s.push({ type: "done", reason: "stop", message: partial });
  })();
  return s;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function workerAgent(t, tasks = 1) {
  const { port1, port2 } = new MessageChannel();
  serveAgent({ streamFn: streamIn(tasks) }, port2);
  port1.start();
  port2.start();
  port1.terminate = () => port1.close();
  const agent = new WorkerAgent({ initialState: { model: MODEL }, worker: port1 });
  t.after(() => agent.terminate());
  return agent;
}
const SO_FAR = PARTS.map((_, i) => PARTS.slice(0, i + 1).join(""));

test("a watcher told of every change sees each delta's state, a new streaming message each time", async (t) => {
  const agent = workerAgent(t);
  const seen = [];
  agent.subscribeState(() => {
    const m = agent.state.streamingMessage;
    if (m?.role === "assistant" && m !== seen.at(-1)?.message) seen.push({ message: m, text: textOf(m) });
  }, { coalesce: false });
  await agent.prompt("go");
  const texts = seen.map((s) => s.text).filter((x) => x !== "");
  assert.deepEqual(texts.slice(-PARTS.length - 1), [...SO_FAR, TEXT], "one state per delta, then the end of the text block");
});

test("a listener taking deltas gets one message_update per delta, each with the text so far", async (t) => {
  const agent = workerAgent(t);
  const updates = [];
  agent.subscribe((e) => {
    if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") {
      updates.push({ delta: e.assistantMessageEvent.delta, text: textOf(agent.state.streamingMessage), same: e.message === agent.state.streamingMessage });
    }
  });
  await agent.prompt("go");
  assert.deepEqual(updates.map((u) => u.delta), PARTS);
  assert.deepEqual(updates.map((u) => u.text), SO_FAR);
  assert.ok(updates.every((u) => u.same), "state.streamingMessage is the event's message");
});

test("unobserved: the state after a run of deltas holds the streamed text, in a new object and snapshot", async (t) => {
  const agent = workerAgent(t);
  // A listener without deltas, a coalesced watcher: neither sees the states between two deltas.
  const kinds = [];
  agent.subscribe((e) => kinds.push(e.type), { deltas: false });
  const snapshots = [];
  agent.subscribeState(() => snapshots.push(agent.getSnapshot()));
  const streaming = [];
  const poll = setInterval(() => {
    const m = agent.state.streamingMessage;
    if (m && m !== streaming.at(-1)?.message) streaming.push({ message: m, text: textOf(m) });
  }, 0);
  await agent.prompt("go");
  clearInterval(poll);
  assert.equal(kinds.filter((k) => k === "message_update").length, 2, "text_start and text_end, no delta");
  for (const { message, text } of streaming) if (message.role === "assistant") assert.ok(TEXT.startsWith(text), "every state seen is a prefix of the answer");
  assert.equal(textOf(agent.state.messages.at(-1)), TEXT);
  assert.equal(agent.state.streamingMessage, undefined);
  assert.ok(snapshots.length > 0, "the coalesced watcher was told");
  const last = agent.getSnapshot();
  assert.equal(textOf(last.messages.at(-1)), TEXT);
  assert.equal(last.isStreaming, false);
});

test("unobserved, then observed: the streaming message read between two batches holds the text so far", async (t) => {
  // The deltas in four tasks 30 ms apart: four batches, a frame between each two.
  const agent = workerAgent(t, 4);
  // A coalesced watcher reads the state when the frame comes, between batches: each read is a new
  // object (the snapshot changes) and a prefix of the answer, the last one the whole text.
  // (The text is taken when read: a message's content blocks are shared with the next ones, as 1.4.0's are.)
  const reads = [];
  agent.subscribeState(() => {
    const m = agent.getSnapshot().streamingMessage;
    if (m?.role === "assistant") reads.push({ m, text: textOf(m) });
  });
  await agent.prompt("go");
  for (const { text } of reads) assert.ok(TEXT.startsWith(text));
  assert.equal(new Set(reads.map((r) => r.m)).size, reads.length, "a new streaming message per notification");
  const between = reads.filter(({ text }) => text.length > 0 && text.length < TEXT.length);
  assert.ok(between.length >= 3, `the text between batches was read (${reads.map((r) => r.text.length)})`);
});
