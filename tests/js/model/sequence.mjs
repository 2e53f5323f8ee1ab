// One sequence of the model-based test: what a user and the world do to an `Agent` or a `WorkerAgent`
// (with a session and a recorder attached: prompts, queues, approvals, aborts, reloads, the session's
// branches, failing workers), step by step, with the invariants checked after each step:
//   - every context the model is sent is valid for a strict provider (world.mjs), and so is the transcript,
//     but for what it may keep (keptTranscriptProblems): the calls of its last answer while they run or wait,
//     and the calls of an answer that failed, which never ran;
//   - a run never overlaps another, and ends with exactly one `agent_end`; nothing comes after it;
//   - nothing hangs: every wait is bounded, and a wait that runs out is a problem naming the step;
//   - at the end every recorded log replays (`createReplay(log).play(new Agent(…))`) without divergence,
//     to the same transcript (the log of each agent that was idle when the page dropped it, and the last's).
// `generate(seed, subject)` draws the steps; `runSequence({ seed, subject, steps })` runs them and returns
// the problems found and a trace.
import { MessageChannel } from "node:worker_threads";
import { keptTranscriptProblems } from "../../support/strict-transcript.mjs";
import { createWorld, describe, MODEL, rng, tick } from "./world.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
const lib = await import(new URL("index.js", PKG));
const { attachSession, memoryStore } = await import(new URL("session/index.js", PKG));
const { createRecorder, createReplay } = await import(new URL("replay/index.js", PKG));
const { WorkerAgent } = await import(new URL("worker/index.js", PKG));
const { serveAgent } = await import(new URL("worker/host.js", PKG));

export const SUBJECTS = ["agent", "worker"];

// Steps, by weight. A step that does not apply at that moment (approve with no dialog open) does nothing.
const STEPS = {
  prompt: 22, steer: 8, followUp: 8, continue: 5, abort: 8, approve: 10, deny: 6, wait: 22, reload: 8, resume: 6,
  terminate: 3, workerThrows: 2, breakNextWorker: 1, edit: 5, regenerate: 4, switchTo: 4,
};
// The session's branches: which message (or fork point) a step picks, as a fraction of those that fit.
const BRANCH_STEPS = new Set(["edit", "regenerate", "switchTo"]);
const WAITS = [1, 2, 3, 5, 8, 20, 60];
const WORKER_ONLY = new Set(["terminate", "workerThrows", "breakNextWorker"]);

/** The steps of a seed: 3 to 14, drawn with the weights above (worker steps only for a WorkerAgent). */
export function generate(seed, subject) {
  const r = rng(seed);
  const n = 3 + r.int(12);
  const steps = [];
  for (let i = 0; i < n; i++) {
    let op;
    do op = r.pick(STEPS);
    while (subject !== "worker" && WORKER_ONLY.has(op));
    if (op === "wait") steps.push(["wait", WAITS[r.int(WAITS.length)]]);
    else if (op === "reload") steps.push(["reload", r() < 0.5 ? "flush" : "crash"]);
    else if (BRANCH_STEPS.has(op)) steps.push([op, Math.floor(r() * 100) / 100]);
    else steps.push([op]);
  }
  return steps;
}

export const showStep = ([op, arg]) => (arg === undefined ? op : `${op} ${arg}`);

