// The session's writer: what an agent does, as records of the session log (log.js), batched in
// memory and appended to the store. It runs where the agent's loop runs: in the page for an
// `Agent`, in the worker for a `WorkerAgent` (js/worker/host.js), with the same code.
//
// An event only appends to the batch; the batch is written every `flushMs` when the page is idle,
// and within a macrotask after a message, a tool call or an approval request. The writer is not
// called per token: it subscribes without the stream's deltas, and a write reads what the answer
// streamed from `agent.state.streamingMessage`. Each finished message is written once; the
// streaming answer as the text it grew by since the last write (the finished answer refers to
// that text instead of repeating it).
import { logLine, numberLine, pushRecord } from "./log.js";
import { ownMethods } from "./own.js";
import { isSessionConflict } from "./conflict.js";

/** What a leading tab tells the others after it rewrote the log (after an append: the appended length). */
export const REPLACED = "replaced";

/**
 * Set to `true` on a store whose writes land in the order they are called, even when a write is
 * called before the one before it settled (the IndexedDB store: its transactions commit in the
 * order they began). The writer then begins each write at once: a write begun as the page goes
 * away (pagehide) is not left waiting behind one in flight, which the page would never start.
 */
export const ORDERED_WRITES = Symbol.for("pi-agent-wasm.sessionStoreOrdersWrites");

/**
 * A store's `append` taking the text as parts (strings whose join is the text), on a store that
 * cuts its rows from them (the IndexedDB store): the writer then does not first copy a long
 * answer into one string with the records around it, a copy the store would cut up again.
 */
export const APPEND_PARTS = Symbol.for("pi-agent-wasm.sessionStoreAppendParts");

// The Agent shows only the next queued delivery: the writer keeps its own copy of the queues.
const QUEUE_METHODS = ["steer", "followUp", "clearSteeringQueue", "clearFollowUpQueue", "clearAllQueues", "reset"];
const TEXT_KINDS = { T: "text", K: "thinking" };
// Slicing what a block grew by first copies the whole text built by `+=` into one string (V8
// flattens it, about 1 ms per MB): while an answer streams, writes are at least this many
// milliseconds apart per character, so that copy stays under about 1% of the main thread.
const MS_PER_STREAMED_CHAR = 1e-4;

/**
 * Where `m`, delivered, is in a queue the writer keeps: the same object, or (for queues a worker's
 * writer was given as copies of the page's, see in-worker.js) an equal one; -1 when it is not.
 */
function queued(queue, m) {
  if (queue.length === 0) return -1;
  const i = queue.indexOf(m);
  if (i >= 0 || m === null || typeof m !== "object") return i;
  const same = (x) => {
    try {
      return x?.role === m.role && x.timestamp === m.timestamp && JSON.stringify(x.content) === JSON.stringify(m.content);
    } catch {
      return false;
    }
  };
  return queue.findIndex(same);
}

/**
 * Calls `flush()` when the page goes away or is hidden (a transaction begun in pagehide commits),
 * then `closing(true)` when it goes away for good: what the agent does after that is the page's
 * teardown (its fetches aborted, an answer ending with "network error"), not the conversation.
 * `closing(false)` when a page kept in the back/forward cache is shown again. Nothing where there
 * is no page (a worker). Returns what removes the listeners.
 */
export function onPageHide(flush, closing = () => {}) {
  if (typeof document !== "object" || document === null || typeof addEventListener !== "function") return () => {};
  const onHide = (event) => {
    flush();
    if (!event.persisted) closing(true);
  };
  const onShow = (event) => event.persisted && closing(false);
  const onVisibility = () => document.visibilityState === "hidden" && flush();
  addEventListener("pagehide", onHide);
  addEventListener("pageshow", onShow);
  document.addEventListener("visibilitychange", onVisibility);
  return () => {
    removeEventListener("pagehide", onHide);
    removeEventListener("pageshow", onShow);
    document.removeEventListener("visibilitychange", onVisibility);
  };
}

/**
 * Replaces session `id`'s log in `store` with `text`, atomically when the store can (`replace`).
 * `length`: the length of the log the caller believes it replaces (a checking store rejects a stale
 * one); undefined for a replace that holds whatever the log has (clear()).
 */
