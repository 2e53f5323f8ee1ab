// The loop's config reading (src/agent_loop/mod.rs): its hooks in one call,
// the default `convertToLlm`, and the context handed to hooks.

import { isObjectLike } from "../js/values.js";

export const contextWith = (context, messages) => ({ ...context, messages });

const LOOP_HOOKS = ["convertToLlm", "transformContext", "getApiKey", "finishTurn", "prepareRequest", "prepareNextTurn",
  "getSteeringMessages", "getFollowUpMessages", "beforeToolCall", "afterToolCall"];

/**
 * An `AgentLoopConfig`'s hooks in `LOOP_HOOKS` order (`undefined` when absent),
 * then a number whose bit `i` says hook `i` is set and whose bit 10 says tools
 * run sequentially (so the wasm side reads only the hooks that are there); a
 * non-function hook is a `TypeError`.
 */
export function readHooks(config) {
  if (!isObjectLike(config)) throw new TypeError("config must be an AgentLoopConfig object");
  let set = 0;
  const hooks = LOOP_HOOKS.map((key, i) => {
    const hook = config[key];
    if (hook == null) return undefined;
    if (typeof hook !== "function") throw new TypeError(`config.${key} must be a function`);
    set |= 1 << i;
    return hook;
  });
  if (config.toolExecution === "sequential") set |= 1 << LOOP_HOOKS.length;
  hooks.push(set);
  return hooks;
}

export function defaultConvertToLlm(messages) {
  // The reference's V8 messages, spelled out so that minifying this file keeps them.
  if (messages == null) throw new TypeError(`Cannot read properties of ${messages} (reading 'filter')`);
  if (typeof messages.filter !== "function") throw new TypeError("messages.filter is not a function");
  return messages.filter(isLlmMessage);
}

/**
 * The default role filter: whether `convertToLlm`'s default passes `message`
 * to the model (system, user, assistant and tool-result messages; custom roles
 * stay in the transcript only). The one definition of that rule.
 */
export const isLlmMessage = (m) => m.role === "system" || m.role === "user" || m.role === "assistant" || m.role === "toolResult";

export const getDefaultConvertToLlm = () => defaultConvertToLlm;

/** The level a request runs at and its answer is stamped with: `config.reasoning ?? "off"`. */
export const thinkingLevelOf = (config) => config?.reasoning ?? "off";

/** The reference's error for a run (or an `Agent`) without a stream function and without a default one. */
export const noDefaultStreamFn = () =>
  new Error("No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().");
