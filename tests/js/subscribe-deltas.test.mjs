// `agent.subscribe(listener, { deltas: false })`: a listener that is not called for the stream's
// per-token events (text, thinking and tool-call argument deltas), while the other listeners get
// every event, in subscription order, as with `subscribe(listener)`.
import assert from "node:assert/strict";
import { test } from "node:test";

const { Agent, createAssistantMessageEventStream } = await import("../../pkg/index.js");
const reference = await import("@earendil-works/pi-agent-core");
const { createAssistantMessageEventStream: referenceStream } = await import("@earendil-works/pi-ai");

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/**
 * One answer: a thinking block, a text block and a tool call, each streamed in two deltas; the
 * request after the call's (error) result is answered without streaming.
 */
const answer = (createStream) => (model, context) => {
  const s = createStream();
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "toolUse", timestamp: 1 };
  queueMicrotask(() => {
    s.push({ type: "start", partial });
    if (context.messages.at(-1).role === "toolResult") {
      partial.stopReason = "stop";
      return s.push({ type: "done", reason: "stop", message: partial });
    }
    // A text or thinking block `key` at `i`, streamed as `parts`.
    const block = (key, i, parts) => {
      partial.content.push({ type: key, [key]: "" });
      s.push({ type: `${key}_start`, contentIndex: i, partial });
      for (const d of parts) {
        partial.content[i][key] += d;
        s.push({ type: `${key}_delta`, contentIndex: i, delta: d, partial });
      }
      s.push({ type: `${key}_end`, contentIndex: i, content: partial.content[i][key], partial });
    };
    block("thinking", 0, ["hm", "m"]);
    block("text", 1, ["Hel", "lo"]);
    const call = { type: "toolCall", id: "c1", name: "nothing", arguments: {} };
    partial.content.push(call);
    s.push({ type: "toolcall_start", contentIndex: 2, partial });
    for (const d of ["{", "}"]) s.push({ type: "toolcall_delta", contentIndex: 2, delta: d, partial });
    s.push({ type: "toolcall_end", contentIndex: 2, toolCall: call, partial });
    s.push({ type: "done", reason: "toolUse", message: partial });
  });
  return s;
};
const streamFn = answer(createAssistantMessageEventStream);

const name = (event) => (event.type === "message_update" ? event.assistantMessageEvent.type : event.type);
// Every event of that run, as 1.4.0 calls a listener with it; and the same without the deltas.
const ALL = [];
{
  const agent = new reference.Agent({ initialState: { model: MODEL }, streamFn: answer(referenceStream) });
  agent.subscribe((e) => void ALL.push(name(e)));
  await agent.prompt("go");
}
const DELTAS = ["thinking_delta", "text_delta", "toolcall_delta"];
const WITHOUT_DELTAS = ALL.filter((n) => !DELTAS.includes(n));
assert.equal(ALL.length - WITHOUT_DELTAS.length, 6);

test("a listener subscribed with { deltas: false } gets every event but the deltas, in order among the others", async () => {
  const agent = new Agent({ initialState: { model: MODEL }, streamFn });
  const calls = [];
  agent.subscribe((e) => void calls.push(`a:${name(e)}`));
  agent.subscribe((e) => void calls.push(`b:${name(e)}`), { deltas: false });
  agent.subscribe((e) => void calls.push(`c:${name(e)}`));
  await agent.prompt("go");
  const expected = ALL.flatMap((n) => (WITHOUT_DELTAS.includes(n) ? [`a:${n}`, `b:${n}`, `c:${n}`] : [`a:${n}`, `c:${n}`]));
  assert.deepEqual(calls, expected);
});

test("a listener without deltas can still read the text streamed so far from state.streamingMessage", async () => {
  const agent = new Agent({ initialState: { model: MODEL }, streamFn });
  const seen = [];
  agent.subscribe((e) => {
    if (e.type === "message_update" && e.assistantMessageEvent.type === "text_end") seen.push(agent.state.streamingMessage.content[1].text);
  }, { deltas: false });
  await agent.prompt("go");
  assert.deepEqual(seen, ["Hello"]);
});

test("other options, or none, get every event; unsubscribing a listener without deltas gives the rest all of them", async () => {
  for (const options of [undefined, {}, { deltas: true }, { deltas: 0 }, null, "deltas"]) {
    const agent = new Agent({ initialState: { model: MODEL }, streamFn });
    const got = [];
    agent.subscribe((e) => void got.push(name(e)), options);
    await agent.prompt("go");
    assert.deepEqual(got, ALL, JSON.stringify(options));
  }
  const agent = new Agent({ initialState: { model: MODEL }, streamFn });
  const all = [];
  const some = [];
  const stop = agent.subscribe((e) => void some.push(name(e)), { deltas: false });
  agent.subscribe((e) => void all.push(name(e)));
  assert.equal(stop(), true);
  assert.equal(stop(), false);
  const later = [];
  agent.subscribe((e) => void later.push(name(e)));
  await agent.prompt("go");
  assert.deepEqual(some, []);
  assert.deepEqual(all, ALL);
  assert.deepEqual(later, ALL);
});

test("a listener added with { deltas: false } during a run gets the events after it, without deltas", async () => {
  const agent = new Agent({ initialState: { model: MODEL }, streamFn });
  const late = [];
  agent.subscribe((e) => {
    if (e.type === "message_update" && e.assistantMessageEvent.type === "text_start") agent.subscribe((x) => void late.push(name(x)), { deltas: false });
  });
  await agent.prompt("go");
  // Added while text_start is dispatched: called for it too (the listeners are iterated live).
  assert.deepEqual(late, WITHOUT_DELTAS.slice(WITHOUT_DELTAS.indexOf("text_start")));
});
