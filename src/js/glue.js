// The JavaScript half of the binding layer.
//
// Rust drives the loop; the objects it hands to user code are built here, in one
// call each, so that they are ordinary JS objects with the reference's key order
// and stable hidden classes, and so that data coming from JS (messages, results,
// `details`) is never copied through wasm memory. Keep this file small: every
// line ships in the bundle.

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

export const isObjectLike = (value) => value !== null && (typeof value === "object" || typeof value === "function");
const TYPE_TAGS = { undefined: 0, boolean: 1, number: 2, string: 3, function: 4, symbol: 5, bigint: 6 };
/** See view.rs `TypeTag`. */
export const typeTag = (value) =>
  value === null ? 0 : typeof value === "object" ? (Array.isArray(value) ? 7 : 8) : (TYPE_TAGS[typeof value] ?? 8);
/** `signal?.aborted` as a boolean; a throwing getter reads as not aborted. */
export function isAborted(signal) {
  try {
    return isObjectLike(signal) && !!signal.aborted;
  } catch {
    return false;
  }
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
 * `watchSettle` for a call whose outcome no longer matters once `signal` aborts (a hook, a tool's
 * `execute`, the stream function): if it is still pending two macrotasks after the abort, the slot
 * settles as a rejection with `Operation aborted` and the call is left to itself; what it settles
 * to later is dropped (its rejection handled). 1.4.0 waits forever on code that ignores the abort.
 * Code that settles on the abort (an abort listener, a microtask, a zero-delay timer) settles
 * first, as in 1.4.0.
 */
export function watchSettleUntilAbort(value, slot, signal) {
  if (!isThenable(value)) return false;
  // May throw (a `then` getter): before anything can settle the slot.
  const pending = Promise.resolve(value);
  let open = true;
  let waiting;
  const settle = (ok, v) => {
    if (!open) return;
    open = false;
    waiting?.delete(onAbort);
    settler(slot, ok, v);
  };
  const onAbort = () => settle(false, new Error("Operation aborted"));
  // Called after the abort: a macrotask after the call (its own zero-delay timers come first).
  if (isAborted(signal)) setTimeout(onAbort, 0);
  // Anything but an `AbortSignal`-like object (a loop run without a signal) is never aborted.
  else if (typeof signal?.addEventListener === "function") waiting = abortWaiters(signal).add(onAbort);
  pending.then(
    (v) => settle(true, v),
    (e) => settle(false, e),
  );
  return true;
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
    const abandon = () => all.forEach((f) => f());
    signal.addEventListener("abort", () => setTimeout(() => setTimeout(abandon, 0), 0), { once: true });
  }
  return waiting;
}

export function isThenable(value) {
  return isObjectLike(value) && typeof value.then === "function";
}

// ---- values -------------------------------------------------------------------

export function errText(error) {
  return error instanceof Error ? error.message : String(error);
}
export const shallow = (o) => ({ ...o });
export const mono = () => performance.now();

// ---- agent events (reference key order) ---------------------------------------

export const evAgentStart = () => ({ type: "agent_start" });
export const evAgentEnd = (messages) => ({ type: "agent_end", messages });
export const evTurnStart = () => ({ type: "turn_start" });
export const evTurnEnd = (message, toolResults) => ({ type: "turn_end", message, toolResults });
export const evMessageStart = (message) => ({ type: "message_start", message });
export const evMessageStartCopy = (message) => ({ type: "message_start", message: { ...message } });
export const evMessageEnd = (message) => ({ type: "message_end", message });
export const evMessageUpdate = (partial, assistantMessageEvent) => ({
  type: "message_update",
  assistantMessageEvent,
  message: { ...partial },
});
export const evToolStart = (toolCallId, toolName, args) => ({ type: "tool_execution_start", toolCallId, toolName, args });
export const evToolUpdate = (toolCallId, toolName, args, partialResult) => ({
  type: "tool_execution_update",
  toolCallId,
  toolName,
  args,
  partialResult,
});
/** The start event of `toolCall` (its `id`, `name` and `arguments` read in this order). */
export const evToolStartOf = (toolCall) => evToolStart(toolCall.id, toolCall.name, toolCall.arguments);
export const evToolEndOf = (toolCall, result, isError, durationMs) =>
  evToolEnd(toolCall.id, toolCall.name, result, isError, durationMs);
