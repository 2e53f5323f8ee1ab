// pi-agent-wasm/session: an Agent whose conversation survives a reload.
//
// `attachSession(agent, { id })` restores the agent from its log, then keeps the log up to date.
// A session is made of parts, each in its module:
//   log.js        the log's text format, its reader and the fold of its records (pure)
//   stores/       where a log lives: memory.js, indexeddb.js
//   restore.js    reading the log and putting its conversation into the agent
//   writer.js     what the agent does, as records batched in memory and appended to the store
//   tabs.js       one leading tab per session (Web Locks); the others follow its writes
//   conflict.js   another writer of the log (another browser or device): the catch-up with it
//   waiting.js    the calls a reload left waiting: resume(), and what prompt() and continue() do to them
//   workers.js, in-worker.js   a WorkerAgent's writer in its worker
//   own.js        the agent's methods a session replaces (its runs, its queues) and puts back
//   branches.js   the versions of the conversation (edit, regenerate, switch) and their tree
// and this file, which joins them.
// Built on the public Agent API (`subscribe`, `state`, `getSnapshot`, the queue methods) and a
// seam of two symbol-keyed methods that `Agent` and `WorkerAgent` both implement (src/agent/state.js):
// one wraps the `beforeToolCall` that runs call, one runs a restored tool call as a run would. So
// the session takes either, and with a WorkerAgent, `resume()` runs its calls in the worker. A
// WorkerAgent also has the seam of extensions with a half in its worker: with a store the worker
// can make (the IndexedDB store), the writer runs in the worker, where the events are; with any
// other store, in the page.
import { RUN_TOOL_CALL, WRAP_BEFORE_TOOL_CALL } from "../../src/agent/state.js";
import { SessionLogError, logHeader } from "./log.js";
import { memoryStore } from "./stores/memory.js";
import { WORKER_STORE, indexedDBStore } from "./stores/indexeddb.js";
import { createWriter, onPageHide, replaceLog, REPLACED } from "./writer.js";
import { readSession, restoreInto } from "./restore.js";
import { createFollower, openChannel, tabLock, tabsName } from "./tabs.js";
import { ownMethods } from "./own.js";
import { createWaiting } from "./waiting.js";
import { WORKER_EXTENSION, writerInWorker } from "./workers.js";
import { createCatchUp } from "./conflict.js";
import { createBranches, createTree } from "./branches.js";

export { memoryStore, indexedDBStore };
export { SessionLogError, INTERRUPTED_STREAM, INTERRUPTED_TOOL } from "./log.js";
export { MOVED_ON_APPROVAL, MOVED_ON_CALL } from "./waiting.js";
export { httpStore, SessionConflictError } from "./stores/http.js";

const defaultStore = () => (typeof indexedDB === "object" && indexedDB ? indexedDBStore() : memoryStore());

/**
 * Attaches a durable session to `agent` and restores it from the store. Resolves once the
 * agent holds the restored conversation and the store holds what the agent holds. See the README's "Sessions".
 */
