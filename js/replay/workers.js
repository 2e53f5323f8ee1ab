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
  const last = () => store.log.inputs[store.log.inputs.length - 1];
  /** Makes `x` the log's next input, in place (written here, not by a worker). */
  const input = (x) => {
    const n = store.log.inputs.length;
    store.apply(["i", { t: last()?.t ?? 0, ...x }]);
    store.apply(["st", ["i", n]]);
  };
  // What the last worker's run did after the last change it sent is lost: an input says so
  // (playback ends the run there, and empties the queues the page queues again).
  const lost = () => {
    if (last()?.op !== "lost") input({ op: "lost" });
    store.apply(["running", false]);
  };
  // Set when the worker failed, until a fresh one starts: the run the page ends then is not the worker's.
  let failed = false;
  // The transcript the page held when this side wrote it as an edit, and how many inputs the log had then.
  let wrote;
  const post = agent[WORKER_SEAM](RECORDER, {
    message(v) {
      for (const op of v.ops ?? []) store.apply(op);
    },
    // A fresh worker (after a failure or terminate()) goes on with the log as it stands, and its
    // recorder writes the whole transcript the page gave it as an edit before the next input.
    started() {
      failed = false;
      unwatch?.();
      unwatch = undefined;
      // The last worker ended before its recorder sent anything (terminate() at once): the fresh one
      // starts the log, with the settings, transcript and tools the page gives it.
      if (store.log.agent === undefined) return void post({ cmd: "record" });
      // The log's last input is the page's transcript, which the fresh worker starts with: it goes on from there.
      const messages = agent.state.messages;
      const current = wrote !== undefined && wrote.n === store.log.inputs.length && wrote.messages.length === messages.length && wrote.messages.every((m, k) => m === messages[k]);
      wrote = undefined;
      if (!current) lost();
      post({ cmd: "record", log: store.snapshot(), current });
    },
    stopped() {
      failed = true;
      // Until a fresh worker starts, the page's edits of the transcript (a branch switched) are this side's to write.
      unwatch ??= agent.subscribeState?.(() => void (!agent.state.isStreaming && edit()), { coalesce: false });
    },
  });
  let unwatch;
  /** The transcript the page holds, as an edit, when it is not the one this side wrote last. */
  function edit() {
    if (store.log.agent === undefined) return;
    const messages = agent.state.messages;
    if (wrote && wrote.messages.length === messages.length && wrote.messages.every((m, k) => m === messages[k])) return;
    let add;
    try {
      add = clone(messages);
    } catch {
      return;
    }
    lost();
    input({ op: "messages", keep: 0, add });
    wrote = { n: store.log.inputs.length, messages: messages.slice() };
  }
  // A run the page ended because its worker failed (one that never loaded records nothing at all):
  // the transcript the page holds then is an edit, so that playback ends with it.
  agent.subscribe((event) => void (event?.type === "agent_end" && failed && edit()), { deltas: false });
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
