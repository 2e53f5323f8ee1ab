// What the replay tests share: the built package, a scripted stream function (checked by the
// strict-provider validator on every context it receives), a trace of an agent's events, and
// `recordAndReplay`, which records a real run and plays its log on a fresh agent.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { assertStrictContext } from "../../support/strict-transcript.mjs";

export const PKG = new URL("../../../pkg/", import.meta.url);
// A missing build fails the tests instead of skipping them.
if (!existsSync(new URL("replay/index.js", PKG))) throw new Error("pkg/ has no replay/index.js (run node scripts/build.mjs)");
export const core = await import(new URL("index.js", PKG));
export const replayEntry = await import(new URL("replay/index.js", PKG));
export const { Agent, createAssistantMessageEventStream } = core;
export const { createRecorder, createReplay, readReplayLog, REPLAY_LOG_VERSION, ReplayDivergenceError, ReplayLogError } = replayEntry;

export const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
export const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Resolves after `n` macrotasks. */
export const ticks = async (n = 1) => {
  for (let k = 0; k < n; k++) await sleep(0);
};
export const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));
export const tool = (name, execute, extra = {}) => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute, ...extra });
export const ok = (text) => ({ content: [{ type: "text", text }], details: {} });
export const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 5 });
export const noStream = () => {
  throw new Error("this agent is not expected to stream");
};

/**
 * A stream function answering from `script`, one entry per request: `{ text, thinking, calls,
 * final, error, gate, ignoreAbort }`. Every context it receives must pass the strict-provider
 * check (`fn.violations` lists the ones that did not). Between events it yields a macrotask, so
 * an abort can land anywhere; `gate(k, j)` may return a promise request `k`'s stream waits on
 * before its event `j`. A stream honours the abort (an `aborted` error event at its next event)
 * unless `ignoreAbort` is set: it then goes on to its end (at once with `"burst"`).
 */
export function scripted(script, { gate } = {}) {
  let n = 0;
  const fn = (model, context, options) => {
    const spec = (typeof script === "function" ? script(n, context) : script[n]) ?? { text: "done" };
    const k = n++;
    try {
      assertStrictContext(context);
    } catch (err) {
      fn.violations.push(err.message);
      throw err;
    }
    fn.contexts.push(context.messages.slice());
    const s = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 10 + k };
    const events = [];
    events.push(() => ({ type: "start", partial }));
    if (spec.thinking) {
      const i = 0;
      events.push(() => (partial.content.push({ type: "thinking", thinking: "" }), { type: "thinking_start", contentIndex: i, partial }));
      for (const ch of spec.thinking.match(/.{1,3}/g)) events.push(() => ((partial.content[i].thinking += ch), { type: "thinking_delta", contentIndex: i, delta: ch, partial }));
      events.push(() => ({ type: "thinking_end", contentIndex: i, content: partial.content[i].thinking, partial }));
    }
    if (spec.text) {
      let i;
      events.push(() => ((i = partial.content.length), partial.content.push({ type: "text", text: "" }), { type: "text_start", contentIndex: i, partial }));
      for (const ch of spec.text.match(/.{1,4}/g)) events.push(() => ((partial.content[i].text += ch), { type: "text_delta", contentIndex: i, delta: ch, partial }));
      events.push(() => ({ type: "text_end", contentIndex: i, content: partial.content[i].text, partial }));
    }
    for (const c of spec.calls ?? []) {
      let i;
      let block;
      const json = JSON.stringify(c.args ?? {});
      events.push(() => {
        i = partial.content.length;
        block = { type: "toolCall", id: c.id, name: c.name, arguments: {} };
        partial.content.push(block);
        return { type: "toolcall_start", contentIndex: i, partial };
      });
      for (const piece of json.match(/.{1,5}/g)) events.push(() => ({ type: "toolcall_delta", contentIndex: i, delta: piece, partial }));
      events.push(() => ((block.arguments = c.args ?? {}), { type: "toolcall_end", contentIndex: i, toolCall: block, partial }));
    }
    (async () => {
      await sleep(0);
      for (let j = 0; j < events.length; j++) {
        await gate?.(k, j);
        if (options?.signal?.aborted && !spec.ignoreAbort) {
          partial.stopReason = "aborted";
          return s.push({ type: "error", reason: "aborted", error: { ...partial, errorMessage: "Request was aborted" } });
        }
        s.push(events[j]());
        // A stream that ignores the abort and has the rest at hand sends it at once.
        if (!(spec.ignoreAbort === "burst" && options?.signal?.aborted)) await sleep(0);
      }
      if (spec.error) {
        partial.stopReason = "error";
        return s.push({ type: "error", reason: "error", error: { ...partial, errorMessage: spec.error } });
      }
      if (spec.calls?.length) partial.stopReason = "toolUse";
      const message = spec.final === undefined ? partial : { ...partial, content: [{ type: "text", text: spec.final }] };
      s.push({ type: "done", reason: partial.stopReason, message });
    })();
    return s;
  };
  fn.contexts = [];
  fn.violations = [];
  return fn;
}

// A copy of a value without its timestamps (they change from run to run).
const noTimes = (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value);
const copy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v, noTimes)));

/**
 * What an agent's events show, copied as they are delivered (a streaming message changes later).
 * With `partials: false`, a `message_update` keeps its stream event but not the streaming message:
 * playback rebuilds that message from the events the loop read, so a stream that runs ahead of
 * the loop (changing its message before the loop reads the events that say so) shows its text
 * event by event on playback.
 */
export function trace(agent, { partials = true } = {}) {
  const out = [];
  agent.subscribe((e) => {
    switch (e.type) {
      case "message_start":
      case "message_end":
        out.push([e.type, copy(e.message)]);
        break;
      case "message_update": {
        const { partial, ...ame } = e.assistantMessageEvent;
        // A streaming tool call's arguments are rebuilt on playback from the argument text (the
        // last complete parse of it): how a provider parses an incomplete text is not recorded.
        const message = copy(e.message);
        for (const block of message.content ?? []) if (block.type === "toolCall" && ame.type !== "toolcall_end") delete block.arguments;
        out.push(partials ? [e.type, copy(ame), message] : [e.type, copy(ame)]);
        break;
      }
      case "tool_execution_start":
        out.push([e.type, e.toolCallId, e.toolName, copy(e.args)]);
        break;
      case "tool_execution_update":
        out.push([e.type, e.toolCallId, copy(e.partialResult)]);
        break;
      case "tool_execution_end":
        out.push([e.type, e.toolCallId, copy(e.result), e.isError]);
        break;
      case "turn_end":
        out.push([e.type, copy(e.message), copy(e.toolResults)]);
        break;
      case "agent_end":
        out.push([e.type, copy(e.messages)]);
        break;
      default:
        out.push([e.type]);
    }
  });
  return out;
}

export const transcript = (agent) => copy(agent.state.messages);

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
  const spawn = () => {
    const { port1, port2 } = new MessageChannel();
    hostEntry.serveAgent({ streamFn: stream }, port2);
    port1.start();
    port2.start();
    // What `agent.terminate()` calls: closing one end closes both.
    port1.terminate = () => port1.close();
    return port1;
  };
  return new workerEntry.WorkerAgent({ initialState, worker: spawn, ...agentOptions });
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
