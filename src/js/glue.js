// Streams, promise settling and the marks on a run's transcript copy: the JS
// that src/js/glue.rs, src/js/settle.rs, src/js/spawn.rs and
// src/agent_loop/request.rs use. (The rest of the binding layer's JS lives beside the Rust module that
// uses it; see src/js/README.md.)
//
// Rust drives the loop; the objects it hands to user code are built in JS, in
// one call each, so that data coming from JS (messages, results, `details`)
// is never copied through wasm memory.

import { isAborted, isThenable } from "./values.js";

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
      next() {
        const queued = this.nextQueued();
        return queued !== undefined ? Promise.resolve(queued) : new Promise((resolve) => stream._waiting.push(resolve));
      },
      /**
       * The next iterator result without a promise when one is at hand (a
       * queued event, or the end), else `undefined`: the optional protocol the
       * agent loop reads streams with (see the README's "Stream functions").
       */
      nextQueued() {
        if (stream._head < stream._queue.length) return { value: stream._shift(), done: false };
        if (stream.done) return { value: undefined, done: true };
        return undefined;
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

/** `[promise, resolve, reject]`: a promise the wasm side settles later (see spawn.rs). */
export function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return [promise, resolve, reject];
}

/** The error text of a call abandoned on an abort, and of a tool call ended by one (errors.rs `msg`). */
export const OPERATION_ABORTED = "Operation aborted";

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
 * `watchSettle` for a call whose outcome no longer matters once `signal` aborts (a hook, a tool's
 * `execute`, the stream function, a read of its stream): if it is still pending two macrotasks
 * after the abort, the slot settles as a rejection with `Operation aborted` (with
 * `rejectWhenAbandoned`, else as `undefined`) and the call is left to itself; what it settles
 * to later is dropped (its rejection handled). 1.4.0 waits forever on code that ignores the abort.
 * Code that settles on the abort (an abort listener, a microtask, a zero-delay timer) settles
 * first, as in 1.4.0. With `outcome`, the slot settles with `outcome(ok, value)` instead (see
 * `callSettleUntilAbort`).
 */
export function watchSettleUntilAbort(value, slot, signal, rejectWhenAbandoned, outcome, graceMs) {
  if (!isThenable(value)) return false;
  // May throw (a `then` getter): before anything can settle the slot.
  const pending = Promise.resolve(value);
  const watch = new Watch(slot, rejectWhenAbandoned, outcome, graceMs);
  // Called after the abort: a macrotask after the call (its own zero-delay timers come first).
  if (isAborted(signal)) setTimeout(() => watch.abandon(), 0);
  // Anything but an `AbortSignal`-like object (a loop run without a signal) is never aborted.
  else if (typeof signal?.addEventListener === "function") watch.waiting = abortWaiters(signal).add(watch);
  pending.then(
    (v) => watch.settle(true, v),
    (e) => watch.settle(false, e),
  );
  return true;
}

/** One watched call: settles its slot once, on its outcome or its abandonment (its state in one object, not in closures). */
class Watch {
  constructor(slot, rejectWhenAbandoned, outcome, graceMs) {
    this.slot = slot;
    this.rejectWhenAbandoned = rejectWhenAbandoned;
    this.outcome = outcome;
    /** How much longer than two macrotasks a call that cleans up on the abort is waited for (a tool's `execute`). */
    this.graceMs = graceMs;
    this.open = true;
    /** The abort waiters it is in, if any. */
    this.waiting = undefined;
  }
  settle(ok, v) {
    if (!this.open) return;
    this.open = false;
    this.waiting?.delete(this);
    if (this.outcome === undefined) settler(this.slot, ok, v);
    else settleWith(this.slot, this.outcome, ok, v);
  }
  // A call reads as one that rejected on the abort; a stream read as `undefined` (its reader
  // keeps the partial message).
  abandon() {
    if (this.graceMs) {
      const graceMs = this.graceMs;
      this.graceMs = 0;
      setTimeout(() => this.abandon(), graceMs);
    } else if (this.rejectWhenAbandoned) this.settle(false, new Error(OPERATION_ABORTED));
    else this.settle(true, undefined);
  }
}

/** Settles `slot` with `outcome(ok, value)`, or as a failure with what `outcome` throws. */
function settleWith(slot, outcome, ok, value) {
  let out;
  try {
    out = outcome(ok, value);
  } catch (error) {
    return settler(slot, false, error);
  }
  settler(slot, true, out);
}

/**
 * Calls `f` with `this` and `args`, and settles `slot` with `outcome(ok, value)` of what it
 * returned or threw, once that settles as `await` would (abandoned after an abort as
 * `watchSettleUntilAbort` abandons it, reading as a rejection): the call, the wait and the
 * reading of its outcome in one crossing (see settle.rs `settle_from`). A value that is not a
 * promise is not awaited: `slot` settles at once.
 */
export function callSettleUntilAbort(f, thisArg, args, signal, slot, outcome, graceMs) {
  let value;
  try {
    value = Reflect.apply(f, thisArg, args);
    if (watchSettleUntilAbort(value, slot, signal, true, outcome, graceMs)) return;
  } catch (error) {
    return settleWith(slot, outcome, false, error);
  }
  settleWith(slot, outcome, true, value);
}

/**
 * Signal → the calls waiting on its abort: one `abort` listener per signal, not one per call. It
 * abandons them two macrotasks after the abort, so that a zero-delay timer set by any abort
 * listener (registered before or after this one) fires first.
 */
const ABORT_WAITERS = new WeakMap();
function abortWaiters(signal) {
  let waiting = ABORT_WAITERS.get(signal);
  if (!waiting) {
    waiting = new Set();
    ABORT_WAITERS.set(signal, waiting);
    const all = waiting;
    const abandon = () => all.forEach((watch) => watch.abandon());
    signal.addEventListener("abort", () => setTimeout(() => setTimeout(abandon, 0), 0), { once: true });
  }
  return waiting;
}

// A run's transcript copy once a tool hook was given it (in its `context`): the hook may keep or
// edit it, as in 1.4.0 within the run, so the next run takes a fresh copy, and the run's requests
// check that the part of it their LLM view converted is still there (`llmView`). Runs whose hooks
// never run pay nothing.
const RUN_TRANSCRIPTS = new WeakMap();
const EXPOSED_TRANSCRIPTS = new WeakSet();
/** Marks the transcript copy of a run's `context` as seen by a tool hook (src/agent_loop/tools.js). */
export function exposeRunContext(context) {
  const messages = RUN_TRANSCRIPTS.get(context);
  if (messages !== undefined) EXPOSED_TRANSCRIPTS.add(messages);
}
export const isExposedTranscript = (messages) => EXPOSED_TRANSCRIPTS.has(messages);
/** Records `context.messages` as the kept transcript copy of the run whose context this is (see `runContext`). */
export const registerRunTranscript = (context) => void RUN_TRANSCRIPTS.set(context, context.messages);

export const streamDeliver = (stream) => (event) => {
  stream.push(event);
};

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
