// The Agent's state (src/agent/mod.rs): the `agent.state` object, the
// reducer that applies each event to it before the listeners run, the
// listeners' dispatch, and the frozen snapshots for UI frameworks.

import { isThenable } from "../js/values.js";
import { toolDeclaration, systemPromptOf, currentSystemMessage } from "../agent_loop/declare.js";
import { isExposedTranscript, registerRunTranscript, watchSettle } from "../js/glue.js";

/** The model of an Agent built without one. */
export const DEFAULT_MODEL = {
  id: "unknown",
  name: "unknown",
  api: "unknown",
  provider: "unknown",
  baseUrl: "",
  reasoning: false,
  input: [],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
};

const frame =
  typeof requestAnimationFrame === "function" ? (f) => requestAnimationFrame(() => f()) : (f) => setTimeout(f, 0);

/**
 * The `agent.state` object, with the reference's keys, order and accessors
 * (plain data except `systemPrompt`, `tools` and `messages`). Snapshots for UI
 * frameworks compare the fields with the last snapshot, so they also see an
 * app's own assignments; watchers are told of every change the agent makes.
 */
export function createAgentState(initial) {
  let tools = initial?.tools?.slice() ?? [];
  let messages = initial?.messages?.slice() ?? [];
  const prompt = initial?.systemPrompt;
  const declarations = tools.map((t) => toolDeclaration(t)[0]);
  if (messages[0]?.role !== "system" && (prompt || declarations.length > 0)) {
    const first = { role: "system", content: prompt ?? "" };
    if (declarations.length) first.toolsAdded = declarations;
    first.timestamp = 0;
    messages.unshift(first);
  }

  // One entry per subscription (the same function may subscribe twice). Called per token: with no watcher
  // `{ coalesce: false }` (the adapters' case), a change costs two checks until the frame's notification.
  const watchers = new Set();
  let syncWatchers = 0;
  let scheduled = false;
  const notify = () => {
    scheduled = false;
    for (const { watcher, sync } of watchers) if (!sync) watcher();
  };
  const changed = () => {
    if (syncWatchers !== 0) for (const { watcher, sync } of watchers) if (sync) watcher();
    if (!scheduled && watchers.size !== 0) {
      scheduled = true;
      frame(notify);
    }
  };

  const state = {
    get systemPrompt() {
      return systemPromptOf(messages);
    },
    model: initial?.model ?? DEFAULT_MODEL,
    thinkingLevel: initial?.thinkingLevel ?? "off",
    get tools() {
      return tools;
    },
    set tools(next) {
      tools = next.slice();
      changed();
    },
    get messages() {
      // Once handed out, the array may be edited in place by the app: the
      // run mirror must then be checked element by element (see `mirror`).
      exposed = true;
      return messages;
    },
    set messages(next) {
      messages = next.slice();
      exposed = false;
      changed();
    },
    isStreaming: false,
    streamingMessage: undefined,
    pendingToolCalls: new Set(),
    errorMessage: undefined,
  };

  let exposed = false;
  // The loop's private copy of the transcript from the last run, reused by the
  // next run while it still equals `messages` (see `runContext`).
  let mirror;
  let mirrorSource;
  const mirrorValid = () => {
    if (mirror === undefined || mirrorSource !== messages || mirror.length !== messages.length || isExposedTranscript(mirror)) {
      return false;
    }
    if (!exposed) return mirror[mirror.length - 1] === messages[messages.length - 1];
    for (let i = messages.length - 1; i >= 0; i--) if (mirror[i] !== messages[i]) return false;
    return true;
  };

  let snapshot;
  let source;
  let length = -1;
  let last;
  let frozenMessages;
  let systemPrompt = "";
  STATE_INTERNALS.set(state, {
    changed,
    messages: () => messages,
    runMessages(persistent) {
      if (persistent && mirrorValid()) return mirror;
      const copy = messages.slice();
      mirror = persistent ? copy : undefined;
      mirrorSource = messages;
      return copy;
    },
    dropMirror() {
      mirror = undefined;
    },
    snapshot() {
      const tail = messages[messages.length - 1];
      const moved = source !== messages || length !== messages.length || last !== tail;
      const s = snapshot;
      if (
        s !== undefined &&
        !moved &&
        s.model === state.model &&
        s.thinkingLevel === state.thinkingLevel &&
        s.tools === tools &&
        s.isStreaming === state.isStreaming &&
        s.streamingMessage === state.streamingMessage &&
        s.pendingToolCalls === state.pendingToolCalls &&
        s.errorMessage === state.errorMessage
      ) {
        return s;
      }
      if (moved) {
        frozenMessages = Object.freeze(messages.slice());
        source = messages;
        length = messages.length;
        last = tail;
        systemPrompt = systemPromptOf(messages);
      }
      snapshot = Object.freeze({
        systemPrompt,
        model: state.model,
        thinkingLevel: state.thinkingLevel,
        tools,
        messages: frozenMessages,
        isStreaming: state.isStreaming,
        streamingMessage: state.streamingMessage,
        pendingToolCalls: state.pendingToolCalls,
        errorMessage: state.errorMessage,
      });
      return snapshot;
    },
    watch(watcher, sync) {
      const entry = { watcher, sync };
      watchers.add(entry);
      if (sync) syncWatchers++;
      return () => {
        const removed = watchers.delete(entry);
        if (removed && sync) syncWatchers--;
        return removed;
      };
    },
  });
  return state;
}

