// A WorkerAgent's runs record the log an in-page Agent's would (the recorder runs in its worker,
// next to the loop), and a log recorded in one mode plays in the other. The worker is the other
// end of a MessageChannel served in this process (tests/browser/replay/ does it with a real Worker).
import { test } from "node:test";
import assert from "node:assert/strict";
import { MODEL, createRecorder, makeAgent, ok, recordAndReplay, scripted, sleep, textOf, tool, until, user } from "./support.mjs";

const calc = () => tool("calc", async (id, args, signal, onUpdate) => (onUpdate?.(ok("half")), await sleep(1), ok(`calc ${JSON.stringify(args)}`)));
const SCRIPT = [
  { thinking: "hmm", text: "let me", calls: [{ id: "k1", name: "calc", args: { x: 1 } }, { id: "k2", name: "calc", args: { x: 2 } }] },
  { text: "four" },
  { text: "you are welcome" },
];
const OPTIONS = { beforeToolCall: async ({ toolCall }) => (await sleep(1), toolCall.id === "k2" ? { block: true, reason: "denied by user" } : undefined) };
async function drive(a) {
  const run = a.prompt("2+2?");
  await until(() => a.state.pendingToolCalls.size > 0);
  a.followUp(user("thanks"));
  await run;
}

test("a WorkerAgent's run records the log an Agent's run records", async () => {
  const logs = [];
  for (const mode of ["agent", "worker"]) {
    const recorder = createRecorder();
    const a = makeAgent(mode, { stream: scripted(SCRIPT), tools: [calc()], agentOptions: OPTIONS });
    recorder.attach(a);
    await drive(a);
    await a.waitForIdle();
    await until(() => recorder.log().running !== true && recorder.log().steps.at(-1)?.[1] === "agent_end");
    logs.push(recorder.log());
    a.terminate?.();
  }
  // Apart from times: when each part happened, the messages' timestamps and the tools' durations.
  const TIMES = new Set(["t", "ms", "o", "timestamp", "durationMs"]);
  const [agent, worker] = logs.map((l) => JSON.parse(JSON.stringify(l, (k, v) => (TIMES.has(k) ? undefined : v))));
  const untimed = (l) => ({
    ...l,
    requests: l.requests.map((q) => ({ ...q, events: q.events.map(([, ...e]) => e) })),
    calls: l.calls.map((c) => ({ ...c, updates: c.updates.map(([, u]) => u) })),
  });
  assert.deepEqual(untimed(worker), untimed(agent));
});

for (const [record, play] of [["worker", "agent"], ["agent", "worker"], ["worker", "worker"]]) {
  test(`recorded with ${record === "agent" ? "an Agent" : "a WorkerAgent"}, played on ${play === "agent" ? "an Agent" : "a WorkerAgent"}`, async () => {
    await recordAndReplay({ stream: scripted(SCRIPT), tools: [calc()], agentOptions: OPTIONS, drive, record, play });
  });

  test(`an abort mid-tool and steering, recorded with ${record === "agent" ? "an Agent" : "a WorkerAgent"}, played on ${play === "agent" ? "an Agent" : "a WorkerAgent"}`, async () => {
    const slow = tool("slow", (id, args, signal) => new Promise((resolve, reject) => signal.addEventListener("abort", () => reject(new Error("slow stopped")))));
    await recordAndReplay({
      stream: scripted([{ text: "calling", calls: [{ id: "s1", name: "slow" }] }, { text: "after" }, { text: "steered" }]),
      tools: [slow],
      record,
      play,
      drive: async (a) => {
        const run = a.prompt("go");
        await until(() => a.state.pendingToolCalls.size > 0);
        a.abort();
        await run;
        a.steer(user("now this"));
        await a.prompt("again");
      },
    });
  });
}

test("a worker terminated mid-run: the runs after it replay, on an Agent and on a WorkerAgent", async () => {
  const { createReplay, noStream, trace, transcript } = await import("./support.mjs");
  const slow = tool("slow", () => new Promise(() => {}));
  const recorder = createRecorder();
  const a = makeAgent("worker", { stream: scripted([{ text: "calling", calls: [{ id: "s1", name: "slow" }] }, { text: "after the crash" }]), tools: [slow] });
  recorder.attach(a);
  const recorded = trace(a);
  const run = a.prompt("go");
  await until(() => a.state.pendingToolCalls.size > 0);
  await sleep(20);
  a.terminate();
  await run;
  await a.prompt("again");
  const ended = transcript(a);
  const log = recorder.log();
  assert.deepEqual(log.inputs.map((x) => x.op), ["prompt", "lost", "messages", "prompt"]);
  assert.match(textOf(a.state.messages.at(-3)), /^$/);
  assert.equal(a.state.messages.at(-3).errorMessage, "pi-agent-wasm: the agent's worker was terminated");
  a.terminate();
  const second = (events) => events.slice(events.findLastIndex((e) => e[0] === "agent_start"));
  for (const mode of ["agent", "worker"]) {
    const b = makeAgent(mode, { stream: noStream, initialState: {} });
    const replayed = trace(b);
    await createReplay(log).play(b);
    assert.deepEqual(transcript(b), ended, mode);
    assert.deepEqual(second(replayed), second(recorded), mode);
    b.terminate?.();
  }
});

test("replay.attach() on a WorkerAgent: its worker answers from the log", async () => {
  const { createReplay, noStream } = await import("./support.mjs");
  const recorder = createRecorder();
  const a = makeAgent("agent", { stream: scripted([{ text: "calling", calls: [{ id: "k1", name: "calc", args: { x: 3 } }] }, { text: "done" }]), tools: [calc()] });
  recorder.attach(a);
  await a.prompt("go");
  // attach() answers whatever the agent asks: built like the recorded one, it asks the same.
  const b = makeAgent("worker", { stream: noStream, initialState: { systemPrompt: "sys", model: MODEL, tools: [calc()] } });
  const replay = createReplay(recorder.log());
  replay.attach(b);
  await b.prompt("go");
  assert.deepEqual(b.state.messages.map(textOf), a.state.messages.map(textOf));
  b.terminate();
});