export async function attachSession(agent, options = {}) {
  const id = options.id;
  if (typeof id !== "string" || id === "") throw new TypeError("attachSession(agent, options): options.id must be a non-empty string");
  if (typeof agent?.[WRAP_BEFORE_TOOL_CALL] !== "function" || typeof agent[RUN_TOOL_CALL] !== "function") {
    throw new TypeError("attachSession(agent, options): agent must be an Agent or a WorkerAgent of pi-agent-wasm");
  }
  const store = options.store ?? defaultStore();
  // The store's description in a WorkerAgent's worker, when the writer runs there.
  const inWorker = typeof agent[WORKER_EXTENSION] === "function" ? store[WORKER_STORE] : undefined;
  const flushMs = options.flushMs ?? 100;
  const onError = options.onError;
  const locks = options.tabs !== false && typeof navigator === "object" ? navigator.locks : undefined;
  const name = tabsName(id);

  const listeners = new Set();
  const notify = () => {
    for (const l of listeners) {
      try {
        l(session);
      } catch (err) {
        console.error("pi-agent-wasm/session listener:", err);
      }
    }
  };

  const report = (err) => {
    try {
      onError?.(err);
    } catch (e) {
      console.error("pi-agent-wasm/session onError:", e);
    }
  };
  // ---- failure: reported once, then the session stops writing and the agent keeps working
  let failed;
  const fail = (err) => {
    if (failed) return;
    failed = err instanceof Error ? err : new Error(String(err));
    report(failed);
    notify();
  };

  let leader = false;
  let takingOver = false;
  let detached = false;
  let channel;
  let writer;
  let unhide;

  // ---- restore
  const replaySafe = (name) => agent.state.tools.some((t) => t?.name === name && t.replay === "safe");
  let interrupted = false;
  let restored = false;
  let dropped = 0;
  // The versions of the conversation (branches.js) in the leading tab; a following tab reads its fold's.
  let tree = createTree();

  // The calls a reload left waiting, and the agent's runs: refused in a following tab (the leading
  // tab runs the session), and kept valid for the next request while calls wait.
  const waiting = createWaiting(agent, { notify, record: (r) => writer?.record(r), flush: () => writer?.flush() });
  const runs = ownMethods(agent);
  // A run waits for a catch-up with another writer, and is refused while the tab does not lead.
  const gate = (again) => {
    if (catchingUp) return catchUp.settled().then(again);
    if (leader) return undefined;
    return Promise.reject(new Error(`pi-agent-wasm/session: session "${id}" ${takingOver ? "is being restored" : "is running in another tab"}`));
  };
  waiting.wrap(runs, gate);
  // What runs call as beforeToolCall: the app's hook, its waits written to the log and tracked.
  agent[WRAP_BEFORE_TOOL_CALL]((hook) => waiting.track(writer?.wrapBeforeToolCall ? writer.wrapBeforeToolCall(hook) : hook));

  const follower = createFollower({ agent, store, id, fail, notify, following: () => !leader && !takingOver && !detached });

  /**
   * Reads the log and puts it into the agent (`keep`: the agent's messages, kept where the log has
   * the same, see conflict.js); gives what the writer starts from, undefined when nothing can be written.
   */
  async function restore(keep) {
    const log = await readSession(store, id, fail);
    if (!log) return undefined;
    const out = restoreInto(agent, log, replaySafe, keep);
    ({ restored, interrupted, dropped, tree } = out);
    waiting.set(out.pending);
    // Records lost in the middle of the log: what precedes them is restored, and the log repaired to it.
    if (out.damage) report(new SessionLogError(`session "${id}": ${out.damage}; restored the records before it (${dropped} characters dropped)`));
    return out.from;
  }
  /** Starts writing from `from`; gives the first write (what the agent holds that the log lacks). */
  function startWriter(from) {
    if (failed || !from) return undefined;
    if (inWorker) {
      writer = writerInWorker(agent, { id, store: inWorker, flushMs, channel: locks ? name : undefined, from, onFail: fail });
      // The page going away asks the worker to write what it has batched, and then nothing more.
      unhide = onPageHide(() => writer.flush(), (closed) => writer.close(closed));
    } else {
      writer = createWriter(agent, {
        id, store, flushMs, from, onFail: fail, broadcast: (message) => channel?.postMessage(message),
        // Another writer extended the log: the writer halted; the session catches up (conflict.js).
        onConflict: (err) => void catchUp.conflict(err),
      });
    }
    return writer.flush();
  }

  // Runs stay refused until the restore is done: a prompt during it would be overwritten by it.
  async function becomeLeader() {
    takingOver = true;
    const from = await restore();
    leader = true;
    follower.stop();
    if (locks && !channel) channel = openChannel(name);
    // What the agent holds now (its system prompt, model, a transcript set before attaching) is
    // written before the session is handed over, not in the middle of the first run.
    const written = startWriter(from);
    notify();
    await written;
  }

  // ---- another writer of the log (another browser or device, through a shared store): the writer
  // that was refused halts, and the session catches up with the log as it is (conflict.js).
  let catchingUp = false;
  let halted; // the writer that was refused, while the session catches up
  let caughtUpFrom;
  const catchUp = createCatchUp(agent, {
    pause() {
      catchingUp = true;
      // Halted already when one of its writes was refused; not when the page was shown again (check()).
      writer?.halt?.();
      halted = writer ?? halted;
      writer = undefined;
    },
    writtenMessages: () => (writer ?? halted)?.writtenMessages?.() ?? 0,
    async restore(keep) {
      caughtUpFrom = await restore(keep);
    },
    resume() {
      catchingUp = false;
      const written = startWriter(caughtUpFrom);
      notify();
      return written;
    },
    grew: async () => typeof store.loadFrom === "function" && String((await store.loadFrom(id, writer?.length ?? 0)) ?? "").length > 0,
    prompt: (messages) =>
      Promise.resolve(agent.state.isStreaming ? messages.forEach((m) => agent.followUp(m)) : agent.prompt(messages)).catch(fail),
    fail,
  });
  // Back on a page whose log other browsers or devices write too: show what they wrote meanwhile.
  const onVisible = () => document.visibilityState === "visible" && leader && !catchingUp && void catchUp.check();
  const watchVisible = store.shared === true && typeof document === "object" && document !== null;
  if (watchVisible) document.addEventListener("visibilitychange", onVisible);

  const lock = locks && tabLock(locks, name);
  if (!lock || (await lock.tryLead())) await becomeLeader();
  else {
    channel = openChannel(name);
    if (channel) channel.onmessage = (event) => void (!detached && follower.heard(event.data));
    await follower.show();
    // Waits for the leader's tab to close, then takes over.
    lock.waitToLead(() => (detached ? undefined : becomeLeader()));
  }

  async function resume(options) {
    if (!leader) throw new Error(`pi-agent-wasm/session: session "${id}" is running in another tab`);
    return waiting.resume(options);
  }

  const branches = createBranches(agent, {
    tree() {
      if (!leader) return follower.tree ?? createTree();
      tree.sync(agent.getSnapshot().messages);
      return tree;
    },
    leader: () => leader && !detached,
    // A branch waits for a catch-up with another writer, as a run does (the writer is halted during it).
    settled: () => (catchingUp ? catchUp.settled() : undefined),
    // A branch's cut goes to the writer, in the page or in a WorkerAgent's worker.
    record: (r) => writer?.record(r),
    // Restored calls that resume() runs hold the transcript as a run does; those only waiting are
    // forgotten when the transcript no longer holds their answer.
    busy: () => waiting.running,
    moved: () => waiting.forget(),
    flush: () => writer?.flush(),
    refuse: () => new Error(`pi-agent-wasm/session: session "${id}" is running in another tab`),
    subscribe(listener) {
      const off = agent.subscribeState(listener);
      listeners.add(listener);
      return () => {
        off();
        listeners.delete(listener);
      };
    },
  });

  const session = {
    id,
    /** The versions of the conversation: where the transcript forks, and edit, regenerate and switch (branches.js). */
    branches,
    /** Whether the store held this session (the agent now holds its conversation). */
    get restored() {
      return restored;
    },
    /** Whether restoring cut an answer or a tool call that was in flight. */
    get interrupted() {
      return interrupted;
    },
    /** Characters lost at the last restore: a torn tail, or all that followed records missing or damaged. */
    get dropped() {
      return dropped;
    },
    /** Restored tool calls that still have to run (`resume()` runs them), in source order. */
    get pendingCalls() {
      return waiting.pending;
    },
    /** The pending calls that were waiting for approval in `beforeToolCall`. */
    get pendingApprovals() {
      return waiting.pending.filter((p) => p.approval);
    },
    /** True in the tab that runs the session; the others follow it and may take over. */
    get isLeader() {
      return leader;
    },
    /** In a following tab, the answer the leading tab is streaming. */
    get remoteStreamingMessage() {
      return follower.streaming;
    },
    /** The store's first failure; the session stopped writing then. */
    get error() {
      return failed;
    },
    resume,
    /** Writes what is batched now; resolves when the store has it. */
    flush: () => writer?.flush() ?? Promise.resolve(),
    /** Calls `listener(session)` when the session's own state changes. */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Writes what is batched, detaches from the agent, releases the tab lock. */
    async detach() {
      if (detached) return;
      unhide?.();
      if (watchVisible) document.removeEventListener("visibilitychange", onVisible);
      await writer?.stop();
      detached = true;
      leader = false;
      agent[WRAP_BEFORE_TOOL_CALL](undefined);
      branches.close();
      runs.restoreAll();
      channel?.close();
      lock?.release();
    },
    /** Deletes the session's log (the agent keeps its state). */
    async clear() {
      tree = createTree();
      if (writer) return void (await writer.clear(logHeader()));
      try {
        await replaceLog(store, id, logHeader());
        channel?.postMessage(REPLACED);
      } catch (err) {
        fail(err);
      }
    },
  };
  return session;
}
