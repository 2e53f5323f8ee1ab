// The worker half of a session on a WorkerAgent (workers.js is the main thread's): the session's
// writer (writer.js) runs here, on the worker's Agent, through the WorkerAgent's extension seam
// (js/worker/extensions.js). The agent's events become log records where they happen, and the
// store's writes are this worker's: the page pays nothing per answer.
import { WRAP_BEFORE_TOOL_CALL } from "../../src/agent/state.js";
import { packError } from "../worker/protocol.js";
import { createWriter } from "./writer.js";
import { indexedDBStore } from "./stores/indexeddb.js";
import { readSession, writerStart } from "./restore.js";
import { openChannel } from "./tabs.js";

/** The extension's name, on both sides. */
export const SESSION_WRITER = "session-writer";

// The stores this worker can make, by the description the page sends (stores/indexeddb.js `WORKER_STORE`).
const STORES = { indexeddb: (options) => indexedDBStore(options) };

// Per worker Agent, its session: { ready: a promise of the writer (undefined if it could not start), channel }.
const sessions = new WeakMap();

/**
 * Starts writing `agent`'s session. `from` is what the page restored, with the transcript as the
 * number of the agent's first messages that the log holds (the page set the rest, and the
 * worker's agent has the same); without it (a fresh worker after a failure) the log is read again
 * and the first write puts the agent's transcript and queues in it.
 */
function start(agent, post, { config, from }) {
  const onFail = (e) => post({ failed: packError(e) });
  const store = STORES[config.store?.kind]?.(config.store.options);
  if (!store) {
    onFail(new Error(`pi-agent-wasm/session: the worker cannot make a store of kind ${JSON.stringify(config.store?.kind)}`));
    return { ready: Promise.resolve(undefined) };
  }
  const channel = config.channel ? openChannel(config.channel) : undefined;
  const begin = (start) => {
    const writer = createWriter(agent, {
      id: config.id, store, flushMs: config.flushMs, from: start, onFail, broadcast: (message) => channel?.postMessage(message),
    });
    agent[WRAP_BEFORE_TOOL_CALL](writer.wrapBeforeToolCall);
    return writer;
  };
  if (from) {
    const s = agent.state;
    return {
      channel,
      ready: Promise.resolve(begin({
        ...from,
        mirror: s.messages.slice(0, from.mirror),
        model: from.model ? s.model : undefined,
        thinkingLevel: from.thinkingLevel ? s.thinkingLevel : undefined,
      })),
    };
  }
  const ready = readSession(store, config.id, onFail).then((log) => {
    if (!log) return undefined;
    const writer = begin({ ...writerStart(log), resync: true });
    writer.flush();
    return writer;
  });
  return { channel, ready };
}

/** Runs `f(writer, session)` on `agent`'s writer, then answers the page's request `n`. */
function answer(agent, post, n, f) {
  const session = sessions.get(agent);
  const reply = () => post({ n });
  if (!session) return void reply();
  session.ready.then((writer) => writer && f(writer, session)).then(reply, reply);
}

export const sessionInWorker = {
  [SESSION_WRITER](v, { agent, post }) {
    switch (v.cmd) {
      case "start":
        sessions.set(agent, start(agent, post, v));
        break;
      case "record":
        sessions.get(agent)?.ready.then((writer) => writer?.record(v.record));
        break;
      case "close":
        sessions.get(agent)?.ready.then((writer) => writer?.close(v.closed));
        break;
      case "flush":
        answer(agent, post, v.n, (writer) => writer.flush());
        break;
      case "clear":
        answer(agent, post, v.n, (writer) => writer.clear(v.header));
        break;
      case "stop":
        answer(agent, post, v.n, (writer, session) => {
          if (sessions.get(agent) === session) sessions.delete(agent);
          agent[WRAP_BEFORE_TOOL_CALL](undefined);
          return writer.stop().then(() => session.channel?.close());
        });
        break;
    }
  },
};
