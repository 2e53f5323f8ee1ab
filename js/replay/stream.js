// The streams a recorder and a replay hand the loop: a stream that knows when the loop reads each
// item and when it stops reading (so that a log says what the loop saw, and playback gives it
// exactly that), and the rebuilding of a streaming message from recorded events.
import { createAssistantMessageEventStream } from "../index.js";
import { clone } from "./log.js";

export const isThenable = (x) => x !== null && (typeof x === "object" || typeof x === "function") && typeof x.then === "function";
/** A promise whose rejection nobody has to handle (the loop may have stopped listening). */
export const handled = (p) => (p.catch(() => {}), p);

const DONE = { value: undefined, done: true };

/**
 * An async iterator over items pushed into it: `{ value }` (an event), `{ done: true }` (the end)
 * or `{ error }` (what the stream threw; `thrown` marks it). `onRead(item)` runs as the loop takes each item,
 * `onReturn()` when the loop stops reading before the end. It offers `nextQueued()`, as the
 * package's own streams do, so the loop reads queued items without a promise each.
 */
export class ReadStream {
  constructor(onRead, onReturn, result) {
    this.onRead = onRead;
    this.onReturn = onReturn;
    this.resultOf = result;
    this.items = [];
    this.head = 0;
    this.waiter = undefined;
    /** The loop took the end (or the error): nothing more is read. */
    this.finished = false;
    /** The loop stopped reading (`return()`). */
    this.closed = false;
  }
  [Symbol.asyncIterator]() {
    return this;
  }
  push(item) {
    if (this.closed || this.finished) return;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      this.take(item, waiter.resolve, waiter.reject);
    } else this.items.push(item);
  }
  take(item, resolve, reject) {
    if (item.done || item.thrown) this.finished = true;
    this.onRead(item);
    if (item.thrown) reject(item.error);
    else resolve(item.done ? DONE : { value: item.value, done: false });
  }
  nextQueued() {
    if (this.finished || this.closed) return DONE;
    const item = this.items[this.head];
    if (item === undefined || item.thrown) return undefined;
    this.head++;
    let out;
    this.take(item, (r) => (out = r));
    return out;
  }
  next() {
    if (this.finished || this.closed) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      const item = this.items[this.head];
      if (item !== undefined) {
        this.head++;
        this.take(item, resolve, reject);
      } else this.waiter = { resolve, reject };
    });
  }
  return() {
    if (!this.closed && !this.finished) {
      this.closed = true;
      this.onReturn();
      this.waiter?.resolve(DONE);
      this.waiter = undefined;
    }
    return Promise.resolve(DONE);
  }
  result() {
    return this.resultOf();
  }
}

/**
 * A stream read through to `source`'s iterator: each iterator result is the source's own, taken
 * when the loop asks for it; `took(item)` runs as the loop gets each (`{ value }`, `{ done }` or
 * `{ thrown, error }`), `cut()` when the loop stops reading before the end, `result()` is the
 * stream's `result()`.
 */
export class Tap {
  constructor(make, source, took, cut, result) {
    this.make = make;
    this.source = source;
    this.took = took;
    this.cut = cut;
    this.resultOf = result;
    this.iterator = undefined;
    this.queued = undefined;
    this.finished = false;
    this.closed = false;
  }
  [Symbol.asyncIterator]() {
    const iterator = this.make.call(this.source);
    this.iterator = iterator;
    const queued = iterator?.nextQueued;
    if (typeof queued === "function") this.queued = () => queued.call(iterator);
    return this;
  }
  settled(result) {
    if (this.closed || this.finished) return result;
    if (result === null || typeof result !== "object") {
      this.thrown(new TypeError(`Iterator result ${result} is not an object`));
      return result;
    }
    if (result.done) this.finished = true;
    this.took(result.done ? { done: true } : { value: result.value });
    return result;
  }
  thrown(error) {
    if (this.closed || this.finished) return;
    this.finished = true;
    this.took({ thrown: true, error });
  }
  nextQueued() {
    if (this.queued === undefined) return undefined;
    const result = this.queued();
    return result === undefined ? undefined : this.settled(result);
  }
  next() {
    let pending;
    try {
      pending = this.iterator.next();
    } catch (error) {
      this.thrown(error);
      throw error;
    }
    return Promise.resolve(pending).then(
      (result) => this.settled(result),
      (error) => {
        this.thrown(error);
        throw error;
      },
    );
  }
  return() {
    if (!this.closed && !this.finished) {
      this.closed = true;
      this.cut();
    }
    this.closed = true;
    try {
      const done = this.iterator?.return?.();
      if (isThenable(done)) return handled(Promise.resolve(done));
    } catch {
      // The stream is left behind either way.
    }
    return Promise.resolve(DONE);
  }
  result() {
    return this.resultOf();
  }
}

