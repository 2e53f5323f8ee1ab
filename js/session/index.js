// pi-agent-wasm/session: an Agent whose conversation survives a reload.
//
// `attachSession(agent, { id })` restores the agent from its log, then appends to the log what
// changes: each finished message once, the streaming answer as the text it grew by since the last
// write (the finished answer refers to that text instead of repeating it), tool calls' progress,
// approvals waiting in `beforeToolCall`, the queues, the model and thinking level. Writes leave
// the event path: an event only appends to an in-memory batch, and the batch is written every
// `flushMs` when the page is idle, and within a macrotask after a message, a tool call or an
// approval request. The session is not called per token: it subscribes without the stream's
// deltas, and a write reads what the answer streamed from `agent.state.streamingMessage`.
// Built on the public Agent API (`subscribe`, `state`, `getSnapshot`, the queue methods) and a
// seam of two symbol-keyed methods that `Agent` and `WorkerAgent` both implement (src/agent/state.js):
// one wraps the `beforeToolCall` that runs call, one runs a restored tool call as a run would. So
// the session takes either, and with a WorkerAgent, `resume()` runs its calls in the worker.
import { RUN_TOOL_CALL, WRAP_BEFORE_TOOL_CALL } from "../../src/agent/state.js";
import { SessionLogError, copyPartial, createFold, foldLog, logHeader, logLine, pushRecord, readLog, restoreFrom, toolResultMessage } from "./log.js";
import { checkLength, createCatchUp, isSessionConflict, keepIdentity } from "./conflict.js";

export { SessionLogError, INTERRUPTED_STREAM, INTERRUPTED_TOOL } from "./log.js";
export { httpStore, SessionConflictError } from "./stores/http.js";

