// pi-agent-wasm/worker: an object with the Agent API whose loop, stream
// function and WebAssembly run in a dedicated module Worker
// (host.js). This module loads no wasm: the main thread keeps the
// agent's state (the in-page Agent's own state object and reducer), rebuilt
// from the events the worker posts (what changed since the last event), and
// runs the tools, hooks and listeners the app gave it when the worker asks.
import { TAG, EXPLICIT, HOOKS, Refs, pack, unpack, packError, unpackError } from "./protocol.js";
import { WORKER_EXTENSION } from "./extensions.js";
// The rules the in-page Agent uses, from the same files (pkg/snippets; they load no wasm).
import { EMPTY_USAGE, evAgentEnd, evAgentStart, evMessageEnd, evMessageStart, evTurnEnd, evTurnStart } from "../../src/js/events.js";
import { defaultConvertToLlm } from "../../src/agent_loop/loop.js";
import { promptMessages } from "../../src/agent/options.js";
import { unansweredEvents, unansweredToolCalls } from "../../src/agent/failure.js";
import {
  createAgentState, STATE_INTERNALS, getSnapshot, subscribeState, reduce, resetState, startRunState, finishRunState,
  isStreamDelta, RUN_TOOL_CALL, WRAP_BEFORE_TOOL_CALL,
} from "../../src/agent/state.js";

const OPTIONS = ["sessionId", "thinkingBudgets", "transport", "maxRetryDelayMs", "toolExecution", "identity"];
const ALREADY_PROMPTING =
  "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
const ALREADY_CONTINUING = "Agent is already processing. Wait for completion before continuing.";
const ALREADY_RESETTING = "Agent is already processing. Wait for completion before resetting.";
export { defaultConvertToLlm };

const frame = typeof requestAnimationFrame === "function" ? (f) => requestAnimationFrame(() => f()) : (f) => setTimeout(f, 0);
const isThenable = (x) => x !== null && (typeof x === "object" || typeof x === "function") && typeof x.then === "function";
const report = (e) => (typeof reportError === "function" ? reportError(e) : console.error(e));

/** What the worker needs of a tool: everything but functions. */
function declaration(tool) {
  const d = {};
  for (const key of ["name", "label", "description", "parameters", "executionMode", "constrainedSampling"]) {
    if (tool?.[key] !== undefined) d[key] = tool[key];
  }
  if (d.parameters !== undefined) d.parameters = JSON.parse(JSON.stringify(d.parameters));
  return d;
}

/** A value that postMessage takes: functions, symbols and other uncloneable parts dropped. */
function cloneSafe(v, seen = new Map()) {
  if (v === null || typeof v !== "object") return typeof v === "function" || typeof v === "symbol" ? undefined : v;
  if (seen.has(v)) return seen.get(v);
  try {
    structuredClone(v);
    return v;
  } catch {}
  const out = Array.isArray(v) ? [] : {};
  seen.set(v, out);
  for (const key of Object.keys(v)) out[key] = cloneSafe(v[key], seen);
  return out;
}

/**
 * The Agent API, with the agent in a Worker. `options` are `AgentOptions`
 * (except `streamFn`, which cannot cross) plus `worker` (a module Worker
 * running `pi-agent-wasm/worker-script` or a module calling `serveAgent`, or a
 * function creating one: needed to start a fresh worker after a failure),
 * `proxy` (streamProxy options: the worker streams through `streamProxy`) and
 * `workerOptions` (structured-cloneable data for the worker's `serveAgent`
 * setup function).
 */
export class WorkerAgent {
  #fields = {};
  #listeners = new Set();
  // The listener when there is exactly one (the common case, called without iterating the set).
  #only;
  #steering = [];
  #followUp = [];
  #refs = new Refs(2);
  #factory;
  #worker;
  #gen = 0;
  #run;
  #runId = 0;
  #calls = new Map();
  /** Replies held back while an abort is being sent (see `abort`). */
  #held;
  #queue = [];
  #qi = 0;
  #busy = false;
  #partial;
  #internals;
  #proxy;
  #workerOptions;
  /** What the page's `beforeToolCall` is wrapped in when the worker calls it (the session's seam). */
  #wrapBefore;
  /** Tool calls run outside a run (`RUN_TOOL_CALL`), by id: their promise's settlers. */
  #toolRuns = new Map();
  #toolRunId = 0;
  /** Extensions' main-thread halves, by name (extensions.js). */
  #extensions = new Map();

