// A replay that goes another way than the log says where, and settles: a different prompt, a
// different context, more or fewer requests, an agent that waits on something the log never had.
// The error's `request` is the number its message gives, counted from 1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, MODEL, ReplayDivergenceError, ReplayLogError, createRecorder, createReplay, noStream, ok, scripted, sleep, textOf, tool, transcript, until } from "./support.mjs";

async function recorded(script = [{ text: "hi" }], options = {}) {
  const recorder = createRecorder();
  const a = recorder.attach(new Agent({ initialState: { systemPrompt: "sys", model: MODEL, tools: options.tools ?? [] }, streamFn: scripted(script) }));
  await a.prompt("hello");
  return { a, log: recorder.log() };
}

test("attached: a request that differs from the recorded one ends with an error naming the first difference", async () => {
  const { log } = await recorded();
  const b = new Agent({ initialState: { systemPrompt: "sys", model: MODEL }, streamFn: noStream });
  const replay = createReplay(log);
  replay.attach(b);
  await b.prompt("goodbye");
  assert.ok(replay.divergence instanceof ReplayDivergenceError);
  assert.equal(replay.divergence.request, 1);
  assert.equal(replay.divergence.message, 'Replay diverged at request 1: context.messages[1]: recorded user "hello", got user "goodbye"');
  assert.equal(b.state.messages.at(-1).stopReason, "error");
  assert.equal(b.state.messages.at(-1).errorMessage, replay.divergence.message);
});

test("played: a hook of the replaying agent that changes the context diverges at request 1, and play() rejects", async () => {
  const { log } = await recorded();
  const b = new Agent({ streamFn: noStream, transformContext: async (messages) => [...messages, { role: "user", content: "extra", timestamp: 1 }] });
  const seen = [];
  const replay = createReplay(log, { onDivergence: (e) => seen.push(e) });
  await assert.rejects(replay.play(b), (e) => e === replay.divergence && e instanceof ReplayDivergenceError);
  assert.equal(seen.length, 1);
  assert.equal(replay.divergence.request, 1);
  assert.equal(replay.divergence.message, 'Replay diverged at request 1: context.messages has 3 message(s), recorded 2: context.messages[2]: recorded nothing, got user "extra"');
});

test("played: an agent that goes on after the log's last request diverges there and settles", async () => {
  const { log } = await recorded();
  const b = new Agent({ streamFn: noStream, finishTurn: async () => ({ action: "continue" }) });
  const replay = createReplay(log);
  await assert.rejects(replay.play(b), ReplayDivergenceError);
  assert.equal(replay.divergence.request, 1);
  assert.match(replay.divergence.message, /^Replay diverged at request 1: recorded event agent_end, got event turn_start \(step \d+\)$/);
  assert.equal(b.state.isStreaming, false);
});

test("played: an agent that stops after fewer requests than the log diverges and settles", async () => {
  const tools = [tool("t", async () => ok("r"))];
  const { log } = await recorded([{ text: "calling", calls: [{ id: "c1", name: "t" }] }, { text: "done" }], { tools });
  assert.equal(log.requests.length, 2);
  const b = new Agent({ streamFn: noStream, finishTurn: async () => ({ action: "end" }) });
  const replay = createReplay(log);
  await assert.rejects(replay.play(b), ReplayDivergenceError);
  assert.equal(replay.divergence.request, 1);
  assert.match(replay.divergence.message, /^Replay diverged at request 1: recorded event turn_start, got event agent_end \(step \d+\)$/);
});

test("played: an agent that waits on its own hook forever is reported after stallMs; play() settles", async () => {
  const { log } = await recorded();
  const b = new Agent({ streamFn: noStream, transformContext: () => new Promise(() => {}) });
  const replay = createReplay(log, { stallMs: 50 });
  await assert.rejects(replay.play(b), ReplayDivergenceError);
  assert.equal(replay.divergence.request, undefined);
  assert.match(replay.divergence.message, /^Replay diverged: recorded request 1 next, but nothing happened for 50 ms \(step \d+\)$/);
});

test("other versions and malformed JSON are rejected with a ReplayLogError", async () => {
  const { log } = await recorded();
  assert.throws(() => createReplay({ ...log, v: 1 }), (e) => e instanceof ReplayLogError && e.message === "unsupported replay log version 1: this pi-agent-wasm reads version 2" && e.path === "v");
  assert.throws(() => createReplay("{"), ReplayLogError);
  assert.throws(() => createReplay({ v: 2 }), (e) => e instanceof ReplayLogError && /not a replay log/.test(e.message));
});

test("recorded timing plays the same run, waiting the recorded delays", async () => {
  const tools = [tool("calc", async (id, args, signal, onUpdate) => (onUpdate?.(ok("half")), await sleep(20), ok("4")))];
  const { a, log } = await recorded([{ text: "let me", calls: [{ id: "k1", name: "calc" }] }, { text: "four" }], { tools });
  const b = new Agent({ streamFn: noStream });
  const started = Date.now();
  await createReplay(JSON.stringify(log), { timing: "recorded", speed: 2 }).play(b);
  assert.ok(Date.now() - started >= 9, "the tool's 20 ms took at least 10 ms at double speed");
  assert.deepEqual(transcript(b), transcript(a));
  assert.equal(textOf(b.state.messages.at(-1)), "four");
});

test("a log exported mid-run plays up to where it ends; the agent is left there", async () => {
  const recorder = createRecorder();
  let open;
  const gate = new Promise((r) => (open = r));
  const a = recorder.attach(new Agent({ initialState: { systemPrompt: "sys", model: MODEL }, streamFn: scripted([{ text: "a long answer" }], { gate: (k, j) => (j === 4 ? gate : undefined) }) }));
  const run = a.prompt("hello");
  await until(() => textOf(a.state.streamingMessage ?? {}).length > 0 && recorder.log().requests[0]?.events.length >= 4);
  const log = recorder.log();
  open();
  await run;
  assert.equal(log.running, true);
  const b = new Agent({ streamFn: noStream });
  await createReplay(log).play(b);
  assert.equal(b.state.isStreaming, true);
  assert.equal(textOf(b.state.streamingMessage), textOf(log.requests[0].events.filter(([, e]) => e.type === "text_delta").reduce((m, [, e]) => ({ content: [{ type: "text", text: (m.content?.[0]?.text ?? "") + e.delta }] }), {})));
  b.abort();
  await b.waitForIdle();
});