// How long a wait may take before it is a hang: both this many turns of the event loop and this many ms.
const HANG_TICKS = 3000;
const HANG_MS = 3000;
async function waitUntil(ok) {
  const t0 = Date.now();
  for (let i = 0; ; i++) {
    if (ok()) return true;
    if (i >= HANG_TICKS && Date.now() - t0 >= HANG_MS) return false;
    await (i < 200 ? tick() : new Promise((r) => setTimeout(r, 1)));
  }
}
// A run that emits no event for this many turns of the event loop and this many ms is stalled (it
// waits for an abort, or it hangs).
const QUIET_TICKS = 60;
const QUIET_MS = 100;
// A replay may be quiet longer: the loop waits up to a second for a tool that ignores the abort
// (src/agent_loop/tools.js, EXECUTE_GRACE_MS), in the replay as in the run it repeats.
const REPLAY_QUIET_MS = 3000;
/** Waits until `idle()`; false if `counter.events` stops growing for QUIET_TICKS turns and `quietMs` first. */
async function waitIdleOrQuiet(counter, idle, quietMs = QUIET_MS) {
  let seen = counter.events;
  let quiet = 0;
  let since = Date.now();
  while (!idle()) {
    await (quiet < QUIET_TICKS ? tick() : new Promise((r) => setTimeout(r, 1)));
    if (counter.events !== seen) {
      seen = counter.events;
      quiet = 0;
      since = Date.now();
    } else if (++quiet >= QUIET_TICKS && Date.now() - since >= quietMs) return false;
  }
  return true;
}
const settled = (promise) => {
  let done = false;
  promise.then(() => (done = true), () => (done = true));
  return () => done;
};

const textMessage = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const plain = (v) => JSON.parse(JSON.stringify(v ?? null, (k, x) => (k === "timestamp" || k === "durationMs" ? undefined : x)));

