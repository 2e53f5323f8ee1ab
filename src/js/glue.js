// Streams, the provider request's helpers and promise settling: the JS that
// src/js/glue.rs, src/js/settle.rs, src/js/spawn.rs and src/agent_loop/request.rs
// use. (The rest of the binding layer's JS lives beside the Rust module that
// uses it; see src/js/README.md.)
//
// Rust drives the loop; the objects it hands to user code are built in JS, in
// one call each, so that data coming from JS (messages, results, `details`)
// is never copied through wasm memory.

import { isThenable } from "./values.js";
import { evMessageUpdate } from "./events.js";
import { defaultConvertToLlm } from "../agent_loop/loop.js";
import { STATE_INTERNALS, agentProcess } from "../agent/state.js";

/** Async-iterable push queue with a final result (pi-ai's EventStream protocol). */
export class EventStream {
  constructor(isComplete, extractResult) {
    this._isComplete = isComplete;
    this._extract = extractResult;
    this._queue = [];
    this._head = 0;
    this._waiting = [];
    this.done = false;
    this._settled = false;
    this._result = new Promise((resolve) => {
      this._resolve = (value) => {
        this._settled = true;
        resolve(value);
      };
    });
  }
  push(event) {
    if (this.done) return;
    if (this._isComplete(event)) {
      this.done = true;
      this._resolve(this._extract(event));
    }
    const waiter = this._waiting.shift();
    if (waiter) waiter({ value: event, done: false });
    else this._queue.push(event);
  }
  end(result) {
    this.done = true;
    if (result !== undefined) this._resolve(result);
    const waiting = this._waiting;
    this._waiting = [];
    for (const waiter of waiting) waiter({ value: undefined, done: true });
  }
  _shift() {
    const event = this._queue[this._head];
    this._queue[this._head++] = undefined;
    if (this._head > 1024 && this._head * 2 > this._queue.length) {
      this._queue = this._queue.slice(this._head);
      this._head = 0;
    }
    return event;
  }
  [Symbol.asyncIterator]() {
    const stream = this;
    return {
      // Read by the Rust loop to take queued events without a promise per event.
      _stream: stream,
      next() {
        if (stream._head < stream._queue.length) return Promise.resolve({ value: stream._shift(), done: false });
        if (stream.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => stream._waiting.push(resolve));
      },
      return() {
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
  result() {
    return this._result;
  }
}

const isTerminal = (event) => event.type === "done" || event.type === "error";
const terminalMessage = (event) => (event.type === "done" ? event.message : event.error);

/** The stream a `streamFn` returns: completes on `done`/`error` and times the final message. */
export class AssistantMessageEventStream extends EventStream {
  constructor() {
    super(isTerminal, terminalMessage);
    this._startedAt = Date.now();
    this._startedMono = performance.now();
  }
  push(event) {
    if (event.type === "done") this._time(event.message);
    else if (event.type === "error") this._time(event.error);
    super.push(event);
  }
  end(result) {
    if (result !== undefined) this._time(result);
    super.end(result);
  }
  _time(message) {
    if (this.done || message == null || message.durationMs !== undefined || message.timestamp < this._startedAt) return;
    message.durationMs = Math.max(0, Math.round(performance.now() - this._startedMono));
  }
}

export function createAssistantMessageEventStream() {
  return new AssistantMessageEventStream();
}

export function agentEventStream() {
  return new EventStream(
    (event) => event.type === "agent_end",
    (event) => event.messages,
  );
}

// ---- stream consumption -------------------------------------------------------

/** Opens the async iterator of whatever a stream function returned. */
export function openIterator(stream) {
  const make = stream != null ? stream[Symbol.asyncIterator] : undefined;
  if (typeof make !== "function") throw new TypeError("streamFn must return an async-iterable AssistantMessageEventStream");
  return make.call(stream);
}

/**
 * Next iterator result, synchronously when the stream is one of ours and has an
 * event queued (saves a promise and a wasm wake-up per event), else a promise.
 */
export function nextResult(iterator) {
  const s = iterator._stream;
  if (s !== undefined && s._head < s._queue.length) return { value: s._shift(), done: false };
  return iterator.next();
}

/** `[promise, resolve, reject]`: a promise the wasm side settles later (see spawn.rs). */
export function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return [promise, resolve, reject];
}

let settler;
/** The one callback that settles the wasm side's waiting futures (see settle.rs). */
export const setSettler = (f) => {
  settler = f;
};
/** Whether `value` is a thenable; if so, `settler(slot, ok, value)` runs once it settles, as `await` would. */
export function watchSettle(value, slot) {
  if (!isThenable(value)) return false;
  Promise.resolve(value).then(
    (v) => settler(slot, true, v),
    (e) => settler(slot, false, e),
  );
  return true;
}

/**
 * `watchSettle` for a `beforeToolCall` hook, whose outcome no longer matters once `signal` aborts
 * (the call ends with `Operation aborted` either way): if the hook is still pending one macrotask
 * after the abort, the slot settles with `undefined` and the hook is left to itself. 1.4.0 waits
 * forever on a hook that ignores the abort. A hook that settles on the abort (an abort listener,
 * a microtask, a zero-delay timer) settles first, as in 1.4.0.
 */
export function watchSettleUntilAbort(value, slot, signal) {
  if (!isThenable(value)) return false;
  // May throw (a `then` getter): before anything can settle the slot.
  const pending = Promise.resolve(value);
  let open = true;
  let listening = false;
  const settle = (ok, v) => {
    if (!open) return;
    open = false;
    if (listening) signal.removeEventListener("abort", onAbort);
    settler(slot, ok, v);
  };
  const onAbort = () => setTimeout(() => settle(true, undefined), 0);
  // Anything but an `AbortSignal`-like object (a loop run without a signal) is never aborted.
  listening = typeof signal?.addEventListener === "function" && !signal.aborted;
  if (listening) signal.addEventListener("abort", onAbort, { once: true });
  else if (signal?.aborted === true) onAbort();
  pending.then(
    (v) => settle(true, v),
    (e) => settle(false, e),
  );
  return true;
}

export function streamOptions(config, apiKey, identity, signal) {
  return { ...config, apiKey, identity, signal };
}
/** See request.rs: the hook's API key, else the config's; the identity over the default one. */
export const requestOptions = (config, apiKey, signal) =>
  streamOptions(config, apiKey || config.apiKey, mergeIdentity(getDefaultIdentity(), config.identity), signal);
export function mergeIdentity(...sources) {
  let merged = {};
  for (const source of sources) {
    if (!source) continue;
    merged = { ...merged };
    if (source.userAgent !== undefined) merged.userAgent = source.userAgent;
    if (source.attribution !== undefined) merged.attribution = source.attribution;
    if (source.version !== undefined) merged.version = source.version;
  }
  return merged;
}
export const stampThinking = (message, level) => Object.assign(message, { thinkingLevel: level });
/** Event kinds the loop dispatches on, as small integers (one call instead of a string copy). */
const KINDS = { start: 1, text_start: 2, text_delta: 2, text_end: 2, thinking_start: 2, thinking_delta: 2, thinking_end: 2, toolcall_start: 2, toolcall_delta: 2, toolcall_end: 2, done: 3, error: 3 };
export const eventKind = (event) => (event != null && Object.hasOwn(KINDS, event.type) ? KINDS[event.type] : 0);

export const PI_ATTRIBUTION = { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] };
/** The identity the loop sends with every request unless `identity` overrides fields of it. */
export const DEFAULT_AGENT_IDENTITY = { attribution: PI_ATTRIBUTION };
export const getDefaultIdentity = () => DEFAULT_AGENT_IDENTITY;

/**
 * The context a run starts from: a private copy of the transcript (the loop
 * appends to it in place) and of the tools. With `persistent`, the copy is the
 * one the last run ended with, whenever it still equals the transcript, so a
 * prompt does not copy a long transcript again.
 */
export const runContext = (state, persistent) => ({
  messages: STATE_INTERNALS.get(state).runMessages(persistent),
  tools: state.tools.slice(),
});

/**
 * Whether an agent's runs may keep their transcript copy and its LLM view
 * between requests and runs: only when no hook is given the context (and could
 * keep or edit it) and `convertToLlm` is the default.
 */
export const privateTranscript = (fields) =>
  fields.convertToLlm === defaultConvertToLlm &&
  !fields.transformContext &&
  !fields.prepareRequest &&
  !fields.finishTurn &&
  !fields.prepareNextTurn &&
  !fields.prepareNextTurnWithContext &&
  !fields.beforeToolCall &&
  !fields.afterToolCall;

const LLM_VIEWS = new WeakMap();
/**
 * `defaultConvertToLlm(messages)` for a run's private transcript, kept up to
 * date by converting only the messages added since the last request: earlier
 * entries of a private transcript never change (the loop only appends, and
 * replaces the streaming message after it was converted). The stream function
 * gets the same array each time, extended in place; if it changed the array's
 * length, the view is rebuilt.
 */
export function llmView(messages) {
  let view = LLM_VIEWS.get(messages);
  if (view === undefined || view.out.length !== view.length || view.from > messages.length) {
    view = { out: [], from: 0, length: 0 };
    LLM_VIEWS.set(messages, view);
  }
  const out = view.out;
  for (let i = view.from; i < messages.length; i++) {
    const m = messages[i];
    const role = m.role;
    if (role === "system" || role === "user" || role === "assistant" || role === "toolResult") out.push(m);
  }
  view.from = messages.length;
  view.length = out.length;
  return out;
}

export const streamDeliver = (stream) => (event) => {
  stream.push(event);
};

let pumped;
/** The promise `pumpUpdates` stopped on (PUMP_AWAIT). */
export const takePumped = () => {
  const p = pumped;
  pumped = undefined;
  return p;
};

/**
 * Forwards the update events already queued on one of our streams, each in
 * one step: the transcript's last entry becomes the event's partial and
 * `message_update` goes to `deliver`. This is the loop's per-token path; Rust
 * decides everything else (it stops here at any other event, when the queue is
 * empty, or when a listener returns a promise, and resumes from there).
 * Returns 0: not one of our streams, 1: queue empty or another event is next,
 * 2: a delivery returned a promise (see `takePumped`).
 */
export function pumpUpdates(iterator, target, deliver) {
  const s = iterator._stream;
  if (s === undefined) return 0;
  while (s._head < s._queue.length) {
    const event = s._queue[s._head];
    if (eventKind(event) !== 2) return 1;
    s._shift();
    const partial = event.partial;
    target[target.length - 1] = partial;
    const out = deliver(evMessageUpdate(partial, event));
    if (isThenable(out)) {
      pumped = out;
      return 2;
    }
  }
  return 1;
}

/**
 * `stream.result()`, except that one of our streams that has ended without a
 * result (no `done`/`error` event, `end()` without a message) is an error now
 * instead of a promise that never settles (1.4.0 hangs there).
 */
export function finalResult(stream) {
  if (stream instanceof EventStream && stream.done && !stream._settled) {
    return Promise.reject(
      new Error("The stream ended without a final message: no done or error event, and end() was called without one"),
    );
  }
  return stream.result();
}

/** An Agent's delivery (see `agentProcess`), then `watchSettle` on what is left of it. */
export const agentProcessWatch = (state, listeners, event, signal, slot) =>
  watchSettle(agentProcess(state, listeners, event, signal), slot);