  constructor(options) {
    if (options == null || typeof options !== "object") throw new TypeError("WorkerAgentOptions must be an object");
    const worker = options.worker;
    if (typeof worker === "function") this.#factory = worker;
    else if (worker && typeof worker.postMessage === "function") this.#worker = worker;
    else throw new TypeError("WorkerAgentOptions.worker must be a Worker or a function returning one");
    if (options.streamFn != null) {
      throw new TypeError("WorkerAgentOptions.streamFn cannot cross to the worker: pass `proxy` (streamProxy options) or register a streamFn with serveAgent in the worker module");
    }
    const initial = options.initialState;
    if (initial != null && typeof initial !== "object") throw new TypeError("AgentOptions.initialState must be an object");
    for (const key of ["tools", "messages"]) {
      if (initial?.[key] != null && !Array.isArray(initial[key])) throw new TypeError(`AgentOptions.initialState.${key} must be an array`);
    }
    for (const key of HOOKS) {
      const v = options[key];
      if (v != null && typeof v !== "function") throw new TypeError(`AgentOptions.${key} must be a function`);
      this.#fields[key] = v ?? undefined;
    }
    this.#fields.convertToLlm ??= defaultConvertToLlm;
    for (const key of OPTIONS) this.#fields[key] = options[key];
    this.#fields.transport ??= "auto";
    this.#fields.toolExecution ??= "parallel";
    this.#fields.steeringMode = options.steeringMode === "all" ? "all" : "one-at-a-time";
    this.#fields.followUpMode = options.followUpMode === "all" ? "all" : "one-at-a-time";
    this.#proxy = options.proxy;
    this.#workerOptions = options.workerOptions;
    this.state = this.#createState(initial);
    for (const key of [...HOOKS, ...OPTIONS, "steeringMode", "followUpMode"]) {
      Object.defineProperty(this, key, {
        enumerable: true,
        get: () => this.#fields[key],
        set: (v) => {
          this.#fields[key] = v;
          if (HOOKS.includes(key)) this.#post({ op: "set", key: "hooks", v: this.#hookNames() });
          else this.#post({ op: "set", key, v });
        },
      });
    }
    this.#startWorker();
  }

  /** `undefined`: the stream function runs in the worker. */
  get streamFunction() {
    return undefined;
  }
  /** The running run's `AbortSignal` (the main thread's mirror), or `undefined` when idle. */
  get signal() {
    return this.#run?.controller.signal;
  }
  /** The Worker in use (a new one after a failure, when `worker` is a function). */
  get worker() {
    return this.#worker;
  }

