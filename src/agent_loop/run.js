// Objects the turn loop hands to hooks (src/agent_loop/run.rs): the
// `finishTurn`/`prepareNextTurn` contexts and the config a hook update yields.

export function configWith(config, model, reasoning) {
  return { ...config, model, reasoning };
}

/** `config` with a hook update's `model` and `thinkingLevel` (`"off"`: no reasoning) applied. */
export function updatedConfig(update, config) {
  const model = update.model ?? config.model;
  const level = update.thinkingLevel;
  return configWith(config, model, level === undefined ? config.reasoning : level === "off" ? undefined : level);
}

export const turnContext = (message, toolResults, context, newMessages) => ({ message, toolResults, context, newMessages });

export const requestContext = (context, model, thinkingLevel) => ({ context, model, thinkingLevel });