const changedState = (state) => STATE_INTERNALS.get(state)?.changed();

export const STATE_INTERNALS = new WeakMap();

// The seam pi-agent-wasm/session drives an agent through; `Agent` and `WorkerAgent` implement it
// (symbol keys: not part of the Agent API; `Symbol.for`, so that two copies of the package agree).
// - `agent[WRAP_BEFORE_TOOL_CALL](wrap)`: runs call `wrap(hook)` in place of the app's
//   `beforeToolCall` hook (`wrap` undefined: the hook itself), while `agent.beforeToolCall` still
//   reads and sets the app's own hook.
// - `agent[RUN_TOOL_CALL](toolCall, assistantMessage, signal)`: runs one tool call of
//   `assistantMessage` as a run of the agent would (its tools, its hooks, `beforeToolCall` wrapped,
//   its transcript as the context), without events; resolves to `{ result, isError }`.
export const WRAP_BEFORE_TOOL_CALL = Symbol.for("pi-agent-wasm.wrapBeforeToolCall");
export const RUN_TOOL_CALL = Symbol.for("pi-agent-wasm.runToolCall");

export const getSnapshot = (state) => STATE_INTERNALS.get(state).snapshot();

export function subscribeState(state, watcher, options) {
  if (typeof watcher !== "function") throw new TypeError("subscribeState(listener): listener must be a function");
  return STATE_INTERNALS.get(state).watch(watcher, options?.coalesce === false);
}

/** `state.messages` for the agent's own reads (which do not count as handing the array out). */
export const stateMessages = (state) => STATE_INTERNALS.get(state).messages();

export const dropRunMirror = (state) => STATE_INTERNALS.get(state).dropMirror();

export function resetState(state) {
  const baseline = currentSystemMessage(stateMessages(state));
  state.messages = baseline ? [baseline] : [];
  state.isStreaming = false;
  state.streamingMessage = undefined;
  state.pendingToolCalls = new Set();
  state.errorMessage = undefined;
  changedState(state);
}

export function startRunState(state) {
  state.isStreaming = true;
  state.streamingMessage = undefined;
  state.errorMessage = undefined;
  changedState(state);
}

export function finishRunState(state) {
  state.isStreaming = false;
  state.streamingMessage = undefined;
  state.pendingToolCalls = new Set();
  changedState(state);
}

export function reduce(state, event) {
  switch (event.type) {
    case "message_start":
    case "message_update":
      state.streamingMessage = event.message;
      break;
    case "message_end":
      state.streamingMessage = undefined;
      stateMessages(state).push(event.message);
      break;
    case "tool_execution_start": {
      const next = new Set(state.pendingToolCalls);
      next.add(event.toolCallId);
      state.pendingToolCalls = next;
      break;
    }
    case "tool_execution_end": {
      const next = new Set(state.pendingToolCalls);
      next.delete(event.toolCallId);
      state.pendingToolCalls = next;
      break;
    }
    case "turn_end":
      if (event.message.role === "assistant" && event.message.errorMessage) state.errorMessage = event.message.errorMessage;
      break;
    case "agent_end":
      state.streamingMessage = undefined;
      break;
  }
}

