// Reading one response stream for the loop (request.rs).
//
// Every stream a stream function returns takes this path: pi-ai's class, an
// `async function*` with `result()`, a hand-written iterator, ours. Update
// events (text, thinking and tool-call deltas) are handled here, in a JS loop,
// so that a token costs no call into wasm; Rust takes over at the events that
// change the structure (`start`, `done`, `error`, the end of iteration).
//
// An iterator may implement `nextQueued()` (documented in the README): it
// returns an already-queued iterator result synchronously, or `undefined` when
// none is queued, and the reader then awaits `next()` as usual. Our
// `EventStream` implements it, which spares a promise per queued event.

import { isThenable } from "../js/values.js";
import { evMessageStartCopy, evMessageUpdate } from "../js/events.js";
import { markHandled } from "./tools.js";

/** `step()` results: what Rust decides on. */
const END = 0;
const START = 1;
const TERMINAL = 3;

const UPDATES = new Set([
  "text_start",
  "text_delta",
  "text_end",
  "thinking_start",
  "thinking_delta",
  "thinking_end",
  "toolcall_start",
  "toolcall_delta",
  "toolcall_end",
]);

/** The `message_update` event for one update event (the reference's key order). */

/**
 * Opens `stream`'s async iterator for reading into `target` (the transcript,
 * whose last entry is the streaming message once `start` was read);
 * `deliver(event)` delivers one event and returns `undefined` or a promise to
 * await.
 */
export function openReader(stream, target, deliver) {
  const make = stream != null ? stream[Symbol.asyncIterator] : undefined;
  if (typeof make !== "function") throw new TypeError("streamFn must return an async-iterable AssistantMessageEventStream");
  return new StreamReader(make.call(stream), target, deliver);
}

class StreamReader {
  constructor(iterator, target, deliver) {
    this.iterator = iterator;
    this.target = target;
    this.deliver = deliver;
    this.started = false;
    /** The streaming message: the last `partial` read. */
    this.partial = undefined;
    /** The `message_start` event of the `start` read, with its copy of the message as it was then. */
    this.startEvent = undefined;
    this.stopped = false;
    /** A listener's promise being awaited, if any. */
    this.delivery = undefined;
    // `next` is read once, as `for await` reads it (the reference's loop); so is `nextQueued`.
    const next = iterator.next;
    this.next = typeof next === "function" ? next : () => {
      throw new TypeError(`${String(next)} is not a function`);
    };
    /** The iterator's `nextQueued()`, if it offers one. */
    this.nextQueued = typeof iterator.nextQueued === "function" ? iterator.nextQueued : undefined;
  }

  /**
   * Reads until the next structural step and returns it (`END`, `START` or
   * `TERMINAL`), synchronously while results
   * are at hand, else as a promise. A `start` event marks the message started:
   * the caller pushes `this.partial` and emits `this.startEvent`.
   */
  step() {
    for (;;) {
      const result = this.take();
      if (isThenable(result)) return this.stepAsync(result, undefined);
      const kind = this.handle(result);
      if (isThenable(kind)) return this.stepAsync(undefined, kind);
      if (kind !== undefined) return kind;
    }
  }

  /** The next iterator result: a queued one when the iterator offers it, else `next()`. */
  take() {
    const iterator = this.iterator;
    if (this.nextQueued !== undefined) {
      const queued = this.nextQueued.call(iterator);
      if (queued !== undefined) return queued;
    }
    return this.next.call(iterator);
  }

  /** `step()` once something must be awaited: a result (`pending`) or a listener (`delivery`). */
  async stepAsync(pending, delivery) {
    for (;;) {
      if (delivery !== undefined) {
        this.delivery = delivery;
        try {
          await delivery;
        } finally {
          this.delivery = undefined;
        }
        delivery = undefined;
        if (this.stopped) return END;
        pending = this.take();
      }
      const result = isThenable(pending) ? await pending : pending;
      if (this.stopped) return END;
      const kind = this.handle(result);
      if (isThenable(kind)) delivery = kind;
      else if (kind !== undefined) return kind;
      else pending = this.take();
    }
  }

  /**
   * One iterator result: `undefined` when it was consumed here (an update, an
   * unknown event), a delivery's promise to await, or the step for Rust.
   */
  handle(result) {
    if (result === null || typeof result !== "object") {
      throw new TypeError(`Iterator result ${result} is not an object`);
    }
    if (result.done) return END;
    const event = result.value;
    const type = event != null ? event.type : undefined;
    if (type === "start") {
      this.started = true;
      this.partial = event.partial;
      // The copy is taken as the event is read, as 1.4.0's loop body takes it: a provider that runs
      // ahead writes into its partial (pi-ai's `responseId`) in the turns before the loop resumes.
      this.startEvent = evMessageStartCopy(event.partial);
      return START;
    }
    if (type === "done" || type === "error") return TERMINAL;
    // The three per-token types first: they are nearly every event.
    const update = type === "text_delta" || type === "thinking_delta" || type === "toolcall_delta" || UPDATES.has(type);
    if (!this.started || !update) return undefined;
    const partial = event.partial;
    // pi-ai's providers mutate one partial in place: the transcript's last entry changes only
    // when a stream hands over a new object.
    if (partial !== this.partial) {
      this.partial = partial;
      const target = this.target;
      if (target.length > 0) target[target.length - 1] = partial;
      else target.push(partial);
    }
    const out = this.deliver(evMessageUpdate(partial, event));
    return isThenable(out) ? out : undefined;
  }

  /**
   * Stops reading after an abort: the iterator's `return()` is called without
   * waiting on it (its failure is ignored) and any later result is dropped.
   * Returns the listener promise being awaited, if any, for the caller to await.
   */
  stop() {
    this.stopped = true;
    try {
      const iterator = this.iterator;
      if (typeof iterator.return === "function") markHandled(iterator.return());
    } catch {
      // A throwing `return` changes nothing: the stream is left behind either way.
    }
    return this.delivery;
  }
}

/**
 * `partial` as the response of a request ended by the abort (the stream's own `stopReason` and
 * `errorMessage` replaced), with copies of its content blocks: a stream that ignored the abort may
 * go on changing its own, which would change the transcript after the run.
 */
export const abortedMessage = (partial, errorMessage) => {
  const content = partial?.content;
  const copy = Array.isArray(content) ? content.map((b) => (b !== null && typeof b === "object" ? { ...b } : b)) : content;
  return { ...partial, content: copy, stopReason: "aborted", errorMessage };
};
