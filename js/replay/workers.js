// A WorkerAgent's runs, recorded and played where its loop runs: in its worker (in-worker.js is
// the worker half, through the WorkerAgent's extension seam, js/worker/extensions.js). The
// recorder there writes the log and sends each change here, so `recorder.log()` on the main thread
// is the log an in-page Agent's run would give; playback runs the log's stand-ins and keeps its
// order there, and asks this side for the inputs only the main thread can make (a run, an edit of
// the transcript the page holds).
import { clone } from "./log.js";
import { ReplayDivergenceError } from "./divergence.js";

/** The WorkerAgent's extension seam (`Symbol.for`, as js/worker/extensions.js defines it). */
export const WORKER_SEAM = Symbol.for("pi-agent-wasm.workerExtension");
export const RECORDER = "replay-recorder";
export const PLAYER = "replay-player";

/** Records `agent` (a WorkerAgent) in its worker; `store` is the main thread's copy of the log. */
export function recordInWorker(agent, store) {
  const post = agent[WORKER_SEAM](RECORDER, {
    message(v) {
      for (const op of v.ops ?? []) store.apply(op);
    },
    // A fresh worker (after a failure or terminate()) goes on with the log as it stands. What the
    // last one's run did after the last change it sent is lost: an input says so (playback ends
    // the run there), and the fresh recorder writes the whole transcript the page gave it as an
    // edit before the next input.
    started() {
      const n = store.log.inputs.length;
      store.apply(["i", { t: store.log.inputs[n - 1]?.t ?? 0, op: "lost" }]);
      store.apply(["st", ["i", n]]);
      store.apply(["running", false]);
      post({ cmd: "record", log: store.snapshot() });
    },
  });
  post({ cmd: "record" });
  return agent;
}

/** Attaches the stand-ins of `log` (already read) in `agent`'s worker. */
export function attachInWorker(agent, log, options) {
  const post = agent[WORKER_SEAM](PLAYER, { message() {}, started: () => post({ cmd: "attach", log, options }) });
  post({ cmd: "attach", log, options });
  return agent;
}

/**
 * Plays `log` on `agent` (a WorkerAgent): the transcript and settings are set here (the page holds
 * the transcript), the rest plays in the worker. Resolves as `play()` does; `diverged(error)` is
 * told the divergence when the worker finds it.
 */
export function playInWorker(agent, log, options, diverged) {
  return new Promise((res, rej) => {
    let divergence;
    // The half stays registered on the agent: once settled, it ignores what comes.
    let settled = false;
    const resolve = () => ((settled = true), res());
    const reject = (e) => ((settled = true), rej(e));
    const settings = log.agent ?? {};
    for (const key of ["steeringMode", "followUpMode", "toolExecution"]) if (settings[key] !== undefined) agent[key] = settings[key];
    if (settings.model !== undefined) agent.state.model = clone(settings.model);
    if (settings.thinkingLevel !== undefined) agent.state.thinkingLevel = settings.thinkingLevel;
    if (log.initial !== undefined) agent.state.messages = clone(log.initial);
    const post = agent[WORKER_SEAM](PLAYER, {
      message(v) {
        if (settled) return;
        if (v.cmd === "input") perform(v.n);
        else if (v.cmd === "aborted") agent.abort();
        else if (v.cmd === "diverged") diverged((divergence = new ReplayDivergenceError(v.message, v.request)));
        else if (v.cmd === "played") {
          if (v.message === undefined) resolve();
          else reject(divergence ?? new ReplayDivergenceError(v.message, v.request));
        }
      },
      started() {
        if (settled) return;
        const error = new ReplayDivergenceError("Replay diverged: the agent's worker ended during playback", undefined);
        diverged(error);
        reject(error);
      },
    });
    /** An input the worker half asks for: a run, or an edit of the transcript, made here once the page's agent is idle. */
    async function perform(n) {
      const x = log.inputs[n];
      let run;
      try {
        await agent.waitForIdle();
        if (x.op === "prompt") run = x.text !== undefined ? agent.prompt(x.text, clone(x.images)) : agent.prompt(clone(x.m));
        else if (x.op === "continue") run = agent.continue();
        else if (x.op === "reset") agent.reset();
        else if (x.op === "messages") agent.state.messages = [...agent.state.messages.slice(0, x.keep), ...clone(x.add)];
      } catch {
        // What a refused input changes, the worker half finds (as a divergence).
      }
      // The worker half tracks the run to its end, as play() does in the page.
      Promise.resolve(run).catch(() => {}).then(() => post({ cmd: "ran", n }));
    }
    post({ cmd: "play", log, options });
  });
}