/**
 * Reduces `event` into the state, then calls the listeners in order with live
 * `Set` iteration. Returns `undefined` when every listener returned a plain
 * value, or a promise for the rest of the dispatch once one returns a promise.
 */
export function agentProcess(state, listeners, event, signal) {
  reduce(state, event);
  changedState(state);
  if (!signal) throw new Error("Agent listener invoked outside active run");
  return dispatch(receivers(listeners, event), event, signal);
}

/** The listeners `event` goes to: all of them, but a stream delta skips those subscribed with `{ deltas: false }`. */
const receivers = (listeners, event) => {
  const some = listeners.deltas;
  return some !== undefined && isStreamDelta(event) ? some : listeners;
};

/**
 * An Agent's listeners in subscription order. While some listener was added with
 * `{ deltas: false }`, `deltas` holds the others, in the same order: the ones a stream delta goes
 * to. Without such a listener it stays `undefined`, and a delta costs the dispatch one check.
 */
export class Listeners extends Set {
  deltas = undefined;

  subscribe(listener, withDeltas) {
    this.add(listener);
    if (withDeltas) this.deltas?.add(listener);
    else if (this.deltas === undefined) this.deltas = new Set([...this].filter((l) => l !== listener));
    return () => {
      const removed = this.delete(listener);
      const deltas = this.deltas;
      // Back to one set once every listener left takes the deltas (the others are a subset).
      if (deltas !== undefined && (deltas.delete(listener), deltas.size === this.size)) this.deltas = undefined;
      return removed;
    };
  }
}

/** A `message_update` carrying a text, thinking or tool-call argument delta (the per-token events). */
export const isStreamDelta = (event) => {
  if (event.type !== "message_update") return false;
  const type = event.assistantMessageEvent?.type;
  return type === "text_delta" || type === "thinking_delta" || type === "toolcall_delta";
};

/** The listeners' dispatch of `event` (none: nothing to iterate, the common case of a UI that only renders). */
const dispatch = (set, event, signal) => (set.size === 0 ? undefined : dispatchFrom(set.values(), event, signal));

function dispatchFrom(iterator, event, signal) {
  // `for…of` over the Set's own iterator: V8 allocates no result object per listener, and an early
  // return leaves the iterator where it is (a Set iterator has no `return()`), for the continuation.
  for (const listener of iterator) {
    const out = listener(event, signal);
    if (isThenable(out)) return Promise.resolve(out).then(() => dispatchFrom(iterator, event, signal));
  }
  return undefined;
}


/** An Agent's delivery (see `agentProcess`), then `watchSettle` on what is left of it. */
export const agentProcessWatch = (state, listeners, event, signal, slot) =>
  watchSettle(agentProcess(state, listeners, event, signal), slot);

/**
 * A JS function delivering one event to an Agent (reduce, then listeners), as the loop's sink does:
 * `agentProcess` with the state's internals looked up once per run instead of once per token.
 */
export function agentDeliver(state, listeners, signal) {
  if (!signal) return (event) => agentProcess(state, listeners, event, signal);
  const changed = STATE_INTERNALS.get(state).changed;
  return (event) => {
    reduce(state, event);
    changed();
    return dispatch(receivers(listeners, event), event, signal);
  };
}

/**
 * The context a run starts from: a private copy of the transcript (the loop
 * appends to it in place) and of the tools. With `persistent`, the copy is the
 * one the last run ended with, whenever it still equals the transcript, so a
 * prompt does not copy a long transcript again.
 */
export function runContext(state, persistent) {
  const context = { messages: STATE_INTERNALS.get(state).runMessages(persistent), tools: state.tools.slice() };
  if (persistent) registerRunTranscript(context);
  return context;
}

export const lastRole = (messages) => messages[messages.length - 1]?.role;

export const allSystem = (messages) => messages.length === 0 || messages.every((m) => m.role === "system");
