// What the replay tests share: the built package, a scripted stream function (checked by the
// strict-provider validator on every context it receives), a trace of an agent's events, and
// `recordAndReplay`, which records a real run and plays its log on a fresh agent.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { MODEL, channelWorker, sleep } from "../support/fixtures.mjs";
import { makeScripted, trace, transcript } from "./scripted.mjs";

export const PKG = new URL("../../../pkg/", import.meta.url);
// A missing build fails the tests instead of skipping them.
if (!existsSync(new URL("replay/index.js", PKG))) throw new Error("pkg/ has no replay/index.js (run node scripts/build.mjs)");
export const core = await import(new URL("index.js", PKG));
export const replayEntry = await import(new URL("replay/index.js", PKG));
export const { Agent, createAssistantMessageEventStream } = core;
export const { createRecorder, createReplay, readReplayLog, REPLAY_LOG_VERSION, ReplayDivergenceError, ReplayLogError } = replayEntry;

export { MODEL, ok, sleep, textOf, tool, usage } from "../support/fixtures.mjs";
/** Resolves after `n` macrotasks. */
export const ticks = async (n = 1) => {
  for (let k = 0; k < n; k++) await sleep(0);
};
export const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 5 });
export const noStream = () => {
  throw new Error("this agent is not expected to stream");
};

export const scripted = makeScripted(createAssistantMessageEventStream);
export { trace, transcript };

/** Waits until `f()` is true, a macrotask at a time (at most `limit` of them). */
export async function until(f, limit = 20_000) {
  for (let k = 0; k < limit; k++) {
    if (f()) return;
    await sleep(0);
  }
  throw new Error(`until: still false after ${limit} macrotasks: ${f}`);
}

export const workerEntry = await import(new URL("worker/index.js", PKG));
export const hostEntry = await import(new URL("worker/host.js", PKG));

/**
 * An agent of `mode`: an in-page `Agent`, or a `WorkerAgent` whose "worker" is the other end of a
 * MessageChannel served in this process (`stream` runs there; the tools are the page's).
 */
export function makeAgent(mode, { stream, tools = [], agentOptions = {}, initialState = { systemPrompt: "sys", model: MODEL, tools } }) {
  if (mode === "agent") return new Agent({ initialState, streamFn: stream, ...agentOptions });
  return new workerEntry.WorkerAgent({ initialState, worker: channelWorker(hostEntry.serveAgent, { streamFn: stream }), ...agentOptions });
}

/**
 * Records a run of an agent of mode `record` ("agent" or "worker", see `makeAgent`): the recorder
 * is attached, `attach(agent)` may attach more (a session), `drive(agent)` makes the run; waits for
 * the agent to be idle. Then plays the log on a fresh agent of mode `play` and requires the same
 * events, the same transcript and the same requests (a recorder on the replaying agent records the
 * same contexts and stream items). Returns both sides.
 */
export async function recordAndReplay({ stream, tools = [], agentOptions = {}, drive, replayOptions, attach = (a) => a, replayAgent, partials = true, record = "agent", play = "agent" }) {
  const recorder = createRecorder();
  const a = makeAgent(record, { stream, tools, agentOptions });
  recorder.attach(a);
  const recorded = trace(a, { partials });
  // The transcript as each run left it (a stream that ignores the abort may still change the
  // blocks of the message it was cut at, which the transcript shares).
  let ended = transcript(a);
  a.subscribe((e) => void (e.type === "agent_end" && (ended = transcript(a))));
  await attach(a);
  await drive(a);
  await until(() => !a.state.isStreaming);
  await a.waitForIdle();
  assert.deepEqual(stream.violations ?? [], [], "every recorded request passes the strict-provider check");
  const text = recorder.export();
  const log = JSON.parse(text);

  const b = replayAgent ? replayAgent() : makeAgent(play, { stream: noStream, initialState: {} });
  const again = createRecorder();
  again.attach(b);
  const replayed = trace(b, { partials });
  const replay = createReplay(text, replayOptions);
  await replay.play(b);
  assert.equal(replay.divergence, undefined);
  assert.deepEqual(replayed, recorded, "the replay emits the recorded events");
  assert.deepEqual(transcript(b), ended, "the replay ends with the recorded transcript");
  const second = again.log();
  const requestsOf = (l) => l.requests.map((q) => ({ model: q.model, h: q.h, events: q.events.map(([, e]) => e) }));
  assert.deepEqual(requestsOf(second), requestsOf(log), "the replay makes the recorded requests and reads the recorded stream items");
  assert.deepEqual(second.calls.map((c) => [c.id, c.name, c.args, c.result, c.error]), log.calls.map((c) => [c.id, c.name, c.args, c.result, c.error]));
  a.terminate?.();
  b.terminate?.();
  return { a, b, log, recorded, replayed };
}