export function evToolEnd(toolCallId, toolName, result, isError, durationMs) {
  const event = { type: "tool_execution_end", toolCallId, toolName, result, isError };
  if (durationMs !== undefined) event.durationMs = durationMs;
  return event;
}

// ---- messages and results -----------------------------------------------------

export const errorToolResult = (text) => ({ content: [{ type: "text", text }], details: {} });
/**
 * `[result, isError]` of a settled `execute`: its result and whether it says
 * `isError: true`, or an error result (a failure, a result that cannot be read).
 * `errText` throwing propagates.
 */
export function executedResult(ok, value) {
  if (ok) {
    if (value == null) return [errorToolResult(`Cannot read properties of ${value} (reading 'isError')`), true];
    try {
      return [value, value.isError === true];
    } catch (error) {
      value = error;
    }
  }
  return [errorToolResult(errText(value)), true];
}
/** A blocking `beforeToolCall` outcome's error result (`terminate` kept), else `undefined`. */
export function blockedResult(outcome) {
  if (!isObjectLike(outcome) || !outcome.block) return undefined;
  const result = errorToolResult(outcome.reason || "Tool execution was blocked");
  if (outcome.terminate === true) result.terminate = true;
  return result;
}

export function toolResultMessage(toolCall, result, isError, durationMs) {
  const message = {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    content: result.content ?? [],
    details: result.details,
    usage: result.usage,
    isError,
  };
  if (durationMs !== undefined) message.durationMs = durationMs;
  message.timestamp = Date.now();
  return message;
}

/**
 * The events answering one unanswered tool call of a failed run (see agent.rs
 * `handle_run_failure`): its `tool_execution_end` if it was started, then its
 * error result message; none when the call cannot be read.
 */
export function unansweredEvents(call, failure, pending) {
  const reason = failure.errorMessage;
  const result = errorToolResult(`Tool call was not completed: the run ended early (${typeof reason === "string" ? reason : ""})`);
  let message;
  try {
    message = toolResultMessage(call, result, true);
  } catch {
    return [];
  }
  const id = optionOf(call, "id");
  const events = setHas(pending, id) ? [evToolEnd(id, optionOf(call, "name"), result, true)] : [];
  events.push(evMessageStart(message), evMessageEnd(message));
  return events;
}
/** The events that end a failed run with `failure`. */
export const failureEvents = (failure) => [
  evMessageStart(failure),
  evMessageEnd(failure),
  evTurnEnd(failure, []),
  evAgentEnd([failure]),
];

