// pi-agent-wasm/session: an Agent whose conversation survives a reload.
//
// `attachSession(agent, { id })` restores the agent from its log, then appends to the log what
// changes: each finished message once, the streaming answer as coalesced deltas, tool calls'
// progress, approvals waiting in `beforeToolCall`, the queues, the model and thinking level.
// Writes leave the event path: an event only appends to an in-memory batch, and the batch is
// written every `flushMs` (and soon after a message, a tool call or an approval request).
// Built only on the public Agent API: `subscribe`, `state`, `getSnapshot`, the hook fields and
// the queue methods.
import { runToolCall } from "./index.js";
import { SessionLogError, foldLog, logHeader, logLine, readLog, restoreFrom, toolResultMessage } from "./session-log.js";

export { SessionLogError, INTERRUPTED_STREAM, INTERRUPTED_TOOL } from "./session-log.js";

/** A store keeping sessions in memory (tests, Node, or a page that opts out of persistence). */
export function memoryStore() {
  const logs = new Map();
  return {
    load: async (id) => logs.get(id) ?? "",
    append: async (id, text) => void logs.set(id, (logs.get(id) ?? "") + text),
    replace: async (id, text) => void logs.set(id, text),
    clear: async (id) => void logs.delete(id),
  };
}

const request = (r) =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
const done = (tx) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
  });

/**
 * A store in IndexedDB (database `name`, default "pi-agent-wasm-sessions"): each write is one
 * row of appended text, so a write costs what it adds, whatever the log's length.
 */
export function indexedDBStore({ name = "pi-agent-wasm-sessions" } = {}) {
  let db;
  const open = () =>
    (db ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(name, 1);
      r.onupgradeneeded = () => r.result.createObjectStore("chunks", { autoIncrement: true }).createIndex("session", "s");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
      r.onblocked = () => reject(new Error(`IndexedDB database ${name} is blocked by another connection`));
    }));
  const tx = async (mode) => (await open()).transaction("chunks", mode);
  const deleteAll = async (store, id) => {
    for (const key of await request(store.index("session").getAllKeys(id))) store.delete(key);
  };
  return {
    async load(id) {
      const rows = await request((await tx("readonly")).objectStore("chunks").index("session").getAll(id));
      return rows.map((row) => row.d).join("");
    },
    async append(id, text) {
      const t = await tx("readwrite");
      t.objectStore("chunks").add({ s: id, d: text });
      await done(t);
    },
    async replace(id, text) {
      const t = await tx("readwrite");
      const store = t.objectStore("chunks");
      await deleteAll(store, id);
      store.add({ s: id, d: text });
      await done(t);
    },
    async clear(id) {
      const t = await tx("readwrite");
      await deleteAll(t.objectStore("chunks"), id);
      await done(t);
    },
  };
}

const defaultStore = () => (typeof indexedDB === "object" && indexedDB ? indexedDBStore() : memoryStore());

/** The prototype accessor of an Agent field (the hooks are accessors on `Agent.prototype`). */
function accessor(agent, key) {
  for (let o = Object.getPrototypeOf(agent); o; o = Object.getPrototypeOf(o)) {
    const d = Object.getOwnPropertyDescriptor(o, key);
    if (d) return d;
  }
  throw new TypeError(`attachSession: agent has no ${key} field`);
}

const QUEUE_METHODS = ["steer", "followUp", "clearSteeringQueue", "clearFollowUpQueue", "clearAllQueues", "reset"];
const RUN_METHODS = ["prompt", "continue"];

/**
 * Attaches a durable session to `agent` and restores it from the store. Resolves once the
 * agent holds the restored conversation. See the README's "Sessions".
 */
