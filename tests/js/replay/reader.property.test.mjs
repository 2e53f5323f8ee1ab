// The reader against logs users send: real logs recorded here, each field of which is deleted,
// given another type, or corrupted (seeded, so that a failure names a seed and a path to rerun).
// Every mutant either is refused by createReplay with a ReplayLogError naming a path, or plays to
// an end: play() settles (resolves, or rejects with a ReplayDivergenceError) without another
// error, a hang or an unhandled rejection.
import { test } from "node:test";
import assert from "node:assert/strict";
import { prng as random } from "../../support/prng.mjs";
import { Agent, MODEL, ReplayDivergenceError, ReplayLogError, createRecorder, createReplay, noStream, ok, scripted, sleep, tool, until, user } from "./support.mjs";

const SEED = Number(process.env.REPLAY_FUZZ_SEED ?? 0x5eed);

/** Logs of real runs: tools with an update and a denial, steering and a follow-up, an abort mid-tool, a stream cut after an abort. */
async function realLogs() {
  const logs = [];
  const record = async (script, tools, options, drive, gate) => {
    const recorder = createRecorder();
    const a = recorder.attach(new Agent({ initialState: { systemPrompt: "sys", model: MODEL, tools }, streamFn: scripted(script, { gate }), ...options }));
    await drive(a);
    await until(() => !a.state.isStreaming);
    logs.push(recorder.log());
  };
  const calc = tool("calc", async (id, args, signal, onUpdate) => (onUpdate?.(ok("half")), await sleep(1), ok("4")));
  await record([{ text: "let me", calls: [{ id: "k1", name: "calc", args: { x: 1 } }, { id: "k2", name: "calc" }] }, { text: "four" }, { text: "ok" }], [calc],
    { beforeToolCall: async ({ toolCall }) => (toolCall.id === "k2" ? { block: true, reason: "no" } : undefined) },
    async (a) => {
      const run = a.prompt("2+2?");
      await sleep(0);
      a.steer(user("quick"));
      a.followUp(user("thanks"));
      await run;
    });
  const slow = tool("slow", (id, args, signal) => new Promise((resolve, reject) => signal.addEventListener("abort", () => reject(new Error("slow stopped")))));
  await record([{ thinking: "hmm", text: "calling", calls: [{ id: "s1", name: "slow" }] }, { text: "after" }], [slow], {}, async (a) => {
    const run = a.prompt("go");
    await until(() => a.state.pendingToolCalls.size > 0);
    a.abort();
    await run;
    await a.prompt("again");
  });
  let reached;
  const atGate = new Promise((r) => (reached = r));
  await record([{ text: "a long answer that stalls", ignoreAbort: true }], [], {}, async (a) => {
    const run = a.prompt("go");
    await atGate;
    a.abort();
    await run;
  }, (k, j) => (j === 4 ? (reached(), new Promise(() => {})) : undefined));
  return logs;
}

// Every path to a field or element of `value`, as a list of keys.
function paths(value, at = [], out = []) {
  out.push(at);
  if (value !== null && typeof value === "object") {
    for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) paths(value[key], [...at, key], out);
  }
  return out;
}

const OTHER_TYPES = [null, 0, -1, 1.5, "", "x", true, [], {}, [[0, null]], { type: 7 }];
function mutants(value, path, rnd) {
  const out = [];
  const edit = (f) => {
    const copy = structuredClone(value);
    if (path.length === 0) return out.push(f(undefined, undefined, copy));
    let parent = copy;
    for (const key of path.slice(0, -1)) parent = parent[key];
    const key = path[path.length - 1];
    f(parent, key);
    out.push(copy);
  };
  if (path.length > 0) {
    edit((p, k) => (Array.isArray(p) ? p.splice(k, 1) : delete p[k]));
    edit((p, k) => Array.isArray(p) && p.splice(k, 0, structuredClone(p[k])));
  }
  for (let n = 0; n < 3; n++) {
    const v = OTHER_TYPES[Math.floor(rnd() * OTHER_TYPES.length)];
    if (path.length === 0) out.push(v);
    else edit((p, k) => (p[k] = structuredClone(v)));
  }
  edit((p, k) => {
    if (p === undefined) return;
    const v = p[k];
    if (typeof v === "number") p[k] = [v + 1, v - 1, v * 1000, -v][Math.floor(rnd() * 4)];
    else if (typeof v === "string") p[k] = v.length ? v.slice(0, Math.floor(rnd() * v.length)) + "\u00e9" : "steer";
    else if (Array.isArray(v)) v.reverse();
    else if (v && typeof v === "object") Object.assign(v, { type: "done", role: "assistant" });
  });
  return out;
}

const unhandled = [];
process.on("unhandledRejection", (reason) => unhandled.push(reason));

async function check(mutant, where) {
  let replay;
  try {
    replay = createReplay(mutant, { stallMs: 100 });
  } catch (err) {
    assert.ok(err instanceof ReplayLogError, `${where}: createReplay threw ${err?.name}: ${err?.message}`);
    assert.equal(typeof err.path, "string", where);
    if (typeof mutant !== "string") assert.ok(err.path.length > 0 || !mutant || typeof mutant !== "object", `${where}: no path in "${err.message}"`);
    return "refused";
  }
  const agent = new Agent({ streamFn: noStream });
  let timer;
  const outcome = await Promise.race([
    replay.play(agent).then(() => "played", (err) => err),
    new Promise((resolve) => (timer = setTimeout(() => resolve("hung"), 30_000))),
  ]);
  clearTimeout(timer);
  assert.notEqual(outcome, "hung", `${where}: play() did not settle`);
  if (outcome !== "played") assert.ok(outcome instanceof ReplayDivergenceError, `${where}: play() rejected with ${outcome?.name}: ${outcome?.message}\n${outcome?.stack}`);
  if (agent.state.isStreaming) agent.abort();
  await agent.waitForIdle();
  return outcome === "played" ? "played" : "diverged";
}

test("every field of real logs, deleted, retyped or corrupted: a ReplayLogError with a path, or a replay that settles", { timeout: 600_000 }, async () => {
  const logs = await realLogs();
  assert.ok(logs.length >= 3);
  const rnd = random(SEED);
  const tally = { refused: 0, played: 0, diverged: 0 };
  for (const [n, log] of logs.entries()) {
    // The log itself replays.
    assert.equal(await check(structuredClone(log), `log ${n} unchanged`), "played");
    for (const path of paths(log)) {
      for (const [m, mutant] of mutants(log, path, rnd).entries()) {
        tally[await check(mutant, `seed ${SEED}, log ${n}, ${JSON.stringify(path)}, mutant ${m}`)]++;
      }
    }
    // Text that is not a log.
    for (const text of [JSON.stringify(log).slice(0, 100), "", "null", "[]", "{\"pi\":\"replay\",\"v\":2}"]) await check(text, `text ${JSON.stringify(text.slice(0, 20))}`);
  }
  await sleep(20);
  assert.deepEqual(unhandled.map(String), [], "no unhandled rejection");
  // Both outcomes are exercised (the refused ones name their field).
  assert.ok(tally.refused > 100 && tally.played + tally.diverged > 100, JSON.stringify(tally));
});
