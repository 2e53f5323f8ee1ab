// JS half of streamProxy: the request, the response's error body, and the
// per-event edits of the partial message (plain property writes on JS objects).
// Rust drives the reading, framing, JSON-argument parsing and the ordering.

import { EMPTY_USAGE } from "./events.js";

// A fresh copy per message: the partial's usage is its own (1.4.0 builds a new
// object here), while EMPTY_USAGE is shared by failure messages.
const emptyUsage = () => ({ ...EMPTY_USAGE, cost: { ...EMPTY_USAGE.cost } });

export function proxyPartial(model) {
  return {
    role: "assistant",
    stopReason: "pending",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    timestamp: Date.now(),
  };
}

/** Starts the POST; resolves with the Response. Only serialisable options are sent. */
export function proxyFetch(model, context, options) {
  const body = JSON.stringify({
    model,
    context,
    options: {
      temperature: options.temperature,
      samplingParams: options.samplingParams,
      maxTokens: options.maxTokens,
      reasoning: options.reasoning,
      cacheRetention: options.cacheRetention,
      sessionId: options.sessionId,
      disableContinuation: options.disableContinuation,
      headers: options.headers,
      metadata: options.metadata,
      transport: options.transport,
      thinkingBudgets: options.thinkingBudgets,
      maxRetryDelayMs: options.maxRetryDelayMs,
    },
  });
  return globalThis.fetch(`${options.proxyUrl}/api/stream`, {
    method: "POST",
    headers: { Authorization: `Bearer ${options.authToken}`, "Content-Type": "application/json" },
    body,
    signal: options.signal,
  });
}

/** The message for a non-OK response: the body's `error` (a string, or `{ message }`), else the status. */
export async function proxyErrorMessage(response) {
  let message = `Proxy error: ${response.status} ${response.statusText}`;
  try {
    const data = await response.json();
    const error = data?.error;
    if (error) {
      const text = typeof error === "object" && typeof error.message === "string" ? error.message : error;
      message = `Proxy error: ${text}`;
    }
  } catch {
    // The body was not JSON: keep the status line.
  }
  return message;
}

/**
 * Watches `signal` from before the request starts, so that an abort cancels
 * the body reader (its pending read then ends) before fetch's own abort
 * handling errors the stream. Set `watch.reader` once there is one.
 */
export function abortWatch(signal) {
  const watch = { reader: undefined, remove() {} };
  try {
    if (!signal || typeof signal.addEventListener !== "function") return watch;
    const onAbort = () => {
      watch.reader?.cancel("Request aborted by user").catch(() => {});
    };
    signal.addEventListener("abort", onAbort);
    watch.remove = () => {
      try {
        signal.removeEventListener("abort", onAbort);
      } catch {
        // A hostile signal: the listener dies with it.
      }
    };
  } catch {
    // A signal whose methods throw cannot be watched; fetch reports it instead.
  }
  return watch;
}

export const bodyReader = (response) => response.body.getReader();
export const warnUnhandled = (type) => console.warn(`Unhandled proxy event type: ${type}`);

const fail = (message) => {
  throw new Error(message);
};

/** A text delta applied to its block, and the event to push (from a parsed line or from Rust's tape). */
function textDelta(partial, i, delta) {
  const block = partial.content[i];
  if (block?.type !== "text") fail("Received text_delta for non-text content");
  block.text += delta;
  return { type: "text_delta", contentIndex: i, delta, partial };
}

/** A thinking delta applied to its block, and the event to push. */
function thinkingDelta(partial, i, delta) {
  const block = partial.content[i];
  if (block?.type !== "thinking") fail("Received thinking_delta for non-thinking content");
  block.thinking += delta;
  return { type: "thinking_delta", contentIndex: i, delta, partial };
}

/**
 * Applies one proxy event to `partial` and returns the stream event to push,
 * or `undefined`. Tool-call deltas are handled in Rust (they need the parser)
 * and come back through `toolcallDelta`.
 */