/** Runs a sequence; returns `{ problems: [{ kind, message, step }], trace: [text] }`. */
export async function runSequence({ seed, subject, steps }) {
  const trace = [];
  const problems = [];
  let stepIndex = -1;
  const log = (text) => void trace.push(text);
  const problem = (kind, message) => {
    problems.push({ kind, message, step: stepIndex });
    log(`  !! ${kind}: ${message}`);
  };
  const world = createWorld({ seed, problem, log, createAssistantMessageEventStream: lib.createAssistantMessageEventStream });
  const store = memoryStore();
  const incarnations = [];
  let breakNext = false;
  const ports = [];

  /** A worker: the other end of a MessageChannel, served here (or, once after breakNextWorker, one that fails to load). */
  const spawn = () => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    port1.terminate = () => port1.close();
    if (breakNext) {
      breakNext = false;
      log("  (this worker fails to load)");
      setImmediate(() => port1.dispatchEvent(Object.assign(new Event("error"), { message: "SyntaxError: Unexpected token in agent.worker.js" })));
    } else serveAgent({ streamFn: world.streamFn }, port2);
    port1.start();
    port2.start();
    return port1;
  };

  async function incarnate() {
    const n = incarnations.length;
    world.incarnation = n;
    const options = {
      initialState: { systemPrompt: "You are a test.", model: MODEL, tools: world.tools },
      beforeToolCall: world.beforeToolCall,
      // Some seeds run their tools one by one, or deliver every queued message at once.
      toolExecution: seed % 5 === 0 ? "sequential" : "parallel",
      steeringMode: seed % 7 === 0 ? "all" : "one-at-a-time",
      followUpMode: seed % 11 === 0 ? "all" : "one-at-a-time",
    };
    const agent = subject === "worker" ? new WorkerAgent({ ...options, worker: spawn }) : new lib.Agent({ ...options, streamFn: world.streamFn });
    const inc = { n, agent, alive: true, events: 0, starts: 0, ends: 0, afterEnd: [], runs: [], recorder: undefined, session: undefined };
    agent.subscribe((event) => {
      if (!inc.alive) return;
      inc.events++;
      if (event.type === "agent_start") {
        if (inc.starts > inc.ends) problem("overlapping-runs", `incarnation ${n}: agent_start while a run is going`);
        inc.starts++;
      } else if (event.type === "agent_end") {
        inc.ends++;
        if (inc.ends > inc.starts) {
          problem("agent-end", `incarnation ${n}: agent_end without agent_start`);
          // Counted as a run, so the next run's events are judged on their own.
          inc.starts = inc.ends;
        }
      } else if (inc.starts === inc.ends) problem("event-outside-run", `incarnation ${n}: ${event.type} outside a run`);
    });
    try {
      inc.recorder = createRecorder();
      inc.recorder.attach(agent);
    } catch (err) {
      inc.recorder = undefined;
      problem("recorder-attach", `createRecorder().attach(${subject === "worker" ? "WorkerAgent" : "Agent"}) throws: ${err.message}`);
    }
    // Writes of an agent the page dropped never land (it is gone).
    const own = { ...store };
    for (const key of ["append", "replace", "clear"]) own[key] = async (...args) => (inc.alive ? store[key](...args) : undefined);
    const attached = attachSession(agent, { id: "s", store: own, flushMs: 1, tabs: false, onError: (e) => problem("session-error", e.message) });
    if (!(await waitUntil(settled(attached)))) {
      problem("hang", `attachSession did not settle (incarnation ${n})`);
      return inc;
    }
    try {
      inc.session = await attached;
    } catch (err) {
      problem("attach-session", err.message);
    }
    incarnations.push(inc);
    return inc;
  }

  /** The page goes: after its last write (flush), or at once (crash). */
  async function drop(inc, how) {
    const before = JSON.stringify(plain(inc.agent.state.messages));
    // Idle: no run, and no session.resume() or branch step under way (restored calls run outside a run).
    const idleBefore = !inc.agent.state.isStreaming && inc.runs.every((r) => r.done);
    if (how === "flush" && inc.session && !(await waitUntil(settled(inc.session.flush())))) problem("hang", "session.flush() did not settle");
    inc.alive = false;
    inc.messages = plain(inc.agent.state.messages);
    // Idle, and nothing changed while the last write was made: the store holds all of it.
    inc.idle = idleBefore && !inc.agent.state.isStreaming && inc.runs.every((r) => r.done) && JSON.stringify(inc.messages) === before;
    inc.log = inc.recorder?.log() && JSON.parse(inc.recorder.export());
    world.approvals = world.approvals.filter((a) => a.incarnation !== inc.n);
    // What runs on in this process after the page is gone is not the page's: stop it.
    inc.agent.abort();
    inc.agent.terminate?.();
    if (inc.session && !(await waitUntil(settled(inc.session.detach())))) problem("hang", "session.detach() did not settle");
  }

  const start = (inc, what, run) => {
    let promise;
    try {
      promise = Promise.resolve(run());
    } catch (err) {
      promise = Promise.reject(err);
    }
    const entry = { what, done: false, error: undefined };
    inc.runs.push(entry);
    promise.then(() => (entry.done = true), (err) => {
      entry.done = true;
      entry.error = err;
      log(`  ${what} rejected: ${err?.message ?? err}`);
    });
  };

  /** A branch step: refused while the agent runs, before it changes anything; any other refusal comes after its cut. */
  function branchStep(what, run) {
    start(inc, what, () =>
      run().catch((err) => {
        if (!/branches cannot change while the agent runs|does not follow a user message or a tool result/.test(err?.message)) problem("branches", `${what} was refused after it set the transcript: ${err?.message ?? err}`);
        throw err;
      }),
    );
  }

  /** Lets up to `n` turns of the event loop pass while the agent runs. */
  async function idleOrTicks(n) {
    for (let k = 0; k < n && inc.agent.state.isStreaming; k++) await tick();
  }

  function checkNow(inc) {
    const ps = keptTranscriptProblems(inc.agent.state.messages);
    if (ps.length) problem("strict-transcript", `${ps[0]} [${describe(inc.agent.state.messages)}]`);
  }

  log(`${subject}, seed ${seed}`);
  let inc = await incarnate();
  const agent = () => inc.agent;
  try {
    for (stepIndex = 0; stepIndex < steps.length; stepIndex++) {
      const [op, arg] = steps[stepIndex];
      log(`${stepIndex + 1}. ${showStep(steps[stepIndex])}`);
      switch (op) {
        case "prompt":
          start(inc, "prompt()", () => agent().prompt(`p${stepIndex + 1}`));
          break;
        case "steer":
          agent().steer(textMessage(`s${stepIndex + 1}`));
          break;
        case "followUp":
          agent().followUp(textMessage(`f${stepIndex + 1}`));
          break;
        case "continue":
          start(inc, "continue()", () => agent().continue());
          break;
        case "abort":
          agent().abort();
          break;
        case "approve":
        case "deny": {
          const dialog = world.approvals.find((a) => a.incarnation === inc.n);
          if (dialog) {
            log(`  ${op} ${dialog.id}`);
            dialog.decide(op === "approve");
          }
          break;
        }
        case "wait":
          for (let i = 0; i < arg; i++) await tick();
          break;
        case "reload": {
          const old = inc;
          await drop(old, arg);
          inc = await incarnate();
          const s = inc.session;
          log(`  restored: ${describe(inc.agent.state.messages)}${s?.pendingCalls?.length ? `; pending: ${s.pendingCalls.map((p) => `${p.toolCall.id}${p.approval ? " (approval)" : ""}`).join(" ")}` : ""}`);
          const restored = keptTranscriptProblems(inc.agent.state.messages);
          if (restored.length) problem("restore", `the restored transcript: ${restored[0]} [${describe(inc.agent.state.messages)}]`);
          if (arg === "flush" && old.idle) {
            const now = JSON.stringify(plain(inc.agent.state.messages));
            if (now !== JSON.stringify(old.messages)) problem("restore", `an idle agent reloaded after its last write restores another transcript: was [${describe(old.messages)}], restored [${describe(inc.agent.state.messages)}]`);
          }
          break;
        }
        case "resume":
          if (inc.session) start(inc, "session.resume()", () => inc.session.resume());
          break;
        case "edit":
        case "regenerate": {
          // The user waits a moment for the answer to end (a UI offers these on an idle agent), then
          // edits a user message, or runs again an answer that follows a user message or tool results.
          await idleOrTicks(60);
          const branches = inc.session?.branches;
          const messages = agent().state.messages;
          // Some answers cannot run again (one after the system prompt alone): refused before any change.
          const fits = (m, i) => (op === "edit" ? m.role === "user" : m.role === "assistant" && i > 0 && messages[i - 1].role !== "assistant");
          const at = messages.flatMap((m, i) => (fits(m, i) ? [i] : []));
          if (!branches || at.length === 0) break;
          const index = at[Math.floor(arg * at.length)];
          log(`  ${op}(${index})`);
          branchStep(`branches.${op}(${index})`, () => (op === "edit" ? branches.edit(index, `e${stepIndex + 1}`) : branches.regenerate(index)));
          break;
        }
        case "switchTo": {
          await idleOrTicks(60);
          const points = inc.session?.branches.points ?? [];
          if (points.length === 0) break;
          const p = points[Math.floor(arg * points.length)];
          const version = (p.version + 1) % p.count;
          log(`  switchTo(${p.index}, ${version})`);
          branchStep(`branches.switchTo(${p.index}, ${version})`, () => inc.session.branches.switchTo(p.index, version));
          break;
        }
        case "terminate":
          agent().terminate?.();
          break;
        case "workerThrows":
          agent().worker?.dispatchEvent?.(Object.assign(new Event("error"), { message: "Uncaught TypeError: x is not a function" }));
          break;
        case "breakNextWorker":
          breakNext = true;
          break;
        default:
          throw new Error(`unknown step ${op}`);
      }
      await tick();
      checkNow(inc);
    }
    stepIndex = steps.length;
    log("end: approve everything, the model answers with text; abort what does not end; resume; a last prompt");
    await windDown(inc);
  } catch (err) {
    problem("harness", err?.stack ?? String(err));
  } finally {
    for (const i of incarnations) if (i.alive) await drop(i, "flush");
    for (const p of ports) p.close();
  }
  for (const i of incarnations) await checkReplay(i);
  return { problems, trace };

  async function windDown(inc) {
    world.winding = true;
    for (const dialog of world.approvals.filter((a) => a.incarnation === inc.n)) dialog.decide(true);
    const idle = () => inc.runs.every((r) => r.done) && !inc.agent.state.isStreaming;
    /** Waits for the runs to end; aborts them once nothing happens for a while (a stalled stream, a tool that hangs). */
    const finish = async (what) => {
      if (await waitIdleOrQuiet(inc, idle)) return true;
      log(`  ${what} makes no progress: abort()`);
      inc.agent.abort();
      if (await waitUntil(idle)) return true;
      problem("hang", `${what} did not end after abort() [${inc.runs.filter((r) => !r.done).map((r) => r.what).join(", ")}]`);
      return false;
    };
    if (!(await finish("the run"))) return;
    if (inc.session?.pendingCalls?.length) {
      start(inc, "session.resume()", () => inc.session.resume());
      if (!(await finish("session.resume()"))) return;
    }
    start(inc, "prompt()", () => inc.agent.prompt("the end"));
    if (!(await finish("the last prompt"))) return;
    if (inc.starts !== inc.ends) problem("agent-end", `${inc.starts} runs started, ${inc.ends} agent_end`);
    if (inc.agent.state.pendingToolCalls.size > 0) problem("idle-state", `idle with pendingToolCalls ${[...inc.agent.state.pendingToolCalls].join(" ")}`);
    if (inc.agent.state.streamingMessage !== undefined) problem("idle-state", "idle with a streamingMessage");
    const ps = keptTranscriptProblems(inc.agent.state.messages, { running: inc.session?.pendingCalls?.length > 0 });
    if (ps.length) problem("strict-transcript", `at the end: ${ps[0]} [${describe(inc.agent.state.messages)}]`);
  }

  async function checkReplay(i) {
    // A log without inputs recorded nothing to play (an agent restored, then dropped); one cut mid-run
    // (the page dropped while a run went on) has no end to play to.
    if (!i.log || i.log.inputs.length === 0 || !i.idle) return;
    const replayed = new lib.Agent({
      initialState: { systemPrompt: "You are a test.", model: MODEL },
      // play() gives the agent the log's stream function; this one must never be called.
      streamFn: () => {
        throw new Error("the replay called the agent's own stream function");
      },
    });
    let replay;
    try {
      replay = createReplay(i.log);
    } catch (err) {
      return problem("replay", `createReplay refuses the recorded log of incarnation ${i.n}: ${err.message}`);
    }
    const counter = { events: 0 };
    // PI_MODEL_DUMP=1 (with PI_MODEL_SEED): each recorded log, and the messages of its replay.
    if (process.env.PI_MODEL_DUMP) {
      console.log(JSON.stringify(i.log));
      replayed.subscribe((e) => e.type.startsWith("message_") && e.type !== "message_update" && console.log(`replay: ${e.type} ${e.message.role} ${JSON.stringify(e.message).slice(0, 200)}`));
    }
    replayed.subscribe(() => void counter.events++);
    const played = replay.play(replayed);
    const ok = await waitIdleOrQuiet(counter, settled(played), REPLAY_QUIET_MS);
    if (!ok) {
      replayed.abort();
      return problem("replay-hang", `replay of incarnation ${i.n} did not settle`);
    }
    try {
      await played;
    } catch (err) {
      return problem("replay", `incarnation ${i.n}: ${err.message}`);
    }
    const got = plain(replayed.state.messages);
    const want = i.messages;
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    if (!same(got, want)) {
      problem("replay", `incarnation ${i.n}: the replay's transcript differs: recorded [${describe(want)}], replayed [${describe(got)}]`);
    }
  }
}
