// The main thread's half of a session on a WorkerAgent whose writer runs in its worker
// (in-worker.js): an object with the writer's `flush`, `record`, `close`, `clear` and `stop`, whose work is
// done in the worker, through the WorkerAgent's extension seam (js/worker/extensions.js).
import { unpackError } from "../worker/protocol.js";

/** The seam (`Symbol.for`, as js/worker/extensions.js defines it). */
export const WORKER_EXTENSION = Symbol.for("pi-agent-wasm.workerExtension");
/** The extension's name (in-worker.js `SESSION_WRITER`). */
const SESSION_WRITER = "session-writer";

/**
 * Starts the writer of session `id` in `agent`'s worker: `store` is the store's description there,
 * `from` what the page restored (writer.js `createWriter`), `channel` the tabs' channel name (or
 * undefined), `onFail(error)` called with the store's failure.
 */
export function writerInWorker(agent, { id, store, flushMs, channel, from, onFail }) {
  const config = { id, store, flushMs, channel };
  const waiting = new Map();
  let n = 0;
  let stopped = false;
  const settleAll = () => {
    for (const resolve of waiting.values()) resolve();
    waiting.clear();
  };
  const post = agent[WORKER_EXTENSION](SESSION_WRITER, {
    message(v) {
      if (v.failed) return void onFail(unpackError(v.failed));
      waiting.get(v.n)?.();
      waiting.delete(v.n);
    },
    // A fresh worker goes on writing: it reads the log again (the one that failed may have written more).
    started() {
      if (!stopped) post({ cmd: "start", config });
    },
    // Nothing the failed worker was asked will be answered; what it had not written is lost.
    stopped: settleAll,
  });
  // The transcript crosses as the number of the agent's first messages the log holds (the worker's
  // agent has the page's transcript), the model settings as whether the log had them.
  post({
    cmd: "start",
    config,
    from: { ...from, mirror: from.mirror.length, model: from.model !== undefined, thinkingLevel: from.thinkingLevel !== undefined },
  });
  const ask = (cmd, extra) =>
    new Promise((resolve) => {
      const k = ++n;
      waiting.set(k, resolve);
      post({ cmd, n: k, ...extra });
      // A worker that is not running answers nothing (it is started again by the next run).
      if (!agent.worker) settleAll();
    });
  return {
    flush: () => ask("flush"),
    record: (record) => post({ cmd: "record", record }),
    close: (closed) => post({ cmd: "close", closed }),
    clear: (header) => ask("clear", { header }),
    stop: () => {
      stopped = true;
      return ask("stop");
    },
  };
}