  // ---- the state mirror ---------------------------------------------------------------------
  /**
   * The in-page Agent's state object (state.js), whose `model`, `thinkingLevel`, `tools` and `messages`
   * also reach the worker when the app assigns them.
   */
  #createState(initial) {
    const state = createAgentState(initial);
    const internals = STATE_INTERNALS.get(state);
    this.#internals = internals;
    const self = this;
    // `model` and `thinkingLevel` go to the worker when the app assigns them; what the worker's agent
    // chose comes back through `#setModel`, without being sent again.
    const values = { model: state.model, thinkingLevel: state.thinkingLevel };
    this.#setModel = (model, thinkingLevel) => {
      values.model = model;
      values.thinkingLevel = thinkingLevel;
    };
    const sentWhenSet = (key) => ({
      get: () => values[key],
      set(v) {
        values[key] = v;
        self.#post({ op: "set", key, v });
        internals.changed();
      },
    });
    const tools = Object.getOwnPropertyDescriptor(state, "tools");
    const messages = Object.getOwnPropertyDescriptor(state, "messages");
    Object.defineProperties(state, {
      model: sentWhenSet("model"),
      thinkingLevel: sentWhenSet("thinkingLevel"),
      tools: {
        get: tools.get,
        set(next) {
          tools.set.call(state, next);
          self.#post({ op: "set", key: "tools", v: state.tools.map(declaration) });
        },
      },
      messages: {
        get: messages.get,
        set(next) {
          messages.set.call(state, next);
          self.#syncMessages();
        },
      },
    });
    return state;
  }
  /** Sets the model and thinking level the worker's agent chose (no post back). */
  #setModel;
  /**
   * The transcript as the worker has it: the run copy state.js keeps (see `runMessages`), extended with
   * each finished message. A new copy means the app changed `state.messages` and the worker gets it again.
   */
  #mirror;

  /** A frozen view of the state that keeps its identity until the state changes (see `Agent.getSnapshot`). */
  getSnapshot() {
    return getSnapshot(this.state);
  }
  subscribeState(listener, options) {
    return subscribeState(this.state, listener, options);
  }
  subscribe(listener, options) {
    if (typeof listener !== "function") throw new TypeError("subscribe(listener): listener must be a function");
    // `{ deltas: false }`: not called for the per-token `message_update` events, as on the in-page Agent.
    const entry = { listener, deltas: options?.deltas !== false };
    this.#listeners.add(entry);
    this.#only = this.#listeners.size === 1 ? entry : undefined;
    return () => {
      this.#listeners.delete(entry);
      const [first] = this.#listeners;
      this.#only = this.#listeners.size === 1 ? first : undefined;
    };
  }

  // ---- the worker ---------------------------------------------------------------------------
  #hookNames() {
    return HOOKS.filter((k) => typeof this.#fields[k] === "function" && !(k === "convertToLlm" && this.#fields[k] === defaultConvertToLlm));
  }
  #startWorker() {
    let w = this.#worker;
    const gen = ++this.#gen;
    try {
      if (!w) w = this.#factory();
      this.#worker = w;
    } catch (e) {
      this.#worker = undefined;
      this.#dead = e;
      return;
    }
    this.#dead = undefined;
    // A fresh worker knows none of the objects an earlier one was sent: they cross again, whole.
    this.#refs = new Refs(2);
    this.#outbox = [];
    this.#runCode = 0;
    this.#ahead = "";
    const alive = () => this.#worker === w && this.#gen === gen;
    w.addEventListener("message", (event) => {
      if (!alive()) return;
      const msg = event.data?.[TAG];
      if (msg?.op === "hello" && this.#outbox) {
        const out = this.#outbox;
        this.#outbox = undefined;
        for (const m of out) this.#postTo(w, m);
      } else if (msg) this.#receive(msg);
    });
    w.addEventListener("error", (event) => {
      if (!alive()) return;
      event.preventDefault?.();
      this.#fail(new Error(`pi-agent-wasm: the agent's worker failed: ${event.message || "it could not be loaded"}`));
    });
    w.addEventListener("messageerror", () => alive() && this.#fail(new Error("pi-agent-wasm: a message from the agent's worker could not be read")));
    const messages = (this.#mirror = this.#internals.runMessages(true));
    const options = {};
    for (const key of OPTIONS) if (this.#fields[key] !== undefined) options[key] = this.#fields[key];
    options.steeringMode = this.#fields.steeringMode;
    options.followUpMode = this.#fields.followUpMode;
    this.#postTo(w, {
      op: "init",
      config: {
        state: {
          model: this.state.model,
          thinkingLevel: this.state.thinkingLevel,
          tools: this.state.tools.map(declaration),
          messages: messages.map((m) => this.#refs.enc(m)),
        },
        hooks: this.#hookNames(),
        options,
        proxy: this.#proxy,
        workerOptions: this.#workerOptions,
      },
    });
    for (const half of this.#extensions.values()) half.started();
    // The queues are the page's: a fresh worker holds what the last one had not delivered (and what was
    // queued while there was none), queued again after the extensions' halves started (a recorder there
    // records them as the worker's inputs).
    for (const m of this.#steering) this.#postTo(w, { op: "steer", m: this.#refs.enc(m) });
    for (const m of this.#followUp) this.#postTo(w, { op: "followUp", m: this.#refs.enc(m) });
  }
  #dead;
  // Until the worker says it listens (a module worker whose imports await misses earlier messages).
  #outbox;
  #postTo(w, msg) {
    if (this.#outbox) {
      this.#outbox.push(msg);
      return;
    }
    try {
      w.postMessage({ [TAG]: msg });
    } catch (e) {
      if (e?.name !== "DataCloneError") throw e;
      w.postMessage({ [TAG]: cloneSafe(msg) });
    }
  }
  #post(msg) {
    if (this.#worker && !this.#dead) this.#postTo(this.#worker, msg);
  }
  /** Ends the worker; a running run ends as a failed one. The next run starts a fresh worker (with a factory). */
  terminate() {
    this.#fail(new Error("pi-agent-wasm: the agent's worker was terminated"));
  }
  #fail(error) {
    const w = this.#worker;
    this.#worker = undefined;
    this.#dead = error;
    this.#gen++;
    try {
      w?.terminate?.();
    } catch {}
    for (const c of this.#calls.values()) c.abort(error);
    this.#calls.clear();
    for (const t of this.#toolRuns.values()) t.reject(error);
    this.#toolRuns.clear();
    for (const half of this.#extensions.values()) half.stopped?.(error);
    const run = this.#run;
    if (!run) return;
    // Queued events from the dead worker are delivered first, then the failure, as a failed run in the page ends.
    // In place: a running #pump holds this array.
    const rest = this.#queue.slice(this.#qi).filter((item) => !item.call);
    this.#queue.length = 0;
    this.#queue.push(...rest);
    this.#qi = 0;
    // The failure's events are made when the dead worker's queued events have been delivered: they
    // depend on what those were.
    this.#queue.push({ failed: { error, run } });
    this.#queue.push({ done: { id: run.id, ok: true } });
    if (!this.#busy) this.#pump();
  }

  // ---- messages from the worker -------------------------------------------------------------
  #receive(msg) {
    switch (msg.op) {
      case "ev":
        this.#queue.push({ events: msg.events, i: 0, k: 0, text: msg.text, lens: msg.lens, tp: 0, lp: 0 });
        break;
      case "done":
        this.#queue.push({ done: msg });
        break;
      case "call":
        this.#queue.push({ call: msg });
        break;
      case "abortCall":
        this.#calls.get(msg.id)?.abort(msg.reason);
        return;
      case "kept":
        this.#refs.settle();
        return;
      case "ext":
        this.#extensions.get(msg.name)?.message(msg.v);
        return;
      case "toolRan": {
        const t = this.#toolRuns.get(msg.id);
        if (!t) return;
        this.#toolRuns.delete(msg.id);
        if (!msg.ok) return void t.reject(unpackError(msg.error));
        try {
          t.resolve(unpack(msg.v, this.#refs, (name) => this.state.tools.find((tool) => tool.name === name) ?? { name }));
        } catch (e) {
          t.reject(e);
        }
        return;
      }
      case "ext":
        this.#extensions.get(msg.name)?.message(msg.v);
        return;
      case "fatal":
        this.#fail(unpackError(msg.error) ?? new Error("pi-agent-wasm: the agent's worker failed"));
        return;
      default:
        return;
    }
    if (!this.#busy) this.#pump();
  }
  #pump() {
    const q = this.#queue;
    while (this.#qi < q.length) {
      const entry = q[this.#qi];
      let pending;
      try {
        pending = this.#process(entry);
      } catch (e) {
        report(e);
        // Past the item that threw, so that the queue moves on.
        if (entry.events) {
          entry.i++;
          entry.k = 0;
        }
      }
      // A batch is done when its cursor is at its end (it resumes there after a listener's promise).
      if (!entry.events || entry.i >= entry.events.length) this.#qi++;
      if (pending) {
        this.#busy = true;
        pending.then(() => {
          this.#busy = false;
          this.#pump();
        });
        return;
      }
    }
    q.length = 0;
    this.#qi = 0;
  }
  /**
   * The events that end `run`, whose worker failed with `error`, as a run in the page ends when its
   * stream function fails: what the worker never delivered of its beginning (`agent_start`,
   * `turn_start`, the prompt's messages), an error result for each tool call of the last answer
   * left without one (as a failed run of the in-page Agent, src/agent/failure.js), the failure (the
   * answer streaming then, without its unfinished tool calls, or a new assistant message with
   * `stopReason: "error"`), `turn_end` and `agent_end`.
   */
  #failure(error, run) {
    if (run.ended) return [];
    const events = [];
    const added = [];
    const add = (message) => (added.push(message), events.push(evMessageStart(message), evMessageEnd(message)));
    if (!run.began) events.push(evAgentStart());
    if (!run.turn) events.push(evTurnStart());
    if (run.kind === "prompt" && run.messages.length === 0) for (const message of promptMessages(...run.input)) add(message);
    const stopReason = run.controller.signal.aborted ? "aborted" : "error";
    const streaming = this.#partial;
    let failure;
    if (streaming) {
      const content = Array.isArray(streaming.content) ? streaming.content.filter((b) => b?.type !== "toolCall") : [];
      failure = { ...streaming, content, stopReason, errorMessage: error.message };
      added.push(failure);
      events.push(evMessageEnd(failure));
    } else {
      const m = this.state.model;
      failure = {
        role: "assistant", content: [{ type: "text", text: "" }], api: m.api, provider: m.provider, model: m.id,
        usage: EMPTY_USAGE, stopReason, errorMessage: error.message, timestamp: Date.now(),
      };
      for (const call of unansweredToolCalls(this.state.messages)) {
        for (const event of unansweredEvents(call, failure, this.state.pendingToolCalls)) {
          if (event.type === "message_end") added.push(event.message);
          events.push(event);
        }
      }
      add(failure);
    }
    events.push(evTurnEnd(failure, []), evAgentEnd([...run.messages, ...added]));
    return events;
  }
  #process(entry) {
    if (entry.failed) {
      const { error, run } = entry.failed;
      // In place, after this entry: #pump goes on with them.
      this.#queue.splice(this.#qi + 1, 0, ...this.#failure(error, run).map((event) => ({ event })));
      return;
    }
    if (entry.call) return void this.#call(entry.call);
    if (entry.done) return void this.#finish(entry.done);
    if (entry.event) return this.#deliver(entry.event);
    const events = entry.events;
    while (entry.i < events.length) {
      const item = events[entry.i];
      if (typeof item[0] === "number") {
        const pending = this.#deltas(entry, item);
        if (pending) return pending;
        continue;
      }
      this.#runCode = 0;
      this.#ahead = "";
      entry.i++;
      const event = this.#decode(item);
      if (!event) continue;
      const pending = this.#deliver(event);
      if (pending) return pending;
    }
  }
  #deliver(event) {
    this.#reduce(event);
    this.#internals.changed();
    return this.#dispatch(event);
  }
  // The run of deltas being read, as host.js's `queueDelta` keeps it: its code and block, the text
  // appended to the block that no delta has covered yet, and the blocks of the streaming message that had a delta.
  #runCode = 0;
  #runBlock = -1;
  #ahead = "";
  #streamed = new Set();
  /**
   * A run of text or thinking deltas, `[code, contentIndex, count]`: per delta, the length of text it appends
   * to the block (from the batch's `text`) and the length of its `delta`, the next part of the text appended
   * (or, flagged, the next part of `text`). Each delta is one `message_update`, delivered as `#deliver` would,
   * with what a `message_update` changes in the state set here. A promise when a listener returned one (the
   * cursors stay on the entry).
   */
  #deltas(entry, item) {
    const code = item[0];
    const ci = item[1];
    const count = item[2];
    const P = this.#partial;
    const block = P?.content[ci];
    const key = code === 1 ? "text" : "thinking";
    if (this.#runCode !== code || this.#runBlock !== ci) {
      this.#runCode = code;
      this.#runBlock = ci;
      const before = block?.[key];
      this.#ahead = this.#streamed.has(ci) || typeof before !== "string" ? "" : before;
    }
    this.#streamed.add(ci);
    const type = code === 1 ? "text_delta" : "thinking_delta";
    const { text, lens } = entry;
    const state = this.state;
    const changed = this.#internals.changed;
    // With no listener taking deltas and no watcher told of every change, no code runs between two deltas
    // of this run: the states between them cannot be seen, so the streaming message is copied (and the
    // change noted) once, after the last, instead of once per delta.
    const quiet = !this.#internals.watchedPerChange() && !this.#takesDeltas();
    let moved = false;
    let { k, tp, lp } = entry;
    // What is ahead is `ahead` from `at` on (an offset rather than a slice per delta).
    let ahead = this.#ahead;
    let at = 0;
    let pending;
    while (k < count) {
      const appended = lens[lp];
      const length = lens[lp + 1];
      lp += 2;
      k++;
      if (appended !== 0) {
        const a = text.slice(tp, (tp += appended));
        if (block) block[key] += a;
        ahead = at === ahead.length ? a : ahead.slice(at) + a;
        at = 0;
      }
      let delta;
      if (length >= EXPLICIT) {
        const from = tp;
        tp += length - EXPLICIT;
        if (!quiet) delta = text.slice(from, tp);
        ahead = "";
        at = 0;
      } else {
        if (!quiet) delta = at === 0 && length === ahead.length ? ahead : ahead.slice(at, at + length);
        at += length;
      }
      if (!P) continue;
      if (quiet) {
        moved = true;
        continue;
      }
      const message = { ...P };
      state.streamingMessage = message;
      changed();
      pending = this.#dispatch({ type: "message_update", assistantMessageEvent: { type, contentIndex: ci, delta, partial: P }, message });
      if (pending) break;
    }
    if (moved) {
      state.streamingMessage = { ...P };
      changed();
    }
    this.#ahead = at === 0 ? ahead : ahead.slice(at);
    entry.tp = tp;
    entry.lp = lp;
    if (k < count) entry.k = k;
    else {
      entry.k = 0;
      entry.i++;
    }
    return pending;
  }
  #decode(item) {
    const refs = this.#refs;
    if (!Array.isArray(item)) {
      if (item.s) {
        this.#setModel(item.s[0], item.s[1]);
        return;
      }
      return this.#decodeUpdate(item);
    }
    const event = {};
    for (let i = 0; i < item.length; i += 2) {
      const packed = item[i + 1];
      event[item[i]] = packed[0] === "a" ? packed[1].map((x) => refs.dec(x)) : this.#dec(packed);
    }
    if (event.type === "message_start") {
      this.#partial = { ...event.message };
      this.#streamed = new Set();
    }
    else if (event.type === "message_end") this.#partial = undefined;
    return event;
  }
  /** A reference, or `["P", id, …changes]`: the streamed partial is the final message. */
  #dec(packed) {
    if (packed[0] !== "P") return this.#refs.dec(packed);
    const P = this.#partial;
    if (!P) return undefined;
    this.#apply(P, packed[2], packed[3], packed[4]);
    this.#refs.ids.set(P, packed[1]);
    this.#refs.objects.set(packed[1], P);
    return P;
  }
  #apply(P, t, n, o) {
    for (let i = 0; i < t.length; i += 2) P[t[i]] = t[i + 1];
    const content = P.content;
    for (const block of n) content.push(block);
    for (let i = 0; i < o.length; i += 4) {
      const block = content[o[i]];
      const key = o[i + 1];
      const kind = o[i + 2];
      if (kind === 1) block[key] += o[i + 3];
      else if (kind === 0) block[key] = o[i + 3];
      else if (kind === 3) delete block[key];
      else block[key] = patch(block[key], o[i + 3]);
    }
  }
  #decodeUpdate({ t, n, o, e }) {
    let P = this.#partial;
    if (!P) return;
    // Flags of a new partial object / content array first (see host.js), then the changes.
    for (let i = 0; i < e.length; i += 3) {
      if (e[i + 1] !== 1) continue;
      if (e[i + 2] & 1) P = this.#partial = { ...P };
      if (e[i + 2] & 2) P.content = P.content.slice();
    }
    this.#apply(P, t, n, o);
    const content = P.content;
    const ame = {};
    for (let i = 0; i < e.length; i += 3) {
      const key = e[i];
      const kind = e[i + 1];
      let v = e[i + 2];
      if (kind === 1) v = P;
      else if (kind === 2) {
        const block = content[ame.contentIndex];
        v = block?.type === "thinking" ? block.thinking : block?.text;
      } else if (kind === 3) v = content[ame.contentIndex];
      else if (kind === 4) v = this.#dec(v);
      ame[key] = v;
    }
    if (ame.type === "text_delta" || ame.type === "thinking_delta") this.#streamed.add(ame.contentIndex);
    return { type: "message_update", assistantMessageEvent: ame, message: { ...P } };
  }
  /** The in-page Agent's reducer, plus what the page's side keeps: its queues, the worker's transcript, the run's end. */
  #reduce(event) {
    reduce(this.state, event);
    const run = this.#run;
    switch (event.type) {
      case "message_start":
        this.#dequeue(event.message);
        break;
      case "message_end":
        this.#mirror?.push(event.message);
        run?.messages.push(event.message);
        break;
      case "agent_start":
        if (run) run.began = true;
        break;
      case "turn_start":
      case "turn_end":
        if (run) run.turn = event.type === "turn_start";
        break;
      case "agent_end":
        if (run) run.ended = true;
        break;
    }
  }
  #dequeue(message) {
    for (const queue of [this.#steering, this.#followUp]) {
      const i = queue.indexOf(message);
      if (i >= 0) {
        queue.splice(i, 1);
        return;
      }
    }
  }
  /** Whether a listener takes the per-token `message_update` events (one not subscribed with `{ deltas: false }`). */
  #takesDeltas() {
    for (const entry of this.#listeners) if (entry.deltas) return true;
    return false;
  }
  /** Calls the listeners in order; a promise when one returned a promise (the rest wait for it). */
  #dispatch(event) {
    const listeners = this.#listeners;
    if (listeners.size === 0) return;
    const signal = this.#run?.signal;
    const only = this.#only;
    const delta = isStreamDelta(event);
    if (only !== undefined) {
      if (delta && !only.deltas) return;
      let out;
      try {
        out = only.listener(event, signal);
      } catch (e) {
        report(e);
        return;
      }
      if (isThenable(out)) return Promise.resolve(out).then(undefined, report);
      return;
    }
    const it = listeners.values();
    const next = () => {
      for (let r = it.next(); !r.done; r = it.next()) {
        if (delta && !r.value.deltas) continue;
        let out;
        try {
          out = r.value.listener(event, signal);
        } catch (e) {
          report(e);
          continue;
        }
        if (isThenable(out)) return Promise.resolve(out).then(next, (e) => (report(e), next()));
      }
    };
    return next();
  }
  #finish(done) {
    const run = this.#run;
    if (!run || run.id !== done.id) return;
    this.#run = undefined;
    this.#partial = undefined;
    finishRunState(this.state);
    if (done.ok) run.resolve();
    else run.reject(unpackError(done.error));
    run.idle();
  }
  #call({ id, fn, a, s }) {
    const controller = new AbortController();
    this.#calls.set(id, controller);
    const reply = (msg) => {
      if (!this.#calls.has(id)) return;
      this.#calls.delete(id);
      if (this.#held) this.#held.push(msg);
      else this.#post(msg);
    };
    let out;
    try {
      const args = unpack(a, this.#refs, (name) => this.state.tools.find((t) => t.name === name) ?? { name });
      if (fn.startsWith("tool:")) {
        const name = fn.slice(5);
        const tool = this.state.tools.find((t) => t?.name === name);
        if (typeof tool?.execute !== "function") throw new Error(`Tool ${name} not found`);
        const onUpdate = (partial) => {
          if (this.#calls.has(id)) this.#post({ op: "update", id, v: this.#refs.enc(partial) });
        };
        out = tool.execute(args[0], args[1], controller.signal, onUpdate);
      } else {
        let hook = this.#fields[fn];
        if (fn === "beforeToolCall" && this.#wrapBefore) hook = this.#wrapBefore(hook);
        if (typeof hook !== "function") throw new TypeError(`AgentOptions.${fn} is no longer set`);
        out = s ? hook.call(this, ...args, controller.signal) : hook.call(this, ...args);
      }
    } catch (e) {
      reply({ op: "ret", id, ok: false, error: packError(e) });
      return;
    }
    Promise.resolve(out).then(
      (v) => {
        try {
          if (fn.startsWith("tool:") && v !== null && typeof v === "object") {
            // The result, its content and details keep their identity when they come back in events.
            const refs = this.#refs;
            const content = refs.enc(v.content);
            const details = refs.enc(v.details);
            reply({ op: "ret", id, ok: true, tr: [content, details, refs.enc(v)] });
          } else reply({ op: "ret", id, ok: true, v: pack(v, this.#refs) });
        } catch (e) {
          reply({ op: "ret", id, ok: false, error: packError(e) });
        }
      },
      (e) => reply({ op: "ret", id, ok: false, error: packError(e) }),
    );
  }

  // ---- runs ---------------------------------------------------------------------------------
  #syncMessages() {
    const messages = (this.#mirror = this.#internals.runMessages(true));
    this.#post({ op: "set", key: "messages", v: messages.map((m) => this.#refs.enc(m)) });
    this.#sweep();
  }
  /**
   * Between runs, both sides forget the objects that crossed but those the agent still holds (its
   * transcript and queues): a message trimmed from the transcript, a superseded partial result or
   * everything before a `reset()` would otherwise stay reachable for the agent's lifetime.
   */
  #sweep() {
    if (this.#run || !this.#worker || this.#dead) return;
    const live = [];
    for (const m of [...this.#internals.runMessages(true), ...this.#steering, ...this.#followUp]) live.push(m, m?.content, m?.details);
    const ids = this.#refs.retain(live);
    if (ids !== undefined) this.#post({ op: "keep", ids });
  }
  /** Edits of `state.messages` in place since the last sync reach the worker before a run. */
  #syncBeforeRun() {
    if (this.#internals.runMessages(true) !== this.#mirror) this.#syncMessages();
  }
  #start(kind, input) {
    if (!this.#worker && this.#factory) this.#startWorker();
    const controller = new AbortController();
    let resolve, reject, idle;
    const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
    const idlePromise = new Promise((res) => (idle = res));
    const id = ++this.#runId;
    // What was delivered of it (see `#failure`): began, a turn open, its messages, ended.
    this.#run = { id, kind, input, controller, signal: controller.signal, resolve, reject, idle, idlePromise, began: false, turn: false, messages: [], ended: false };
    startRunState(this.state);
    if (this.#dead || !this.#worker) {
      this.#fail(this.#dead ?? new Error("pi-agent-wasm: the agent's worker is not running"));
      return promise;
    }
    this.#syncBeforeRun();
    this.#post({ op: "run", id, kind, input: pack(input, this.#refs) });
    return promise;
  }
  prompt(input, images) {
    if (this.#run) return Promise.reject(new Error(ALREADY_PROMPTING));
    return this.#start("prompt", images === undefined ? [input] : [input, images]);
  }
  continue() {
    if (this.#run) return Promise.reject(new Error(ALREADY_CONTINUING));
    // Refused here as the in-page Agent refuses them, before a run starts (a worker that fails meanwhile
    // would make a failed run of it).
    const messages = this.state.messages;
    if (messages.every((m) => m?.role === "system")) return Promise.reject(new Error("No messages to continue from"));
    if (messages[messages.length - 1]?.role === "assistant" && this.#steering.length === 0 && this.#followUp.length === 0) {
      return Promise.reject(new Error("Cannot continue from message role: assistant"));
    }
    return this.#start("continue", []);
  }
  abort() {
    const run = this.#run;
    if (!run) return;
    run.controller.abort();
    // The page's own calls (tools, hooks) see the abort now rather than after a round trip to the worker, and
    // what they settle to on the abort (in its listeners, or a few microtasks later) travels in the abort's own
    // message: the worker, which abandons calls still pending two macrotasks after its abort, as an Agent in the
    // page does, takes those results in the same task as the abort.
    const held = (this.#held = []);
    for (const c of this.#calls.values()) c.abort(run.controller.signal.reason);
    let hops = 0;
    const send = () => {
      if (++hops < 8) return void Promise.resolve().then(send);
      this.#held = undefined;
      this.#post({ op: "abort", rets: held });
    };
    send();
  }
  /** The seam of optional entries with a half in the worker (extensions.js). */
  [WORKER_EXTENSION](name, half) {
    this.#extensions.set(name, half);
    return (v) => this.#post({ op: "ext", name, v });
  }
  /** The seam pi-agent-wasm/session wraps `beforeToolCall` through (src/agent/state.js). */
  [WRAP_BEFORE_TOOL_CALL](wrap) {
    this.#wrapBefore = wrap;
  }
  /** The seam pi-agent-wasm/session resumes restored tool calls through: the worker's agent runs the call. */
  [RUN_TOOL_CALL](toolCall, assistantMessage, signal) {
    if (!this.#worker && this.#factory) this.#startWorker();
    if (this.#dead || !this.#worker) return Promise.reject(this.#dead ?? new Error("pi-agent-wasm: the agent's worker is not running"));
    this.#syncBeforeRun();
    const id = ++this.#toolRunId;
    return new Promise((resolve, reject) => {
      this.#toolRuns.set(id, { resolve, reject });
      this.#post({ op: "runTool", id, input: pack([toolCall, assistantMessage], this.#refs) });
      const abort = () => this.#post({ op: "abortTool", id });
      if (signal?.aborted) abort();
      else signal?.addEventListener("abort", abort, { once: true });
    });
  }
  /** The seam of optional entries with a half in the worker (extensions.js). */
  [WORKER_EXTENSION](name, half) {
    this.#extensions.set(name, half);
    return (v) => this.#post({ op: "ext", name, v });
  }
  waitForIdle() {
    return this.#run?.idlePromise ?? Promise.resolve();
  }
  reset() {
    if (this.#run) throw new Error(ALREADY_RESETTING);
    // As the in-page reset does (the messages setter posts the baseline); the worker also empties its queues.
    resetState(this.state);
    this.#post({ op: "clear", which: "clearAllQueues" });
    this.#steering = [];
    this.#followUp = [];
    this.#sweep();
  }

  // ---- queues -------------------------------------------------------------------------------
  steer(message) {
    this.#steering.push(message);
    this.#post({ op: "steer", m: this.#refs.enc(message) });
  }
  followUp(message) {
    this.#followUp.push(message);
    this.#post({ op: "followUp", m: this.#refs.enc(message) });
  }
  clearSteeringQueue() {
    this.#steering = [];
    this.#post({ op: "clear", which: "clearSteeringQueue" });
  }
  clearFollowUpQueue() {
    this.#followUp = [];
    this.#post({ op: "clear", which: "clearFollowUpQueue" });
  }
  clearAllQueues() {
    this.clearSteeringQueue();
    this.clearFollowUpQueue();
  }
  hasQueuedMessages() {
    return this.#steering.length > 0 || this.#followUp.length > 0;
  }
  peekQueuedMessages() {
    const upTo = (q) => {
      const i = q.findIndex((m) => !m);
      return i < 0 ? q.slice() : q.slice(0, i);
    };
    const steering = upTo(this.#steering);
    return steering.length ? steering : upTo(this.#followUp);
  }
}

/** Applies `diffValue` ops (host.js), copying each changed container once (new identity along the changed path). */
function patch(root, ops) {
  const copied = new Set();
  const own = (x) => {
    if (copied.has(x)) return x;
    const c = Array.isArray(x) ? x.slice() : { ...x };
    copied.add(c);
    return c;
  };
  root = own(root);
  for (const [path, kind, v] of ops) {
    if (path.length === 0 && kind === 0) {
      root = v;
      continue;
    }
    let at = root;
    const end = kind === 4 ? path.length : path.length - 1;
    for (let i = 0; i < end; i++) {
      const child = own(at[path[i]]);
      at[path[i]] = child;
      at = child;
    }
    if (kind === 4) at.length = v;
    else {
      const key = path[path.length - 1];
      if (kind === 0) at[key] = v;
      else if (kind === 1) at[key] += v;
      else delete at[key];
    }
  }
  return root;
}