/**
 * A stream event as a log keeps it: without `partial` (rebuilt on playback), except a `start`
 * event's. An event without a string `type` (which the loop skips) is kept as `{ type: "" }`.
 */
export function recordEvent(event) {
  if (event === null || typeof event !== "object" || typeof event.type !== "string") return { type: "" };
  const type = event.type;
  // The per-token events, as providers make them: copied without a JSON round trip.
  if ((type === "text_delta" || type === "thinking_delta" || type === "toolcall_delta") && typeof event.delta === "string" &&
    Number.isInteger(event.contentIndex) && "partial" in event && Object.keys(event).length === 4) {
    return { type, contentIndex: event.contentIndex, delta: event.delta };
  }
  if (!("partial" in event) || type === "start") return clone(event);
  const { partial, ...rest } = event;
  return clone(rest);
}

export function emptyMessage(model, reason = "stop") {
  return {
    role: "assistant",
    content: [],
    api: model?.api,
    provider: model?.provider,
    model: model?.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: reason,
    timestamp: Date.now(),
  };
}

/** A stream of one `error` event (a replay that diverged answers with one). */
export function errorStream(model, text, reason = "error") {
  const s = createAssistantMessageEventStream();
  s.push({ type: "error", reason, error: { ...emptyMessage(model, reason), errorMessage: text } });
  s.end();
  return s;
}

/**
 * The streaming message a recorded event leaves, applied to `partial` in place, as a provider
 * updates its own: a block starts as the log recorded it (`block`), text and thinking grow by
 * their deltas, a tool call's argument text grows by its deltas (and its `partialJson`, when the
 * provider keeps one) and its arguments are the last complete parse of it, until `toolcall_end`
 * gives the call. An event that names a block it did not start changes nothing.
 */
export function applyEvent(partial, raw, event, block) {
  const i = event.contentIndex;
  const content = Array.isArray(partial.content) ? partial.content : (partial.content = []);
  const current = content[i];
  switch (event.type) {
    case "start":
      break;
    case "text_start":
      content[i] = block ? clone(block) : { type: "text", text: "" };
      break;
    case "text_delta":
      if (current?.type === "text" && typeof current.text === "string") current.text += event.delta;
      break;
    case "thinking_start":
      content[i] = block ? clone(block) : { type: "thinking", thinking: "" };
      break;
    case "thinking_delta":
      if (current?.type === "thinking" && typeof current.thinking === "string") current.thinking += event.delta;
      break;
    case "toolcall_start":
      content[i] = block ? clone(block) : { type: "toolCall", id: event.id ?? "", name: event.toolName ?? "", arguments: {} };
      raw[i] = "";
      break;
    case "toolcall_delta":
      if (current?.type !== "toolCall") break;
      raw[i] = (raw[i] ?? "") + event.delta;
      if (typeof current.partialJson === "string") current.partialJson += event.delta;
      try {
        current.arguments = JSON.parse(raw[i]);
      } catch {
        // An incomplete argument text keeps the last complete arguments.
      }
      break;
    case "toolcall_end":
      if (event.toolCall) content[i] = clone(event.toolCall);
      break;
    default:
      break;
  }
}

/** Whether a stream event starts a block (the log keeps the block it started, as the provider made it). */
export const startsBlock = (type) => type === "text_start" || type === "thinking_start" || type === "toolcall_start";

/** Makes `target` hold `source`'s fields (same object: the loop and the UI hold it). */
export function replaceFields(target, source) {
  for (const key of Object.keys(target)) if (!(key in source)) delete target[key];
  Object.assign(target, source);
}
