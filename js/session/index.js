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
//   lease.js      another device running the session (a store with leases): follow it, take over
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
import { FOLLOW_MS, LEASE_MS, createLease, later } from "./lease.js";

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
  // Where the session runs while this tab does not lead: "tab" (another tab of this browser) or "device".
  let elsewhere;
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
  const refusal = () =>
    new Error(
      `pi-agent-wasm/session: session "${id}" ${takingOver ? "is being restored" : elsewhere === "device" ? "is running on another device" : "is running in another tab"}`,
    );
  // A run waits for a catch-up with another writer, is refused while the tab does not lead, and
  // with a store that has leases, runs once this device holds the session's lease (see `leased`).
  let bypass = false;
  const gate = (again) => {
    if (bypass) {
      bypass = false;
      return undefined;
    }
    if (catchingUp) return catchUp.settled().then(again);
    if (!leader) return Promise.reject(refusal());
    if (lease) return leased(again);
    return undefined;
  };
  waiting.wrap(runs, gate);
  // waitForIdle() also waits for a run that waits for its lease.
  const waitForIdle = agent.waitForIdle;
  runs.set("waitForIdle", async function () {
    while (acquiring) await acquiring.catch(() => {});
    return waitForIdle.call(agent);
  });
  // What runs call as beforeToolCall: the app's hook, its waits written to the log and tracked.
  agent[WRAP_BEFORE_TOOL_CALL]((hook) => waiting.track(writer?.wrapBeforeToolCall ? writer.wrapBeforeToolCall(hook) : hook));

  // A read that fails while following another device is tried again at the next poll, from the log's start.
  const followFailed = (err) => {
    if (elsewhere !== "device" || leader) return fail(err);
    follower.restart();
    followedLength = -1;
  };
  const follower = createFollower({ agent, store, id, fail: followFailed, notify, following: () => !leader && !takingOver && !detached });

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
  let becoming;
  const becomeLeader = () =>
    (becoming ??= lead().finally(() => {
      becoming = undefined;
    }));
  async function lead() {
    takingOver = true;
    wake();
    // After following another device: the messages shown keep their objects where the log has the same.
    const from = await restore(elsewhere === "device" ? agent.state.messages : undefined);
    leader = true;
    takingOver = false;
    elsewhere = undefined;
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
      // This device follows another now (its lease was lost during the catch-up): it does not write.
      if (!leader) return notify();
      const written = startWriter(caughtUpFrom);
      notify();
      return written;
    },
    grew: async () => typeof store.loadFrom === "function" && String((await store.loadFrom(id, writer?.length ?? 0)) ?? "").length > 0,
    // Refused when another device runs the session now (this one follows it): reported, the session goes on.
    prompt: (messages) =>
      Promise.resolve(agent.state.isStreaming ? messages.forEach((m) => agent.followUp(m)) : agent.prompt(messages)).catch((err) =>
        leader ? fail(err) : report(err),
      ),
    fail,
  });
  // ---- another device running the session (a store with leases: httpStore; lease.js). This device
  // holds the lease while it runs the session; while another does, it follows that device's log.
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const followMs = options.followMs ?? FOLLOW_MS;
  const lease = typeof store.lease === "function" ? createLease(store, id, { ms: leaseMs, onLost: () => void yieldTo(true) }) : undefined;
  let followedLength = 0; // the log's length when the device followed was last read
  let runsHeld = 0; // runs asked for that hold the lease (see `leased`)
  let acquiring; // the request for the lease of a run that waits for it
  /** Runs `again()` (the run asked for) once this device holds the lease; refuses it while another device does. */
  function leased(again) {
    runsHeld++;
    const run = () => {
      bypass = true;
      try {
        return Promise.resolve(again());
      } finally {
        bypass = false;
      }
    };
    let out;
    if (lease.held) out = run();
    else {
      const asked = (acquiring = lease.acquire());
      out = asked.then(async (state) => {
        if (acquiring === asked) acquiring = undefined;
        // A store that failed to answer does not stop the run: its writes will say what is wrong.
        if (!lease.elsewhere(state) || lease.held) return run();
        await yieldTo(false);
        throw refusal();
      });
    }
    const done = () => --runsHeld === 0 && void releaseWhenIdle();
    out.then(done, done);
    return out;
  }
  /** Lets go of the lease once no run goes on, after the log has all of the run (another device restores from it). */
  async function releaseWhenIdle() {
    if (!lease.held || runsHeld > 0) return;
    if (agent.state.isStreaming) {
      await agent.waitForIdle();
      return releaseWhenIdle();
    }
    await writer?.flush();
    if (runsHeld === 0 && !agent.state.isStreaming && !takingOver) await lease.release();
  }
  /**
   * Another device runs the session: this one stops leading and follows it. `cut`: it took the
   * session over while this device ran it (a run going on here is aborted, what it had batched is
   * not written); else this device was idle (what it batched is written first).
   */
  async function yieldTo(cut) {
    if (!leader || detached) return;
    leader = false;
    elsewhere = "device";
    const w = writer;
    writer = undefined;
    if (!cut) await w?.flush();
    w?.halt?.();
    notify();
    if (cut) {
      agent.abort();
      await agent.waitForIdle();
    }
    await followDevice();
  }
  let wake = () => {};
  const sleep = (ms) =>
    new Promise((resolve) => {
      const t = later(ms, resolve);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  /**
   * Shows the log as the other device writes it, until its lease is let go of or expires (or the
   * user takes over): resolves once it shows the log, and reads it again with back-off meanwhile.
   */
  async function followDevice() {
    elsewhere = "device";
    follower.restart();
    if (locks && !channel) channel = openChannel(name);
    followedLength = 0;
    await follower.show();
    if (followedLength === 0) followedLength = follower.length;
    notify();
    void pollDevice().catch(fail);
  }
  async function pollDevice() {
    let delay = followMs;
    while (elsewhere === "device" && !leader && !takingOver && !detached) {
      await sleep(delay);
      if (elsewhere !== "device" || leader || takingOver || detached) return;
      const state = await lease.peek();
      const grew = state !== undefined && state.length !== followedLength;
      if (grew) {
        if (state.length < followedLength) follower.heard(REPLACED);
        followedLength = state.length;
        await follower.show();
        // The other tabs of this browser follow this one's channel.
        channel?.postMessage(state.length);
      }
      delay = grew ? followMs : Math.min(delay * 2, Math.max(followMs, Math.min(followMs * 16, leaseMs / 4)));
      if (state !== undefined && !lease.elsewhere(state)) return becomeLeader();
    }
  }
  /** Leads, or follows the device that holds the lease. */
  async function leadOrFollow() {
    const state = lease && (await lease.peek());
    if (lease?.elsewhere(state)) return followDevice();
    return becomeLeader();
  }
  /** Takes the session over from the device running it: its run shows as interrupted here, and stops there. */
  async function takeOver() {
    if (detached || leader) return;
    if (elsewhere === "tab") throw new Error(`pi-agent-wasm/session: session "${id}" is running in another tab: this tab takes over when that tab closes`);
    // Being restored already (leading in a moment).
    if (elsewhere !== "device") return becoming;
    takingOver = true;
    wake();
    await lease.acquire(true);
    await becomeLeader();
    // Held a little longer than the other device takes to renew, so that it learns of it and stops
    // its run (its next write would also be refused); then let go of unless a run holds it.
    later(leaseMs / 2, () => void releaseWhenIdle());
  }

  // Back on a page whose log other browsers or devices write too: show what they wrote meanwhile,
  // or follow the device that runs the session now.
  const onVisible = async () => {
    if (document.visibilityState !== "visible" || !leader || catchingUp) return;
    if (lease && !lease.held && !agent.state.isStreaming && lease.elsewhere(await lease.peek())) return void yieldTo(false);
    void catchUp.check();
  };
  const watchVisible = store.shared === true && typeof document === "object" && document !== null;
  if (watchVisible) document.addEventListener("visibilitychange", onVisible);

  const lock = locks && tabLock(locks, name);
  if (!lock || (await lock.tryLead())) await leadOrFollow();
  else {
    elsewhere = "tab";
    channel = openChannel(name);
    if (channel) channel.onmessage = (event) => void (!detached && follower.heard(event.data));
    await follower.show();
    // Waits for the leader's tab to close, then takes over.
    lock.waitToLead(() => (detached ? undefined : leadOrFollow()));
  }

  function resume(options) {
    const held = gate(() => resume(options));
    return held ?? waiting.resume(options);
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
    refuse: refusal,
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
      // A tab or device that follows another shows the conversation the log holds, as a restore would.
      return restored || (!leader && follower.showing);
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
    /** Where the session runs while this tab does not lead: "tab" (another tab), "device" (another browser or device), or undefined. */
    get runningElsewhere() {
      return leader ? undefined : elsewhere;
    },
    /** Takes the session over from the device running it (its run shows as interrupted here and stops there). */
    takeOver,
    /** In a following tab, the answer the leading tab (or device) is streaming. */
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
      wake();
      await lease?.release();
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
