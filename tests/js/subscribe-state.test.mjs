// `agent.subscribeState(listener, { coalesce })` and `getSnapshot()`, what the UI adapters are built on:
// a coalesced listener is called once per frame (a timer in Node) however many changes a run makes,
// `{ coalesce: false }` once per change; an unsubscribed listener is not called again, whichever kind it
// was and however often it unsubscribes; the snapshot keeps its identity until the state changes.
import assert from "node:assert/strict";
import { test } from "node:test";

const { Agent, createAssistantMessageEventStream } = await import("../../pkg/index.js");

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** An answer of `n` text deltas, all pushed in one task. */
const streamFn = (n) => (model) => {
  const s = createAssistantMessageEventStream();
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 1 };
  queueMicrotask(() => {
    s.push({ type: "start", partial });
    partial.content.push({ type: "text", text: "" });
    s.push({ type: "text_start", contentIndex: 0, partial });
    for (let i = 0; i < n; i++) {
      partial.content[0].text += "x";
      s.push({ type: "text_delta", contentIndex: 0, delta: "x", partial });
    }
    s.push({ type: "text_end", contentIndex: 0, content: partial.content[0].text, partial });
    s.push({ type: "done", reason: "stop", message: partial });
  });
  return s;
};
const nextFrame = () => new Promise((r) => setTimeout(r, 5));

test("coalesced listeners run once per frame, sync ones per change, unsubscribed ones never", async () => {
  const agent = new Agent({ initialState: { model: MODEL }, streamFn: streamFn(100) });
  let coalesced = 0;
  let sync = 0;
  let syncGone = 0;
  let coalescedGone = 0;
  const stopCoalesced = agent.subscribeState(() => coalesced++);
  const stopSync = agent.subscribeState(() => sync++, { coalesce: false });
  const goneSync = agent.subscribeState(() => syncGone++, { coalesce: false });
  const goneCoalesced = agent.subscribeState(() => coalescedGone++);
  assert.equal(goneSync(), true);
  assert.equal(goneSync(), false, "a second unsubscribe removes nothing");
  assert.equal(goneCoalesced(), true);

  const before = agent.getSnapshot();
  assert.equal(agent.getSnapshot(), before, "no change, same snapshot");
  await agent.prompt("go");
  assert.ok(sync >= 100, `the sync listener ran per change (${sync})`);
  assert.equal(coalesced, 0, "the coalesced listener waits for the frame");
  await nextFrame();
  assert.equal(coalesced, 1, "one call for the whole run");
  assert.equal(syncGone + coalescedGone, 0);
  const after = agent.getSnapshot();
  assert.notEqual(after, before);
  assert.equal(after.messages.length, 2);
  assert.equal(after.messages[1].content[0].text.length, 100);
  assert.equal(agent.getSnapshot(), after);

  // The sync listener gone too: a change schedules the frame for the coalesced one only.
  stopSync();
  const seen = sync;
  agent.state.messages = [];
  assert.equal(sync, seen);
  await nextFrame();
  assert.equal(coalesced, 2);
  stopCoalesced();
  agent.state.messages = [];
  await nextFrame();
  assert.equal(coalesced, 2);
});