/** A store keeping sessions in memory (tests, Node, or a page that opts out of persistence). */
export function memoryStore() {
  const logs = new Map();
  return {
    load: async (id) => logs.get(id) ?? "",
    loadFrom: async (id, from) => (logs.get(id) ?? "").slice(from),
    append: async (id, text, options) => {
      const log = logs.get(id) ?? "";
      checkLength(log.length, options);
      logs.set(id, log + text);
    },
    replace: async (id, text, options) => {
      checkLength((logs.get(id) ?? "").length, options);
      logs.set(id, text);
    },
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
    // A failed request's error reaches the transaction before the transaction has one of its own.
    tx.onerror = (event) => reject(event.target?.error ?? tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
  });

// Rows as long as Chromium stores them without copying them into a Blob first (a value of more
// than 64 KiB), which costs the main thread about twice as much per character; each row also
// costs a fixed amount, so they are no shorter (a 1 MB answer: ~1.5 ms in rows of 64,000
// characters, ~1.8 in rows of 32,000, ~3.3 as one value). A string holding a character above
// U+00FF takes two bytes per character, so its rows are half as long. WIDE finds one: on a string
// V8 holds as one byte per character the test returns at once, whatever its length.
const ROW_CHARS = 64_000;
const WIDE_ROW_CHARS = 32_000;
const WIDE = /[^\0-\xff]/;

/** The keys of session `id`'s rows: `[id, n]`, n counting from 0 in the log's order. */
const rowsOf = (id) => IDBKeyRange.bound([id, -Infinity], [id, Infinity]);

/** Adds `text` to `store` as rows of session `id` numbered from `n`, in order; gives the next number. */
function addRows(store, id, text, n) {
  const size = text.length <= WIDE_ROW_CHARS || WIDE.test(text) ? WIDE_ROW_CHARS : ROW_CHARS;
  if (text.length <= size) store.add(text, [id, n++]);
  else for (let at = 0; at < text.length; at += size) store.add(text.slice(at, at + size), [id, n++]);
  return n;
}

/**
 * Version 1 kept rows as `{ s: id, d: text }` under an index on `s`. An index makes every `add`
 * copy its value once more (IndexedDB reads index keys from a clone of the value), so version 2
 * keys each row by `[id, n]` and stores the text alone. Moves version 1's rows, in order.
 */
function upgrade(db, tx, oldVersion) {
  if (!db.objectStoreNames.contains("rows")) db.createObjectStore("rows");
  if (oldVersion !== 1 || !db.objectStoreNames.contains("chunks")) return;
  const rows = tx.objectStore("rows");
  const next = new Map();
  const cursor = tx.objectStore("chunks").openCursor();
  cursor.onsuccess = () => {
    const c = cursor.result;
    if (!c) return void db.deleteObjectStore("chunks");
    const { s, d } = c.value ?? {};
    if (typeof s === "string" && typeof d === "string") {
      const n = next.get(s) ?? 0;
      rows.add(d, [s, n]);
      next.set(s, n + 1);
    }
    c.continue();
  };
}

/**
 * A store in IndexedDB (database `name`, default "pi-agent-wasm-sessions"): each write adds rows
 * of appended text, so a write costs what it adds, whatever the log's length.
 */
export function indexedDBStore({ name = "pi-agent-wasm-sessions" } = {}) {
  let db;
  const open = () =>
    (db ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(name, 2);
      r.onupgradeneeded = (event) => upgrade(r.result, r.transaction, event.oldVersion);
      r.onsuccess = () => {
        // A tab of a later version upgrading the database waits for this connection to close: it
        // closes (this store's next write then fails, and is reported once).
        r.result.onversionchange = () => r.result.close();
        resolve(r.result);
      };
      r.onerror = () => reject(r.error);
      r.onblocked = () => reject(new Error(`IndexedDB database ${name} is blocked by another connection`));
    }));
  // The number of each session's next row, as this store last wrote it: a write then adds its
  // rows at once, without first reading the last one (a stale number fails the write, see append).
  const next = new Map();
  const lastRow = async (store, id) => {
    const last = await request(store.openKeyCursor(rowsOf(id), "prev"));
    return last ? last.key[1] + 1 : 0;
  };
  /** Runs `f(store)` in a transaction; resolves when the transaction commits. */
  const inTransaction = async (mode, f) => {
    const t = (await open()).transaction("rows", mode);
    // Both awaited together: a request's failure also aborts the transaction, and neither
    // rejection may go unhandled.
    const [out] = await Promise.all([f(t.objectStore("rows")), done(t)]);
    return out;
  };
  // Per session, the rows this store last read: where the next one starts (its key's number and
  // the characters before it), so that `loadFrom` reads only the rows added since.
  const read = new Map();
  /** The rows of `id` from row `n` on, joined; remembers where they end (`chars` before row `n`). */
  const readRows = async (id, n, chars) => {
    const [texts, keys] = await inTransaction("readonly", (store) => {
      const range = IDBKeyRange.bound([id, n], [id, Infinity]);
      return Promise.all([request(store.getAll(range)), request(store.getAllKeys(range))]);
    });
    const text = texts.join("");
    read.set(id, { n: keys.length > 0 ? keys[keys.length - 1][1] + 1 : n, chars: chars + text.length });
    return text;
  };
  return {
    load: (id) => readRows(id, 0, 0),
    async loadFrom(id, from) {
      const last = read.get(id);
      if (last !== undefined && last.chars === from) return readRows(id, last.n, from);
      return (await readRows(id, 0, 0)).slice(from);
    },
    async append(id, text) {
      for (let retried = false; ; retried = true) {
        try {
          const known = next.get(id);
          next.set(id, await inTransaction("readwrite", async (store) => addRows(store, id, text, known ?? (await lastRow(store, id)))));
          return;
        } catch (err) {
          next.delete(id);
          // Another tab wrote the session since this store last did: number from what it holds.
          if (retried || err?.name !== "ConstraintError") throw err;
        }
      }
    },
    async replace(id, text) {
      next.delete(id);
      read.delete(id);
      next.set(id, await inTransaction("readwrite", (store) => (store.delete(rowsOf(id)), addRows(store, id, text, 0))));
    },
    async clear(id) {
      next.delete(id);
      read.delete(id);
      await inTransaction("readwrite", (store) => void store.delete(rowsOf(id)));
    },
  };
}