export function applyProxyEvent(e, partial) {
  const content = partial.content;
  const i = e.contentIndex;
  switch (e.type) {
    case "start":
      return { type: "start", partial };
    case "text_start":
      content[i] = { type: "text", text: "" };
      return { type: "text_start", contentIndex: i, partial };
    case "text_delta":
      return textDelta(partial, i, e.delta);
    case "text_end": {
      const block = content[i];
      if (block?.type !== "text") fail("Received text_end for non-text content");
      block.textSignature = e.contentSignature;
      return { type: "text_end", contentIndex: i, content: block.text, partial };
    }
    case "thinking_start":
      content[i] = { type: "thinking", thinking: "" };
      return { type: "thinking_start", contentIndex: i, partial };
    case "thinking_delta":
      return thinkingDelta(partial, i, e.delta);
    case "thinking_end": {
      const block = content[i];
      if (block?.type !== "thinking") fail("Received thinking_end for non-thinking content");
      block.thinkingSignature = e.contentSignature;
      return { type: "thinking_end", contentIndex: i, content: block.thinking, partial };
    }
    case "toolcall_start":
      content[i] = { type: "toolCall", id: e.id, name: e.toolName, arguments: {}, partialJson: "" };
      return { type: "toolcall_start", contentIndex: i, partial };
    case "toolcall_end": {
      const block = content[i];
      if (block?.type !== "toolCall") return undefined;
      Object.assign(block, e.toolCall);
      delete block.partialJson;
      return { type: "toolcall_end", contentIndex: i, toolCall: block, partial };
    }
    case "done":
      partial.stopReason = e.reason;
      partial.usage = e.usage;
      if (e.providerThinkingLevel !== undefined) partial.providerThinkingLevel = e.providerThinkingLevel;
      return { type: "done", reason: e.reason, message: partial };
    case "error":
      partial.stopReason = e.reason;
      partial.errorMessage = e.errorMessage;
      partial.usage = e.usage;
      if (e.providerThinkingLevel !== undefined) partial.providerThinkingLevel = e.providerThinkingLevel;
      return { type: "error", reason: e.reason, error: partial };
    default:
      warnUnhandled(e.type);
      return undefined;
  }
}

/**
 * The open tool-call block at `i`. A delta for a block that is not a tool call, or for one whose
 * `toolcall_end` came already (its `partialJson` is gone), ends the stream with an error, as 1.5.0
 * and later do (1.4.0 appends such a delta to `undefined` and replaces the finished call's arguments).
 */
export function toolcallBlock(partial, i) {
  const block = partial.content[i];
  if (block?.type !== "toolCall" || block.partialJson === undefined) fail("Received toolcall_delta for non-toolCall content");
  return block;
}

/** A delta's edit: a new block object with the grown JSON text and the new arguments. */
export function toolcallDelta(partial, i, block, delta, args) {
  const next = { ...block, partialJson: block.partialJson + delta, arguments: args };
  partial.content[i] = next;
  return { type: "toolcall_delta", contentIndex: i, delta, partial };
}

export function failPartial(partial, reason, message) {
  partial.stopReason = reason;
  partial.errorMessage = message;
  return { type: "error", reason, error: partial };
}

export const newObject = () => ({});
export const newArray = () => [];
export const cloneArray = (array) => array.slice();
// Spread defines own data properties, so a `__proto__` member stays a member.
export const cloneObject = (object) => ({ ...object });

/**
 * One SSE data line, parsed and applied in one call. Returns 0 (nothing to
 * push), 1 (pushed), 2 (pushed a terminal event), or the parsed event when Rust
 * must act: a `toolcall_delta` (not applied: Rust parses the arguments), or a
 * `toolcall_start`/`toolcall_end` (applied and pushed; Rust resets its parser).
 */
export function proxyLine(text, partial, stream) {
  const e = JSON.parse(text);
  const type = e.type;
  if (type === "toolcall_delta") return e;
  const out = applyProxyEvent(e, partial);
  if (out === undefined) return 0;
  stream.push(out);
  if (type === "toolcall_start" || type === "toolcall_end") return e;
  return out.type === "done" || out.type === "error" ? 2 : 1;
}

// Not wasm-bindgen's decoder: a delta may start with U+FEFF, which must stay.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Text and thinking deltas Rust recognised without a JSON parse, applied and
 * pushed in stream order: `bytes` holds their texts back to back (valid UTF-8),
 * `view` per delta `index << 1 | thinking` and where its text ends (UTF-16 units).
 */
export function proxyDeltas(bytes, view, partial, stream) {
  // Both look into wasm memory; a setter on a block could call into wasm and
  // grow (detach) it, so they are read first.
  const text = utf8.decode(bytes);
  const tape = view.slice();
  let from = 0;
  for (let k = 0; k < tape.length; k += 2) {
    const i = tape[k] >>> 1;
    const to = tape[k + 1];
    const delta = text.slice(from, to);
    from = to;
    stream.push(tape[k] & 1 ? thinkingDelta(partial, i, delta) : textDelta(partial, i, delta));
  }
}
