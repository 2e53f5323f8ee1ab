// The worker half of recording and playing a WorkerAgent (workers.js is the main thread's): a
// recorder attached to the worker's Agent, whose changes of the log are sent to the main thread,
// and playback on that Agent, which asks the main thread for the runs and transcript edits.
import { createRecorder } from "./recorder.js";
import { createPlayer } from "./player.js";
import { PLAYER, RECORDER } from "./workers.js";

// Stream items are the most frequent changes: sent at most once a frame while they stream;
// anything else at the end of the task that made it.
const FRAME_MS = 16;

function recorderHalf(v, { agent, post }) {
  if (v?.cmd !== "record") return;
  let ops = [];
  let timer;
  let queued = false;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    queued = false;
    if (ops.length === 0) return;
    const out = ops;
    ops = [];
    post({ ops: out });
  };
  // The objects a request, call, decision or input starts as are still written to here: they cross as they are now.
  const FRESH = new Set(["q", "c", "d", "i", "agent"]);
  const onWrite = (op) => {
    ops.push(FRESH.has(op[0]) ? structuredClone(op) : op);
    if (op[0] === "ev" || op[0] === "rd") timer ??= setTimeout(flush, FRAME_MS);
    else if (op[0] === "running" && op[1] === false) flush();
    else if (!queued) {
      queued = true;
      queueMicrotask(flush);
    }
  };
  createRecorder({ onWrite, from: v.log, current: v.current === true }).attach(agent);
}

const inputs = new Map();
function playerHalf(v, { agent, post }) {
  if (v?.cmd === "ran") return inputs.get(v.n)?.();
  if (v?.cmd !== "play" && v?.cmd !== "attach") return;
  // The main thread read the log whole before sending it.
  const replay = createPlayer(v.log, {
    ...v.options,
    onDivergence: (e) => post({ cmd: "diverged", message: e.message, request: e.request }),
    // The main thread holds the runs and the transcript: it makes those inputs, the rest happen here.
    delegate: (x, n) => new Promise((resolve) => {
      inputs.set(n, resolve);
      post({ cmd: "input", n });
    }),
    onAbort: () => post({ cmd: "aborted" }),
    applied: true,
  });
  if (v.cmd === "attach") return void replay.attach(agent);
  replay.play(agent).then(
    () => post({ cmd: "played" }),
    (e) => post({ cmd: "played", message: String(e?.message ?? e), request: e?.request }),
  );
}

/** The worker half of pi-agent-wasm/replay's extensions (js/worker/extension-halves.js). */
export const replayInWorker = { [RECORDER]: recorderHalf, [PLAYER]: playerHalf };
