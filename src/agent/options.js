// The Agent's options and listeners (src/agent/mod.rs): the constructor's
// reading of `AgentOptions`, the accessors and methods on `Agent.prototype`,
// and the loop config an Agent run uses.

import { isObjectLike } from "../js/values.js";
import { userMessage } from "../js/events.js";
import { defaultConvertToLlm, noDefaultStreamFn } from "../agent_loop/loop.js";
import { Listeners, WRAP_BEFORE_TOOL_CALL, createAgentState, getSnapshot, subscribeState } from "./state.js";

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
    subscribe(listener, options) {
      if (typeof listener !== "function") throw new TypeError("subscribe(listener): listener must be a function");
      return agentOf(this).listeners.subscribe(listener, optionOf(options, "deltas") !== false);
    },
    getSnapshot() {
      return getSnapshot(this.state);
    },
    subscribeState(listener, options) {
      return subscribeState(this.state, listener, options);
    },
  };
  for (const key in methods) define(key, { value: methods[key], writable: true });
  define(WRAP_BEFORE_TOOL_CALL, {
    value(wrap) {
      agentOf(this).wrapBeforeToolCall = wrap;
    },
    writable: true,
  });
}

/** The `beforeToolCall` an agent's runs call: the app's hook, wrapped as `WRAP_BEFORE_TOOL_CALL` set. */
const gatedBeforeToolCall = ({ fields, wrapBeforeToolCall }) =>
  wrapBeforeToolCall ? wrapBeforeToolCall(fields.beforeToolCall) : fields.beforeToolCall;
export const loopBeforeToolCall = (agent) => gatedBeforeToolCall(agentOf(agent));

/** `options[key]` for an object, `undefined` otherwise or when the read throws. */
export function optionOf(options, key) {
  try {
    return isObjectLike(options) ? options[key] : undefined;
  } catch {
    return undefined;
  }
}

const optionError = (option, expected) => new TypeError(`AgentOptions.${option} must be ${expected}`);

/**
 * `agentInit` results of agents built before the wasm module was ready
 * (js/ready.js), by the token their wasm core is then constructed with.
 */
export const preparedAgents = new WeakMap();
/**
 * The `Agent` constructor's reading of `options`: `[fields, state, listeners,
 * steeringMode, followUpMode]`, or a throw naming the bad option. `fallback` is
 * the default stream function, if there is one.
 */
export function agentInit(options, fallback) {
  const prepared = preparedAgents.get(options);
  if (prepared) return prepared;
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
    if (typeof fallback !== "function") throw noDefaultStreamFn();
    streamFn = fallback;
  } else if (typeof streamFn !== "function") throw optionError("streamFn", "a function");
  fields.streamFunction = streamFn;
  for (const key of ["sessionId", "thinkingBudgets", "maxRetryDelayMs", "identity"]) fields[key] = optionOf(options, key);
  fields.transport = optionOf(options, "transport") ?? "auto";
  fields.toolExecution = optionOf(options, "toolExecution") ?? "parallel";
  const state = createAgentState(initial);
  const listeners = new Listeners();
  AGENTS.set(state, { fields, listeners });
  return [fields, state, listeners, optionOf(options, "steeringMode"), optionOf(options, "followUpMode")];
}

/**
 * Whether an agent's runs may keep their transcript copy and its LLM view
 * between requests and runs: only when `convertToLlm` is the default and no
 * hook is given the context on every turn. The tool hooks get it only when a
 * tool runs; a copy they were given is not reused (`exposeRunContext`).
 */
export const privateTranscript = (fields) =>
  fields.convertToLlm === defaultConvertToLlm &&
  !fields.transformContext &&
  !fields.prepareRequest &&
  !fields.finishTurn &&
  !fields.prepareNextTurn &&
  !fields.prepareNextTurnWithContext;

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
  const record = AGENTS.get(state);
  const { fields: agent } = record;
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
    beforeToolCall: gatedBeforeToolCall(record),
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