export const replaceLog = (store, id, text, length) =>
  store.replace
    ? Promise.resolve(store.replace(id, text, length === undefined ? undefined : { length }))
    : Promise.resolve(store.clear(id)).then(() => store.append(id, text, { length: 0 }));

/**
 * Starts writing `agent`'s session `id` to `store`. `from` is what the log holds, as restore read it:
 * `mirror` (its transcript), `steering`, `followUps`, `model`, `thinkingLevel`, `length` (its length in
 * characters), `count` (its records), `repair` (text to replace the log with first: a new log's
 * header, a damaged log's good part) and `resync` (the queues were not restored: write them).
 * `onFail(error)` is called once, with the store's first failure; the writer stops then.
 * `onConflict(error)`, when given, is called instead for a `SessionConflictError` (another writer
 * extended the log, see conflict.js): the writer halts, writing nothing it had batched.
 * `broadcast(message)` tells the other tabs what changed (an appended length, or REPLACED).
 */
export function createWriter(agent, { id, store, flushMs = 100, onFail, onConflict, broadcast = () => {}, from = {} }) {
  let failed = false;
  let stopped = false;
  // Another writer extended the log (see `onConflict`).
  let halted = false;
  // The write chain: each write starts when the one before it settled.
  let chain = Promise.resolve();
  // The log's length as this writer knows it: what restore read, plus what it wrote since.
  let length = from.length ?? 0;
  // The records the log holds: each record written is numbered with its position (log.js).
  let count = from.count ?? 0;

  // How many of the agent's messages the log held after the last write that landed.
  let landed = from.mirror?.length ?? 0;
  const fail = (err) => {
    if (failed || halted) return;
    if (onConflict && isSessionConflict(err)) {
      halt();
      return void onConflict(err);
    }
    failed = true;
    onFail?.(err instanceof Error ? err : new Error(String(err)));
  };
  const guard = (f) => {
    try {
      return Promise.resolve(f()).catch(fail);
    } catch (err) {
      fail(err);
      return Promise.resolve();
    }
  };
  // The page is going away (see `onPageHide`): nothing more is written.
  let closing = false;
  const writing = () => !failed && !stopped && !closing;

  // ---- the batch: records (objects, lines already serialized, or functions making a record when
  // written) waiting for the next write
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
  let mirror = from.mirror?.slice() ?? []; // the transcript as the log has it (our own array)
  let steering = from.steering?.slice() ?? [];
  let followUps = from.followUps?.slice() ?? [];
  // A writer that did not see the queues restored (`resync`, see js/worker/host.js) writes them first.
  let queuesDirty = from.resync === true;
  let model = from.model;
  let thinkingLevel = from.thinkingLevel;

  let timer; // the pending flush: { timeout, idle } handles
  let due = Infinity; // its delay
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
    if (!writing()) return;
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
    if (!writing()) return chain;
    if (streaming) {
      // Nothing tells the writer that the answer grew: while it streams, every write is followed
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
    if (batch.length === 0) return chain;
    // Pieces joined once, by the store (or by its rows): a streamed text is copied into the write and nowhere else.
    const pieces = [];
    try {
      for (const r of batch) {
        const i = ++count;
        if (typeof r === "string") pieces.push(numberLine(r, i));
        else pushRecord(typeof r === "function" ? r() : r, pieces, i);
      }
    } catch (err) {
      fail(err);
    }
    let size = 0;
    for (const p of pieces) size += p.length;
    batch = [];
    deltas = undefined;
    streamAt = deltasAt = -1;
    for (const block of blocks.values()) block.logged = block.queued;
    const at = length;
    length += size;
    const upTo = mirror.length;
    const appendParts = store[APPEND_PARTS];
    const append = appendParts ? () => appendParts(id, pieces, { length: at }) : () => store.append(id, pieces.join(""), { length: at });
    // The other tabs re-read the log: they are told that it grew, not what was written.
    return write(() =>
      guard(async () => {
        await append();
        landed = upTo;
        if (!failed) broadcast(size);
      }),
    );
  }

  /** Adds `write()` to the chain: begun at once for a store that orders its writes, else after the write before it. */
  const ordered = store[ORDERED_WRITES] === true;
  function write(f) {
    if (!ordered) chain = chain.then(() => (failed || halted ? undefined : f()));
    else if (!failed && !halted) chain = Promise.all([chain, f()]).then(() => undefined);
    return chain;
  }

  /**
   * Replaces the log with `text` after the writes before it (the other tabs read it again from its
   * start); `check`: only if the log still has the length this writer knows (not for clear()).
   */
  function rewrite(text, check = true) {
    const known = check ? length : undefined;
    length = text.length;
    return write(() => guard(() => replaceLog(store, id, text, known)).then(() => void broadcast(REPLACED)));
  }
  if (from.repair !== undefined) rewrite(from.repair);

  const close = (closed) => (closing = closed);
  const removeHide = onPageHide(flush, close);

  // ---- events of the agent's runs
  function onEvent(event) {
    if (!writing()) return;
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
          const s = queued(steering, m);
          const f = queued(followUps, m);
          if (s >= 0) steering = steering.filter((_, i) => i !== s);
          if (f >= 0) followUps = followUps.filter((_, i) => i !== f);
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

  // ---- beforeToolCall: what runs call is wrapped (through the agent's WRAP_BEFORE_TOOL_CALL seam,
  // which the writer's owner sets), so a call waiting for approval is in the log. The approval
  // request is written before the app is asked: a reload while its dialog shows keeps it.
  const wrapBeforeToolCall = (hook) =>
    typeof hook !== "function"
      ? hook
      : async (context, signal) => {
          const callId = context?.toolCall?.id;
          if (writing()) {
            batch.push({ t: "tw", id: callId });
            flush();
          }
          let ok = false;
          try {
            const result = await hook(context, signal);
            ok = !result?.block;
            return result;
          } finally {
            if (writing()) push({ t: "tg", id: callId, ok });
          }
        };

  // ---- the queues
  const own = ownMethods(agent);
  const queueChange = {
    steer: (m) => (steering = [...steering, m]),
    followUp: (m) => (followUps = [...followUps, m]),
    clearSteeringQueue: () => (steering = []),
    clearFollowUpQueue: () => (followUps = []),
    clearAllQueues: () => (steering = followUps = []),
    reset: () => (steering = followUps = []),
  };
  for (const name of QUEUE_METHODS) {
    const original = agent[name];
    own.set(name, function (...args) {
      const out = original.apply(agent, args);
      queueChange[name](args[0]);
      queuesDirty = true;
      soon();
      return out;
    });
  }

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

  // Halted (see `halted`): nothing batched is written, and the writer lets go of the agent without a last write.
  function halt() {
    if (halted || stopped) return;
    halted = stopped = true;
    cancel();
    batch = [];
    removeHide();
    unsubscribeEvents();
    unwatch();
    own.restoreAll();
  }

  return {
    flush,
    wrapBeforeToolCall,
    /** The log's length as this writer knows it (what it read, plus what it wrote since). */
    get length() {
      return length;
    },
    /** How many of the agent's messages the log held after the last write that landed. */
    writtenMessages: () => landed,
    /** Stops at once, writing nothing batched (the session catches up with another writer). */
    halt,
    /** The page is going away (`true`: nothing more is written) or was shown again (`false`); see `onPageHide`. */
    close,
    /** Adds `record` to the batch, written within a macrotask (a restored call started again). */
    record(record) {
      if (!writing()) return;
      batch.push(record);
      soon();
    },
    /** Empties the log (a header, `header`): what the agent holds is written again by the next write. */
    async clear(header) {
      await chain;
      batch = [];
      mirror = [];
      model = thinkingLevel = undefined;
      queuesDirty = true;
      count = 0;
      landed = 0;
      return rewrite(header, false);
    },
    /** Writes what is batched, then stops writing and lets go of the agent. */
    async stop() {
      if (stopped) return;
      await flush();
      stopped = true;
      cancel();
      removeHide();
      unsubscribeEvents();
      unwatch();
      own.restoreAll();
    },
  };
}