export async function attachSession(agent, options = {}) {
  const id = options.id;
  if (typeof id !== "string" || id === "") throw new TypeError("attachSession(agent, options): options.id must be a non-empty string");
  const store = options.store ?? defaultStore();
  const flushMs = options.flushMs ?? 100;
  const onError = options.onError;
  const locks = options.tabs !== false && typeof navigator === "object" ? navigator.locks : undefined;
  const channelName = `pi-agent-wasm-session:${id}`;

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

  // ---- failure: reported once, then the session stops writing and the agent keeps working
  let failed;
  const fail = (err) => {
    if (failed) return;
    failed = err instanceof Error ? err : new Error(String(err));
    try {
      onError?.(failed);
    } catch (e) {
      console.error("pi-agent-wasm/session onError:", e);
    }
    notify();
  };
  const guard = (f) => {
    try {
      return Promise.resolve(f()).catch((err) => {
        fail(err);
      });
    } catch (err) {
      fail(err);
      return Promise.resolve();
    }
  };

  // ---- the batch: records (objects, or lines already serialized) waiting for the next write
  let batch = [];
  let streamAt = -1; // index in `batch` of the streaming answer's `a` record, while unwritten
  let deltas; // the `d` record being coalesced
  let deltasAt = -1; // its index in `batch`
  let streaming = false;
  let mirror = []; // the transcript as the log has it (our own array)
  let steering = [];
  let followUps = [];
  let queuesDirty = false;
  let model;
  let thinkingLevel;
  let writer = Promise.resolve();
  let timer;
  let leader = false;
  let channel;
  let releaseLock;
  let detached = false;

  const schedule = (ms = flushMs) => {
    if (!leader || failed || detached) return;
    if (timer !== undefined) {
      if (ms >= flushMs) return;
      clearTimeout(timer);
    }
    timer = setTimeout(flush, ms);
  };
  const soon = () => schedule(0);

  function push(record) {
    batch.push(record);
    schedule();
  }

  // Deltas of one block are kept as an array of parts, joined when written: no string is
  // rebuilt per token.
  function deltaRecord() {
    return {
      entries: [],
      toJSON() {
        return { t: "d", e: this.entries.map(([k, i, p]) => (p === undefined ? [k, i] : [k, i, Array.isArray(p) ? p.join("") : p])) };
      },
    };
  }
  function delta(kind, index, payload) {
    let d = deltas;
    if (d === undefined) {
      d = deltas = deltaRecord();
      deltasAt = batch.length;
      batch.push(d);
    }
    const e = d.entries;
    const last = e[e.length - 1];
    if (typeof payload === "string") {
      if (last !== undefined && last[0] === kind && last[1] === index) last[2].push(payload);
      else e.push([kind, index, [payload]]);
    } else e.push([kind, index, payload]);
    if (timer === undefined) schedule();
  }

  /** Appends the batch (and what changed outside events) to the store, in order. */
  function flush() {
    clearTimeout(timer);
    timer = undefined;
    if (!leader || failed) return writer;
    const snap = agent.getSnapshot();
    const messages = snap.messages;
    const n = mirror.length;
    if (messages.length !== n || messages[n - 1] !== mirror[n - 1]) {
      if (messages.length > n && (n === 0 || messages[n - 1] === mirror[n - 1])) {
        for (let i = n; i < messages.length; i++) batch.push({ t: "m", m: messages[i] });
      } else batch.push({ t: "r", m: messages });
      mirror = messages.slice();
    }
    if (snap.model !== model || snap.thinkingLevel !== thinkingLevel) {
      model = snap.model;
      thinkingLevel = snap.thinkingLevel;
      batch.push({ t: "c", model, thinkingLevel });
    }
    if (queuesDirty) {
      queuesDirty = false;
      batch.push({ t: "q", s: steering, f: followUps });
    }
    if (batch.length === 0) return writer;
    let text = "";
    try {
      for (const r of batch) text += typeof r === "string" ? r : logLine(r);
    } catch (err) {
      fail(err);
    }
    batch = [];
    streamAt = -1;
    deltas = undefined;
    writer = writer.then(() => (failed ? undefined : guard(() => store.append(id, text)).then(() => !failed && channel?.postMessage(text))));
    return writer;
  }

  // ---- events of the agent's runs
  function onEvent(event) {
    if (!leader || failed) return;
    // The per-token path: a text delta joins the parts of the block it extends.
    if (event.type === "message_update" && streaming) {
      const e = event.assistantMessageEvent;
      if (e !== undefined && e !== null && e.type === "text_delta" && deltas !== undefined) {
        const entries = deltas.entries;
        const last = entries[entries.length - 1];
        if (last !== undefined && last[0] === "text" && last[1] === e.contentIndex && typeof e.delta === "string") {
          last[2].push(e.delta);
          return;
        }
      }
    }
    try {
      switch (event.type) {
        case "message_start":
          if (event.message?.role === "assistant") {
            streaming = true;
            deltas = undefined;
            streamAt = batch.length;
            // Serialized now: the partial it copies keeps growing.
            push(logLine({ t: "a", m: event.message }));
          }
          break;
        case "message_update": {
          if (!streaming) break;
          const e = event.assistantMessageEvent;
          switch (e?.type) {
            case "text_delta":
              delta("text", e.contentIndex, e.delta);
              break;
            case "thinking_delta":
              delta("thinking", e.contentIndex, e.delta);
              break;
            case "toolcall_delta":
              delta("call", e.contentIndex, e.delta);
              break;
            case "text_start":
              delta("T", e.contentIndex);
              break;
            case "thinking_start":
              delta("K", e.contentIndex);
              break;
            case "toolcall_start": {
              const block = event.message?.content?.[e.contentIndex];
              delta("C", e.contentIndex, { id: block?.id ?? e.id, name: block?.name ?? e.toolName });
              break;
            }
            case "toolcall_end":
              delta("E", e.contentIndex, JSON.parse(JSON.stringify(e.toolCall)));
              break;
            default:
              break;
          }
          break;
        }
        case "message_end": {
          const m = event.message;
          if (m?.role === "assistant" && streaming) {
            streaming = false;
            // The finished message supersedes its unwritten stream records (only they follow
            // them in the batch): an answer that starts and ends within one write is written once.
            const cut = streamAt >= 0 ? streamAt : deltas ? deltasAt : -1;
            if (cut >= 0) batch.length = cut;
            streamAt = -1;
            deltas = undefined;
          }
          deltas = undefined;
          if (mirror[mirror.length - 1] !== m) {
            mirror.push(m);
            batch.push({ t: "m", m });
          }
          const s = steering.indexOf(m);
          const f = followUps.indexOf(m);
          if (s >= 0) steering = steering.filter((x) => x !== m);
          if (f >= 0) followUps = followUps.filter((x) => x !== m);
          if (s >= 0 || f >= 0) queuesDirty = true;
          // A finished answer or tool result is written at once; a prompt joins the next write
          // (within flushMs), so a short run costs one write.
          if (m?.role === "user") schedule();
          else soon();
          break;
        }
        case "tool_execution_start":
          push({ t: "ts", id: event.toolCallId });
          soon();
          break;
        case "tool_execution_end":
          push(logLine({ t: "te", id: event.toolCallId, r: event.result, e: event.isError === true }));
          soon();
          break;
        case "agent_start":
          watchIdle(false);
          break;
        case "agent_end":
          watchIdle(true);
          streaming = false;
          deltas = undefined;
          push({ t: "x" });
          soon();
          break;
        default:
          break;
      }
    } catch (err) {
      fail(err);
    }
  }

  // ---- beforeToolCall: wrapped, so a call waiting for approval is in the log
  const hookField = accessor(agent, "beforeToolCall");
  let appHook = agent.beforeToolCall;
  const wrap = (hook) =>
    typeof hook !== "function"
      ? hook
      : async (context, signal) => {
          const callId = context?.toolCall?.id;
          if (leader && !failed) {
            batch.push({ t: "tw", id: callId });
            soon();
          }
          let ok = false;
          try {
            const result = await hook(context, signal);
            ok = !result?.block;
            return result;
          } finally {
            if (leader && !failed) push({ t: "tg", id: callId, ok });
          }
        };
  hookField.set.call(agent, wrap(appHook));
  Object.defineProperty(agent, "beforeToolCall", {
    configurable: true,
    get: () => appHook,
    set: (hook) => {
      appHook = hook;
      hookField.set.call(agent, wrap(hook));
    },
  });

  // Own properties of the agent before the session replaced them (another wrapper, such as a recorder's).
  const before = new Map();
  const replaceOwn = (name, value) => {
    if (!before.has(name)) before.set(name, Object.getOwnPropertyDescriptor(agent, name));
    agent[name] = value;
  };
  const restoreOwn = (name) => {
    if (!before.has(name)) return;
    const d = before.get(name);
    before.delete(name);
    if (d) Object.defineProperty(agent, name, d);
    else delete agent[name];
  };
  // ---- the queues: the Agent shows only the next delivery, so the session keeps its own copy
  const original = {};
  for (const name of [...QUEUE_METHODS, ...RUN_METHODS]) original[name] = agent[name];
  const queueChange = {
    steer: (m) => (steering = [...steering, m]),
    followUp: (m) => (followUps = [...followUps, m]),
    clearSteeringQueue: () => (steering = []),
    clearFollowUpQueue: () => (followUps = []),
    clearAllQueues: () => (steering = followUps = []),
    reset: () => (steering = followUps = []),
  };
  for (const name of QUEUE_METHODS) {
    replaceOwn(name, function (...args) {
      const out = original[name].apply(agent, args);
      queueChange[name](args[0]);
      queuesDirty = true;
      soon();
      return out;
    });
  }
  const notLeader = () => Promise.reject(new Error(`pi-agent-wasm/session: session "${id}" is running in another tab`));
  const blockRuns = (block) => {
    for (const name of RUN_METHODS) {
      if (block) replaceOwn(name, notLeader);
      else restoreOwn(name);
    }
  };

  const unsubscribeEvents = agent.subscribe(onEvent);
  // Changes made outside runs (an assignment to `state`, `reset()`), seen once per frame. Not
  // watched during a run, where events say what changed (and a watcher would cost per token);
  // each write compares the transcript anyway.
  let unwatch = agent.subscribeState(() => schedule());
  const watchIdle = (idle) => {
    unwatch();
    unwatch = idle ? agent.subscribeState(() => schedule()) : () => false;
  };

  // ---- restore
  const replaySafe = (name) => agent.state.tools.some((t) => t?.name === name && t.replay === "safe");
  let pending = [];
  let interrupted = false;
  let restored = false;
  let dropped = 0;

  const rewrite = (text) => (store.replace ? store.replace(id, text) : Promise.resolve(store.clear(id)).then(() => store.append(id, text)));

  /** Reads the log; `undefined` when the store failed or holds another version. */
  async function load() {
    try {
      const text = String((await store.load(id)) ?? "");
      return { text, ...readLog(text) };
    } catch (err) {
      fail(err);
      return err instanceof SessionLogError ? undefined : { text: "", records: [], header: false, dropped: 0 };
    }
  }

  /** Puts the log's conversation into the agent (made valid for the next request), repairs the log. */
  async function restore() {
    const log = await load();
    if (!log) return;
    dropped = log.dropped;
    const folded = foldLog(log.records);
    if (log.header) {
      const out = restoreFrom(folded, replaySafe);
      restored = true;
      interrupted = out.interrupted;
      pending = out.pending;
      agent.state.messages = out.messages;
      if (folded.model !== undefined) agent.state.model = folded.model;
      if (folded.thinkingLevel !== undefined) agent.state.thinkingLevel = folded.thinkingLevel;
      original.clearAllQueues.call(agent);
      for (const m of folded.steering) original.steer.call(agent, m);
      for (const m of folded.followUp) original.followUp.call(agent, m);
      steering = folded.steering.slice();
      followUps = folded.followUp.slice();
      model = folded.model;
      thinkingLevel = folded.thinkingLevel;
    }
    mirror = folded.messages.slice();
    if (failed) return;
    // A log that is new, or whose tail was torn, is rewritten from what was read (once).
    if (!log.header || log.dropped > 0) {
      const good = log.header ? log.text.slice(0, log.text.length - log.dropped) : logHeader();
      // Through the write chain, so no append can land before the repaired log.
      writer = writer.then(() => guard(() => rewrite(good)));
      await writer;
    }
  }

  // ---- tabs: one leader per session (Web Locks); the others follow its writes (BroadcastChannel)
  let remoteStreaming;
  let reading = false;
  let readAgain = false;
  /** In a following tab: shows the log as the leader wrote it (re-read whole, so nothing is applied twice). */
  async function showRemote() {
    if (reading) return void (readAgain = true);
    reading = true;
    do {
      readAgain = false;
      const log = await load();
      if (!log || leader) break;
      const folded = foldLog(log.records);
      agent.state.messages = folded.messages;
      if (folded.model !== undefined) agent.state.model = folded.model;
      if (folded.thinkingLevel !== undefined) agent.state.thinkingLevel = folded.thinkingLevel;
      remoteStreaming = folded.streaming;
      notify();
    } while (readAgain && !leader && !detached);
    reading = false;
  }
  function openChannel() {
    if (typeof BroadcastChannel !== "function") return undefined;
    const c = new BroadcastChannel(channelName);
    c.unref?.(); // Node: an open channel must not keep the process alive
    return c;
  }
  function follow() {
    channel = openChannel();
    if (channel) {
      channel.onmessage = () => {
        if (!leader && !detached) showRemote();
      };
    }
  }

  async function becomeLeader() {
    leader = true;
    blockRuns(false);
    await restore();
    remoteStreaming = undefined;
    if (locks && !channel) channel = openChannel();
    flush();
    notify();
  }

  const lockName = `pi-agent-wasm-session:${id}`;
  const waiting = new AbortController();
  if (locks) {
    const held = new Promise((resolve) => (releaseLock = resolve));
    const got = await new Promise((resolve) => {
      locks
        .request(lockName, { ifAvailable: true }, (lock) => {
          resolve(lock !== null);
          return lock ? held : undefined;
        })
        .catch(() => resolve(true));
    });
    if (got) await becomeLeader();
    else {
      blockRuns(true);
      follow();
      await showRemote();
      // Waits for the leader's tab to close, then takes over.
      locks
        .request(lockName, { signal: waiting.signal }, (lock) => {
          if (detached) return undefined;
          return becomeLeader().then(() => held);
        })
        .catch(() => {});
    }
  } else await becomeLeader();

  async function resume({ signal } = {}) {
    if (!leader) throw new Error(`pi-agent-wasm/session: session "${id}" is running in another tab`);
    const calls = pending;
    pending = [];
    notify();
    for (const { toolCall, assistantMessage } of calls) {
      push({ t: "ts", id: toolCall.id });
      let outcome;
      try {
        outcome = await runToolCall(toolCall, {
          tools: agent.state.tools,
          assistantMessage,
          context: { systemPrompt: agent.state.systemPrompt, messages: agent.state.messages.slice(), tools: agent.state.tools },
          beforeToolCall: hookField.get.call(agent),
          afterToolCall: agent.afterToolCall,
          signal,
        });
      } catch (err) {
        outcome = { result: { content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }], details: {} }, isError: true };
      }
      const message = toolResultMessage(toolCall, outcome.result, outcome.isError);
      agent.state.messages = [...agent.state.messages, message];
    }
    flush();
    if (signal?.aborted) return;
    const last = agent.state.messages[agent.state.messages.length - 1];
    if (calls.length > 0 || last?.role === "toolResult") await agent.continue();
  }

  const session = {
    id,
    /** Whether the store held this session (the agent now holds its conversation). */
    get restored() {
      return restored;
    },
    /** Whether restoring cut an answer or a tool call that was in flight. */
    get interrupted() {
      return interrupted;
    },
    /** Characters lost from a torn or corrupted log tail at the last restore. */
    get dropped() {
      return dropped;
    },
    /** Restored tool calls that still have to run (`resume()` runs them), in source order. */
    get pendingCalls() {
      return pending;
    },
    /** The pending calls that were waiting for approval in `beforeToolCall`. */
    get pendingApprovals() {
      return pending.filter((p) => p.approval);
    },
    /** True in the tab that runs the session; the others follow it and may take over. */
    get isLeader() {
      return leader;
    },
    /** In a following tab, the answer the leading tab is streaming. */
    get remoteStreamingMessage() {
      return remoteStreaming;
    },
    /** The store's first failure; the session stopped writing then. */
    get error() {
      return failed;
    },
    resume,
    /** Writes what is batched now; resolves when the store has it. */
    flush: () => flush(),
    /** Calls `listener(session)` when the session's own state changes. */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Writes what is batched, detaches from the agent, releases the tab lock. */
    async detach() {
      if (detached) return;
      await flush();
      detached = true;
      leader = false;
      clearTimeout(timer);
      unsubscribeEvents();
      unwatch();
      hookField.set.call(agent, appHook);
      delete agent.beforeToolCall;
      for (const name of [...QUEUE_METHODS, ...RUN_METHODS]) restoreOwn(name);
      channel?.close();
      waiting.abort();
      releaseLock?.();
    },
    /** Deletes the session's log (the agent keeps its state). */
    async clear() {
      await writer;
      batch = [];
      mirror = [];
      model = thinkingLevel = undefined;
      queuesDirty = true;
      writer = writer.then(() => guard(() => rewrite(logHeader())));
      await writer;
    },
  };
  return session;
}