export function failureMessage(model, stopReason, errorMessage, usage) {
  return {
    role: "assistant",
    content: [{ type: "text", text: "" }],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage,
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

export function userMessage(text, images) {
  const content = [{ type: "text", text }];
  if (images && images.length > 0) content.push(...images);
  return { role: "user", content, timestamp: Date.now() };
}

/** `afterToolCall` override, field by field (R49). Returns [result, isError]. */
export function applyAfterToolCall(result, isError, r) {
  const structured = r.structuredContent ?? (r.content ? undefined : result.structuredContent);
  const next = {
    ...result,
    content: r.content ?? result.content,
    details: r.details ?? result.details,
    usage: r.usage ?? result.usage,
    terminate: r.terminate ?? result.terminate,
  };
  if (structured === undefined) delete next.structuredContent;
  else next.structuredContent = structured;
  return [next, r.isError ?? isError];
}

// ---- contexts and options -----------------------------------------------------

export const contextWith = (context, messages) => ({ ...context, messages });
export function configWith(config, model, reasoning) {
  return { ...config, model, reasoning };
}
/** `config` with a hook update's `model` and `thinkingLevel` (`"off"`: no reasoning) applied. */
export function updatedConfig(update, config) {
  const model = update.model ?? config.model;
  const level = update.thinkingLevel;
  return configWith(config, model, level === undefined ? config.reasoning : level === "off" ? undefined : level);
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
export const withArguments = (toolCall, args) => ({ ...toolCall, arguments: args });
export const turnContext = (message, toolResults, context, newMessages) => ({ message, toolResults, context, newMessages });
export const requestContext = (context, model, thinkingLevel) => ({ context, model, thinkingLevel });
export const beforeContext = (assistantMessage, toolCall, args, context) => ({ assistantMessage, toolCall, args, context });
export const afterContext = (assistantMessage, toolCall, args, result, isError, context) => ({
  assistantMessage,
  toolCall,
  args,
  result,
  isError,
  context,
});
export const toArray = (value) => (Array.isArray(value) ? value : Array.from(value));
/** Event kinds the loop dispatches on, as small integers (one call instead of a string copy). */
const KINDS = { start: 1, text_start: 2, text_delta: 2, text_end: 2, thinking_start: 2, thinking_delta: 2, thinking_end: 2, toolcall_start: 2, toolcall_delta: 2, toolcall_end: 2, done: 3, error: 3 };
export const eventKind = (event) => (event != null && Object.hasOwn(KINDS, event.type) ? KINDS[event.type] : 0);

// ---- tool declarations (§4.6) -------------------------------------------------

/** `[declaration, json]`: the declaration object and its JSON text, which is what equality compares. */
export function toolDeclaration(tool) {
  const declaration = {
    name: tool.name,
    description: tool.description,
    parameters: JSON.parse(JSON.stringify(tool.parameters)),
  };
  if (tool.constrainedSampling !== undefined) declaration.constrainedSampling = tool.constrainedSampling;
  return [declaration, JSON.stringify(declaration)];
}

export function withToolChanges(message, toolsAdded, toolsRemoved) {
  const { toolsAdded: _a, toolsRemoved: _r, ...rest } = message;
  if (toolsAdded.length) rest.toolsAdded = toolsAdded;
  if (toolsRemoved.length) rest.toolsRemoved = toolsRemoved;
  return rest;
}

export function toolUpdateMessage(toolsAdded, toolsRemoved) {
  const message = { role: "system", content: "", timestamp: Date.now() };
  if (toolsAdded.length) message.toolsAdded = toolsAdded;
  if (toolsRemoved.length) message.toolsRemoved = toolsRemoved;
  return message;
}

export const toolRef = (name) => ({ name });

export function defaultConvertToLlm(messages) {
  // The reference's V8 messages, spelled out so that minifying this file keeps them.
  if (messages == null) throw new TypeError(`Cannot read properties of ${messages} (reading 'filter')`);
  if (typeof messages.filter !== "function") throw new TypeError("messages.filter is not a function");
  return messages.filter(
    (m) => m.role === "system" || m.role === "user" || m.role === "assistant" || m.role === "toolResult",
  );
}
export const getDefaultConvertToLlm = () => defaultConvertToLlm;

// ---- plain data ---------------------------------------------------------------

/** Own-property assignment that cannot reach a prototype (a `__proto__` key stays data). */
export function setKey(object, key, value) {
  if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}
export const jsonStringify = (value, indent) => JSON.stringify(value, null, indent);

export const PI_ATTRIBUTION = { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] };
/** The identity the loop sends with every request unless `identity` overrides fields of it. */
export const DEFAULT_AGENT_IDENTITY = { attribution: PI_ATTRIBUTION };
export const getDefaultIdentity = () => DEFAULT_AGENT_IDENTITY;

/**
 * A tool's `onUpdate`: while open, each partial result goes to `deliver` at once
 * (as a `tool_execution_update` event when `toolCall` is given, else as is), and
 * what delivery returns is kept in `pending`, marked handled so that a rejection
 * waits for the loop instead of being reported as unhandled. Late calls are
 * ignored, as in the reference.
 */
export function updateGate(deliver, toolCall) {
  const gate = {
    open: true,
    pending: [],
    onUpdate(partialResult) {
      if (!gate.open || deliver === undefined) return;
      let out;
      try {
        out = deliver(toolCall === undefined ? partialResult : evToolUpdate(toolCall.id, toolCall.name, toolCall.arguments, partialResult));
      } catch (error) {
        out = Promise.reject(error);
      }
      if (isThenable(out)) {
        markHandled(out);
        gate.pending.push(out);
      }
    },
  };
  return gate;
}
export const hasLegacyTypeBoxKind = (schema) => Object.getOwnPropertySymbols(schema).includes(Symbol.for("TypeBox.Kind"));

// ---- Schema host (json::schema::Host): the engine's own RegExp, numbers, URL parser.
export function regexTest(pattern, flags, text) {
  try {
    return new RegExp(pattern, flags).test(text);
  } catch (e) {
    return String(e.message);
  }
}
export const numberToString = (n) => String(n);
export const stringToNumber = (s) => Number(s);
export const urlCanParse = (url, base) => URL.canParse(url, base);

// ---- Agent state (R67, R68, R80, R81) -----------------------------------------

export const EMPTY_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
export const getEmptyUsage = () => EMPTY_USAGE;

const DEFAULT_MODEL = {
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

const contentText = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.filter((b) => b && b.type === "text").map((b) => b.text).join("\n")
      : "";

/** Replays every system message into one (content appended, sections patched, tools replayed). */
export function currentSystemMessage(messages) {
  const content = [];
  const sections = new Map();
  const tools = new Map();
  let timestamp;
  for (const message of messages) {
    if (message?.role !== "system") continue;
    timestamp ??= message.timestamp;
    const text = contentText(message.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  if (timestamp === undefined && tools.size === 0) return undefined;
  const out = { role: "system", content: content.join("\n\n") };
  if (sections.size > 0) out.sections = Object.fromEntries(sections);
  if (tools.size > 0) out.toolsAdded = [...tools.values()];
  out.timestamp = timestamp ?? 0;
  return out;
}

function systemPromptOf(messages) {
  const message = currentSystemMessage(messages);
  if (!message) return "";
  const parts = [contentText(message.content)];
  for (const value of Object.values(message.sections ?? {})) if (value != null) parts.push(value);
  return parts.filter((p) => p.length > 0).join("\n\n");
}

const frame =
  typeof requestAnimationFrame === "function" ? (f) => requestAnimationFrame(() => f()) : (f) => setTimeout(f, 0);

const LOOP_HOOKS = ["convertToLlm", "transformContext", "getApiKey", "finishTurn", "prepareRequest", "prepareNextTurn",
  "getSteeringMessages", "getFollowUpMessages", "beforeToolCall", "afterToolCall"];
/**
 * An `AgentLoopConfig`'s hooks in `LOOP_HOOKS` order (`undefined` when absent),
 * then whether tools run sequentially; a non-function hook is a `TypeError`.
 */
export function readHooks(config) {
  if (!isObjectLike(config)) throw new TypeError("config must be an AgentLoopConfig object");
  const hooks = LOOP_HOOKS.map((key) => {
    const hook = config[key];
    if (hook != null && typeof hook !== "function") throw new TypeError(`config.${key} must be a function`);
    return hook ?? undefined;
  });
  hooks.push(config.toolExecution === "sequential");
  return hooks;
}

const HOOK_OPTIONS = ["convertToLlm", "transformContext", "getApiKey", "onPayload", "onResponse",
  "onProviderStreamEvent", "beforeToolCall", "afterToolCall", "finishTurn", "prepareRequest", "prepareNextTurn",
  "prepareNextTurnWithContext"];
// An agent's JS half, by its state object (what `agent.state` returns): its
// option fields and listeners. (Its steering and follow-up queues are Rust's.)
const AGENTS = new WeakMap();
const agentOf = (agent) => AGENTS.get(agent.state);
/**
 * The `Agent` members that live in JS, on its prototype: the option accessors,
 * listeners and snapshots. The package entry calls this once.
 */
export function defineAgent(Agent) {
  const define = (key, descriptor) => Object.defineProperty(Agent.prototype, key, { ...descriptor, configurable: true });
  for (const key of [...HOOK_OPTIONS, "streamFunction", "sessionId", "thinkingBudgets", "transport", "maxRetryDelayMs",
    "toolExecution", "identity"]) {
    define(key, {
      get() {
        return agentOf(this).fields[key];
      },
      set(value) {
        agentOf(this).fields[key] = value;
      },
    });
  }
  const methods = {
    subscribe(listener) {
      if (typeof listener !== "function") throw new TypeError("subscribe(listener): listener must be a function");
      return subscribe(agentOf(this).listeners, listener);
    },
    getSnapshot() {
      return getSnapshot(this.state);
    },
    subscribeState(listener, options) {
      return subscribeState(this.state, listener, options);
    },
  };
  for (const key in methods) define(key, { value: methods[key], writable: true });
}
/** `options[key]` for an object, `undefined` otherwise or when the read throws. */
function optionOf(options, key) {
  try {
    return isObjectLike(options) ? options[key] : undefined;
  } catch {
    return undefined;
  }
}
const optionError = (option, expected) => new TypeError(`AgentOptions.${option} must be ${expected}`);
/**
 * The `Agent` constructor's reading of `options`: `[fields, state, listeners,
 * steeringMode, followUpMode]`, or a throw naming the bad option. `fallback` is
 * the default stream function, or the error to throw when there is none.
 */
export function agentInit(options, fallback) {
  if (options != null && !isObjectLike(options)) throw new TypeError("AgentOptions must be an object");
  const initial = optionOf(options, "initialState");
  if (initial != null && !isObjectLike(initial)) throw optionError("initialState", "an object");
  for (const key of ["tools", "messages"]) {
    const v = optionOf(initial, key);
    if (v != null && !Array.isArray(v)) throw optionError("initialState." + key, "an array");
  }
  const fields = {};
  for (const key of HOOK_OPTIONS) {
    const value = optionOf(options, key);
    if (value != null && typeof value !== "function") throw optionError(key, "a function");
    fields[key] = value;
  }
  fields.convertToLlm ??= defaultConvertToLlm;
  let streamFn = optionOf(options, "streamFn");
  if (streamFn == null) {
    if (typeof fallback !== "function") throw fallback;
    streamFn = fallback;
  } else if (typeof streamFn !== "function") throw optionError("streamFn", "a function");
  fields.streamFunction = streamFn;
  for (const key of ["sessionId", "thinkingBudgets", "maxRetryDelayMs", "identity"]) fields[key] = optionOf(options, key);
  fields.transport = optionOf(options, "transport") ?? "auto";
  fields.toolExecution = optionOf(options, "toolExecution") ?? "parallel";
  const state = createAgentState(initial);
  const listeners = new Set();
  AGENTS.set(state, { fields, listeners });
  return [fields, state, listeners, optionOf(options, "steeringMode"), optionOf(options, "followUpMode")];
}

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

  // One entry per subscription (the same function may subscribe twice).
  const watchers = new Set();
  let scheduled = false;
  const notify = () => {
    scheduled = false;
    for (const { watcher, sync } of watchers) if (!sync) watcher();
  };
  const changed = () => {
    if (watchers.size === 0) return;
    for (const { watcher, sync } of watchers) if (sync) watcher();
    if (!scheduled) {
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
    if (mirror === undefined || mirrorSource !== messages || mirror.length !== messages.length) return false;
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
      return () => watchers.delete(entry);
    },
  });
  return state;
}

const changedState = (state) => STATE_INTERNALS.get(state)?.changed();

const STATE_INTERNALS = new WeakMap();
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

function reduce(state, event) {
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
  return dispatchFrom(listeners.values(), event, signal);
}

function dispatchFrom(iterator, event, signal) {
  for (let step = iterator.next(); !step.done; step = iterator.next()) {
    const out = step.value(event, signal);
    if (isThenable(out)) return Promise.resolve(out).then(() => dispatchFrom(iterator, event, signal));
  }
  return undefined;
}

export function subscribe(listeners, listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The messages `prompt(input, images)` sends. */
export function promptMessages(input, images) {
  if (Array.isArray(input)) return input;
  if (typeof input !== "string") return [input];
  return [userMessage(input, images)];
}

/**
 * An agent's loop config for a run; `nextTurn` is its `prepareNextTurn` bridge,
 * `getSteeringMessages` and `getFollowUpMessages` poll its queues.
 */
export function agentLoopConfig(state, nextTurn, getSteeringMessages, getFollowUpMessages) {
  const { fields: agent } = AGENTS.get(state);
  const level = optionOf(state, "thinkingLevel");
  const reasoning = level === "off" ? undefined : level;
  const prepareNextTurn = agent.prepareNextTurnWithContext || agent.prepareNextTurn ? nextTurn : undefined;
  return {
    model: state.model,
    reasoning,
    sessionId: agent.sessionId,
    onPayload: agent.onPayload,
    onResponse: agent.onResponse,
    onProviderStreamEvent: agent.onProviderStreamEvent,
    transport: agent.transport,
    thinkingBudgets: agent.thinkingBudgets,
    maxRetryDelayMs: agent.maxRetryDelayMs,
    identity: agent.identity,
    toolExecution: agent.toolExecution,
    beforeToolCall: agent.beforeToolCall,
    afterToolCall: agent.afterToolCall,
    finishTurn: agent.finishTurn,
    prepareRequest: agent.prepareRequest,
    prepareNextTurn,
    convertToLlm: agent.convertToLlm,
    transformContext: agent.transformContext,
    getApiKey: agent.getApiKey,
    getSteeringMessages,
    getFollowUpMessages,
  };
}

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
export const lastRole = (messages) => messages[messages.length - 1]?.role;
export const allSystem = (messages) => messages.length === 0 || messages.every((m) => m.role === "system");
export function toolCallOutcome(toolCall, result, isError, durationMs) {
  const outcome = { toolCall, result, isError };
  if (durationMs !== undefined) outcome.durationMs = durationMs;
  return outcome;
}
export function reportPanic(message) {
  console.error(message);
}

/** `[index, message, index, message, …]` for the system messages of `messages[from..]`. */
export function systemMessagesFrom(messages, from) {
  const out = [];
  for (let i = from; i < messages.length; i++) {
    const m = messages[i];
    if (m != null && m.role === "system") out.push(i, m);
  }
  return out;
}

// ---- the streaming fast path ----------------------------------------------------

/** A JS function delivering one event to an Agent (reduce, then listeners), as the loop's sink does. */
export const agentDeliver = (state, listeners, signal) => (event) => agentProcess(state, listeners, event, signal);
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
export function markHandled(value) {
  try {
    if (isThenable(value)) Promise.resolve(value).then(undefined, () => {});
  } catch {
    // A thenable whose `then` throws is rejected when it is awaited; nothing to mark.
  }
}
export const jsString = (value) => String(value);
export const ownKeys = (object) => Object.keys(object);

/** The tool calls of the transcript's last assistant message that have no result yet. */
export function unansweredToolCalls(messages) {
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "assistant") {
      last = i;
      break;
    }
  }
  if (last < 0) return [];
  const message = messages[last];
  if (message.stopReason === "error" || message.stopReason === "aborted" || !Array.isArray(message.content)) return [];
  const answered = new Set();
  for (let i = last + 1; i < messages.length; i++) if (messages[i]?.role === "toolResult") answered.add(messages[i].toolCallId);
  return message.content.filter((c) => c?.type === "toolCall" && !answered.has(c.id));
}
export const setHas = (set, value) => set instanceof Set && set.has(value);

/**
 * `stream.result()`, except that one of our streams that has ended without a
 * result (no `done`/`error` event, `end()` without a message) is an error now
 * instead of a promise that never settles (1.4.0 hangs there, R37).
 */
export function finalResult(stream) {
  if (stream instanceof EventStream && stream.done && !stream._settled) {
    return Promise.reject(
      new Error("The stream ended without a final message: no done or error event, and end() was called without one"),
    );
  }
  return stream.result();
}

const DECLARATION_JSON = new WeakMap();
/**
 * `JSON.stringify(toToolDeclaration(tool))`, remembered per tool object while
 * its `name`, `description`, `parameters` and `constrainedSampling` stay the same
 * objects (the JSON round trip of a schema is most of a turn's fixed cost).
 */
export function toolDeclarationJson(tool) {
  const hit = DECLARATION_JSON.get(tool);
  if (
    hit !== undefined &&
    hit.name === tool.name &&
    hit.description === tool.description &&
    hit.parameters === tool.parameters &&
    hit.constrainedSampling === tool.constrainedSampling
  ) {
    return hit.json;
  }
  const json = toolDeclaration(tool)[1];
  if (tool !== null && typeof tool === "object") {
    DECLARATION_JSON.set(tool, {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      constrainedSampling: tool.constrainedSampling,
      json,
    });
  }
  return json;
}
/** Whether any called tool declares `executionMode: "sequential"`. */
export function anySequential(tools, toolCalls) {
  for (const toolCall of toolCalls) if (findTool(tools, toolCall.name)?.executionMode === "sequential") return true;
  return false;
}
/** `message.content.filter((c) => c?.type === "toolCall")`, with V8's errors for missing or non-array content. */
export function toolCallsOf(message) {
  const content = message?.content;
  if (content == null) throw new TypeError(`Cannot read properties of ${content} (reading 'filter')`);
  if (!Array.isArray(content)) throw new TypeError("message.content.filter is not a function");
  return content.filter((c) => c?.type === "toolCall");
}
/** Appends every element of `source` to `target`. */
export function pushAll(target, source) {
  for (let i = 0; i < source.length; i++) target.push(source[i]);
}
/** An Agent's delivery (see `agentProcess`), then `watchSettle` on what is left of it. */
export const agentProcessWatch = (state, listeners, event, signal, slot) =>
  watchSettle(agentProcess(state, listeners, event, signal), slot);
const TOOLS_SIGNATURES = new WeakMap();
let nextSignature = 1;
/**
 * A number that stays the same while `tools` holds the same tool objects with
 * the same declaration fields (the ones `toolDeclarationJson` depends on), so
 * the loop can skip comparing declarations when nothing changed.
 */
export function toolsSignature(tools) {
  if (!Array.isArray(tools)) return 0;
  const seen = TOOLS_SIGNATURES.get(tools);
  if (seen !== undefined && seen.items.length === tools.length) {
    let same = true;
    for (let i = 0; i < tools.length && same; i++) {
      const t = tools[i];
      const e = seen.items[i];
      same = t === e.tool && t != null && t.name === e.name && t.description === e.description &&
        t.parameters === e.parameters && t.constrainedSampling === e.constrainedSampling;
    }
    if (same) return seen.signature;
  }
  const items = tools.map((tool) => ({
    tool,
    name: tool?.name,
    description: tool?.description,
    parameters: tool?.parameters,
    constrainedSampling: tool?.constrainedSampling,
  }));
  const signature = nextSignature++;
  TOOLS_SIGNATURES.set(tools, { signature, items });
  return signature;
}
export const findTool = (tools, name) => (Array.isArray(tools) ? tools.find((t) => t.name === name) : undefined);