const defaultStore = () => (typeof indexedDB === "object" && indexedDB ? indexedDBStore() : memoryStore());

/** What a leading tab tells the others after it rewrote the log (after an append: the appended length). */
const REPLACED = "replaced";

const QUEUE_METHODS = ["steer", "followUp", "clearSteeringQueue", "clearFollowUpQueue", "clearAllQueues", "reset"];
const RUN_METHODS = ["prompt", "continue"];

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
  // Another writer extended the log (another browser or device): the session catches up with it
  // (conflict.js), and the writes batched before that are dropped.
  const storeFailed = (err) => {
    if (!isSessionConflict(err)) return fail(err);
    generation++;
    void catchUp.conflict(err);
  };
  const guard = (f) => {
    try {
      return Promise.resolve(f()).catch(storeFailed);
    } catch (err) {
      storeFailed(err);
      return Promise.resolve();
    }
  };
  let logLength = 0; // the log's length as this session last read or wrote it
  let written = 0; // how many of the agent's messages the log held after the last write that landed
  let generation = 0;

  // ---- the batch: records (objects, or lines already serialized) waiting for the next write
  let batch = [];
  let deltas; // the `d` record being coalesced, in `batch`
  let streamAt = -1; // index in `batch` of the streaming answer's `a` record, while unwritten
  let deltasAt = -1; // and of its `d` record
  let streaming = false;
  // The streaming answer's text and thinking blocks by content index: { kind, queued, logged },
  // the block's text as the batch has it and as the log has it (strings of the answer's own, no
  // copies), so that a write adds what the block grew by and the finished answer's record starts
  // from what the log has.
  let blocks = new Map();
  let mirror = []; // the transcript as the log has it (our own array)
  let steering = [];
  let followUps = [];
  let queuesDirty = false;
  let model;
  let thinkingLevel;
  let writer = Promise.resolve();
  let timer; // the pending flush: { timeout, idle } handles
  let due = Infinity; // its delay
  let leader = false;
  let channel;
  let releaseLock;
  let detached = false;

  // A periodic flush waits for an idle moment (within flushMs), so it does not delay a frame.
  const idle = typeof requestIdleCallback === "function" ? requestIdleCallback : undefined;
  const cancel = () => {
    if (timer === undefined) return;
    clearTimeout(timer.timeout);
    if (timer.idle !== undefined) cancelIdleCallback(timer.idle);
    timer = undefined;
    due = Infinity;
  };
  const schedule = (ms = flushMs) => {
    if (!leader || failed || detached) return;
    if (timer !== undefined) {
      if (ms >= due) return;
      cancel();
    }
    due = ms;
    const t = (timer = {});
    const run = () => timer === t && flush();
    // While an answer streams, half the wait is spent waiting for the page to be idle (a change
    // still waits at most `ms`). A write wanted soon (a finished message, a tool call) is not
    // left to an idle moment: a reload before it would lose it.
    const wait = ms / 2;
    if (!idle || ms === 0) t.timeout = setTimeout(run, ms);
    else t.timeout = setTimeout(() => (t.idle = idle(run, { timeout: wait })), wait);
  };
  const soon = () => schedule(0);

  function push(record) {
    batch.push(record);
    schedule();
  }

  /** The streaming answer's `d` record in the batch (made on first use). */
  function deltaEntries() {
    if (deltas === undefined) {
      deltas = { t: "d", e: [] };
      deltasAt = batch.length;
      batch.push(deltas);
    }
    return deltas.e;
  }
  const TEXT_KINDS = { T: "text", K: "thinking" };
  /** A block of the streaming answer started or a tool call finished: a `d` entry. */
  function delta(kind, index, payload) {
    deltaEntries().push(payload === undefined ? [kind, index] : [kind, index, payload]);
    if (TEXT_KINDS[kind]) blocks.set(index, { kind: TEXT_KINDS[kind], queued: "", logged: "" });
    if (timer === undefined) schedule();
  }
  /** Text and thinking blocks of a partial answer, as the `a` record that copies it holds them. */
  function partialBlocks(m) {
    const out = new Map();
    const content = Array.isArray(m?.content) ? m.content : [];
    for (let i = 0; i < content.length; i++) {
      const kind = content[i]?.type;
      const text = (kind === "text" || kind === "thinking") && content[i][kind];
      if (typeof text === "string") out.set(i, { kind, queued: text, logged: "" });
    }
    return out;
  }
  /**
   * Adds to the batch what each text and thinking block of the streaming answer grew by since
   * the last write, read from `agent.state.streamingMessage`: once per write, not per token.
   * (A block whose text stops extending what was written is repaired by the finished record.)
   * Returns the length of the answer's text so far.
   */
  function takeStreamed() {
    const content = agent.state.streamingMessage?.content;
    let length = 0;
    if (!Array.isArray(content)) return length;
    for (const [index, block] of blocks) {
      const text = content[index]?.type === block.kind ? content[index][block.kind] : undefined;
      if (typeof text === "string" && text.length > block.queued.length) {
        deltaEntries().push([block.kind, index, text.slice(block.queued.length)]);
        block.queued = text;
      }
      length += block.queued.length;
    }
    return length;
  }
  // Slicing what a block grew by first copies the whole text built by `+=` into one string (V8
  // flattens it, about 1 ms per MB): while an answer streams, writes are at least this many
  // milliseconds apart per character, so that copy stays under about 1% of the main thread.
  const MS_PER_STREAMED_CHAR = 1e-4;

  /**
   * The record of a finished answer `m` (built when written: it costs nothing on the run's
   * path): each text and thinking block as raw text, after the part of it already written as
   * deltas when that part is what the block starts with.
   */
  function finishedRecord(m, streamed) {
    const content = m?.content;
    if (!Array.isArray(content)) return { t: "m", m };
    let copy;
    const s = [];
    for (let i = 0; i < content.length; i++) {
      const b = content[i];
      const key = b?.type === "text" ? "text" : b?.type === "thinking" ? "thinking" : undefined;
      const text = key && b[key];
      if (typeof text !== "string") continue;
      const logged = streamed.get(i)?.kind === key ? streamed.get(i).logged : "";
      const prefix = logged !== "" && (text === logged || text.startsWith(logged)) ? logged.length : 0;
      (copy ??= content.slice())[i] = { ...b, [key]: "" };
      s.push([i, prefix, prefix === 0 ? text : text.slice(prefix)]);
    }
    return copy ? { t: "m", m: { ...m, content: copy }, s } : { t: "m", m };
  }

  /** Appends the batch (and what changed outside events) to the store, in order. */
  function flush() {
    cancel();
    if (!leader || failed) return writer;
    if (streaming) {
      // Nothing tells the session that the answer grew: while it streams, every write is followed
      // by the next one (a write that finds nothing new costs a comparison per block).
      schedule(Math.max(flushMs, takeStreamed() * MS_PER_STREAMED_CHAR));
    }
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
    // Pieces joined once: a streamed text is copied into the write and nowhere else.
    const pieces = [];
    try {
      for (const r of batch) {
        if (typeof r === "string") pieces.push(r);
        else pushRecord(typeof r === "function" ? r() : r, pieces);
      }
    } catch (err) {
      fail(err);
    }
    const text = pieces.join("");
    batch = [];
    deltas = undefined;
    streamAt = deltasAt = -1;
    for (const block of blocks.values()) block.logged = block.queued;
    // The other tabs re-read the log: they are told that it grew, not what was written.
    const g = generation;
    const upTo = mirror.length;
    writer = writer.then(() =>
      failed || g !== generation
        ? undefined
        : guard(async () => {
            await store.append(id, text, { length: logLength });
            logLength += text.length;
            written = upTo;
            catchUp.written();
            channel?.postMessage(text.length);
          }),
    );
    return writer;
  }

  // A page going away writes what is batched at once (a transaction begun in pagehide commits).
  const page = typeof document === "object" && document !== null && typeof addEventListener === "function";
  const onHide = () => void flush();
  // Back on a page whose log other browsers or devices write too: show what they wrote meanwhile.
  const onVisibility = () => (document.visibilityState === "hidden" ? onHide() : store.shared === true && leader && void catchUp.check());
  if (page) {
    addEventListener("pagehide", onHide);
    document.addEventListener("visibilitychange", onVisibility);
  }
  const removeHide = () => {
    if (!page) return;
    removeEventListener("pagehide", onHide);
    document.removeEventListener("visibilitychange", onVisibility);
  };

  // ---- events of the agent's runs
  function onEvent(event) {
    if (!leader || failed) return;
    try {
      switch (event.type) {
        case "message_start":
          if (event.message?.role === "assistant") {
            streaming = true;
            deltas = undefined;
            deltasAt = -1;
            streamAt = batch.length;
            blocks = partialBlocks(event.message);
            // Serialized now: the partial it copies keeps growing.
            push(logLine({ t: "a", m: event.message }));
          }
          break;
        case "message_update": {
          if (!streaming) break;
          const e = event.assistantMessageEvent;
          switch (e?.type) {
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
          const streamed = m?.role === "assistant" && streaming;
          if (streamed) {
            streaming = false;
            // The finished answer's record holds all of its text that was not written yet, so
            // its unwritten stream records are dropped.
            for (const at of [Math.max(streamAt, deltasAt), Math.min(streamAt, deltasAt)]) if (at >= 0) batch.splice(at, 1);
            streamAt = deltasAt = -1;
          }
          deltas = undefined;
          if (mirror[mirror.length - 1] !== m) {
            mirror.push(m);
            if (m?.role === "assistant") {
              const streamedBlocks = streamed ? blocks : new Map();
              batch.push(() => finishedRecord(m, streamedBlocks));
            } else batch.push({ t: "m", m });
          }
          blocks = new Map();
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
          streamAt = deltasAt = -1;
          blocks = new Map();
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

  // ---- beforeToolCall: what runs call is wrapped, so a call waiting for approval is in the log
  // (the app still reads and sets its own hook)
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
  agent[WRAP_BEFORE_TOOL_CALL](wrap);

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

  // Without the per-token events: the streamed text is read when it is written (`takeStreamed`).
  // An agent whose `subscribe` takes no options calls `onEvent` with them too; it ignores them.
  const unsubscribeEvents = agent.subscribe(onEvent, { deltas: false });
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

  // The other tabs read the log again from its start after this (they read only what was appended otherwise).
  // `check`: only if the log still has the length this session knows (not for clear()).
  const rewrite = (text, check = true) =>
    Promise.resolve(
      store.replace
        ? store.replace(id, text, check ? { length: logLength } : undefined)
        : Promise.resolve(store.clear(id)).then(() => store.append(id, text, { length: 0 })),
    ).then(() => {
      logLength = text.length;
      channel?.postMessage(REPLACED);
    });

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
  async function restore(keep) {
    const log = await load();
    if (!log) return;
    logLength = log.text.length;
    dropped = log.dropped;
    const folded = foldLog(log.records);
    if (keep) keepIdentity(folded.messages, keep);
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
    written = mirror.length;
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
  let takingOver = false;
  // In a following tab, the leader's log as read so far: its fold and how many characters it holds;
  // `replacements` counts the leader's rewrites, after which it is read again from its start.
  let followed;
  let replacements = 0;
  /**
   * In a following tab: what the leader's log holds now. Reads only what was appended since the
   * last read when the store can (`loadFrom`), else the whole log again; gives the fold's state,
   * or undefined when the read failed or the log was replaced while it ran.
   */
  async function readFollowed() {
    const f = followed;
    const seen = replacements;
    if (f !== undefined && store.loadFrom) {
      let text;
      try {
        text = String((await store.loadFrom(id, f.at)) ?? "");
      } catch (err) {
        fail(err);
        return undefined;
      }
      if (replacements !== seen) return undefined;
      const { records, dropped } = readLog(text, true);
      for (const r of records) f.fold.apply(r);
      f.at += text.length - dropped;
      return f.fold.state;
    }
    const log = await load();
    if (!log || replacements !== seen) return undefined;
    const fold = createFold();
    for (const r of log.records) fold.apply(r);
    followed = { fold, at: log.text.length - log.dropped };
    return fold.state;
  }
  // What this tab last assigned to its agent from the fold, so that it assigns only what changed.
  const shown = {};
  /**
   * In a following tab: shows the log as the leader wrote it. Only its new records are applied,
   * so the messages shown keep their identity (a transcript rendered by identity does not redraw,
   * a WorkerAgent's worker is not sent it again).
   */
  async function showRemote() {
    if (reading) return void (readAgain = true);
    reading = true;
    do {
      readAgain = false;
      const folded = await readFollowed();
      if (leader || takingOver) break;
      if (!folded) continue;
      if (folded.messages !== shown.array || folded.messages.length !== shown.length) {
        agent.state.messages = folded.messages;
        shown.array = folded.messages;
        shown.length = folded.messages.length;
      }
      if (folded.model !== undefined && folded.model !== shown.model) agent.state.model = shown.model = folded.model;
      if (folded.thinkingLevel !== undefined && folded.thinkingLevel !== shown.thinkingLevel) {
        agent.state.thinkingLevel = shown.thinkingLevel = folded.thinkingLevel;
      }
      // A copy: the fold goes on extending its blocks' text in place.
      const s = folded.streaming;
      remoteStreaming = s && copyPartial(s);
      notify();
    } while (readAgain && !leader && !takingOver && !detached);
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
      channel.onmessage = (event) => {
        if (event.data === REPLACED) {
          followed = undefined;
          replacements++;
        }
        if (!leader && !detached) showRemote();
      };
    }
  }

  // The reaction to another writer (conflict.js): meanwhile nothing is written and runs wait.
  const catchUp = createCatchUp(agent, {
    pause() {
      leader = false;
      cancel();
      batch = [];
      deltas = undefined;
      streamAt = deltasAt = -1;
      streaming = false;
      blocks = new Map();
      for (const name of RUN_METHODS) replaceOwn(name, (...args) => catchUp.settled().then(() => agent[name](...args)));
    },
    writtenMessages: () => written,
    restore,
    resume() {
      for (const name of RUN_METHODS) restoreOwn(name);
      leader = true;
      watchIdle(!agent.state.isStreaming);
      notify();
      return flush();
    },
    grew: async () => typeof store.loadFrom === "function" && String((await store.loadFrom(id, logLength)) ?? "").length > 0,
    prompt: (messages) =>
      Promise.resolve(agent.state.isStreaming ? messages.forEach((m) => agent.followUp(m)) : original.prompt.call(agent, messages)).catch(fail),
    fail,
  });

  // Runs stay refused until the restore is done: a prompt during it would be overwritten by it.
  async function becomeLeader() {
    takingOver = true;
    await restore();
    leader = true;
    blockRuns(false);
    remoteStreaming = undefined;
    if (locks && !channel) channel = openChannel();
    // What the agent holds now (its system prompt, model, a transcript set before attaching) is
    // written before the session is handed over, not in the middle of the first run.
    const written = flush();
    notify();
    await written;
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
        outcome = await agent[RUN_TOOL_CALL](toolCall, assistantMessage, signal);
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
      cancel();
      removeHide();
      unsubscribeEvents();
      unwatch();
      agent[WRAP_BEFORE_TOOL_CALL](undefined);
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
      writer = writer.then(() => guard(() => rewrite(logHeader(), false)));
      await writer;
    },
  };
  return session;
}
