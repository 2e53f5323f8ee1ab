// One provider request (request.rs): its context, the LLM view of the transcript, the
// stream function's options with the merged client identity, and the thinking
// level stamped on the final message.

import { isLlmMessage } from "./loop.js";
import { isExposedTranscript } from "../js/glue.js";
import { pairing } from "./pairing.js";

/** The context a stream function gets: `{ messages }`, a new object per request. */
export const llmContext = (messages) => ({ messages });

const LLM_VIEWS = new WeakMap();
/**
 * `defaultConvertToLlm(messages)` for a run's private transcript, with its tool calls paired with
 * their results (pairing.js), kept up to date by converting only the messages added since the last
 * request: the loop only appends to it (and replaces the streaming message, which no request has
 * converted yet). A transcript a tool hook was given may have been edited, so its view also keeps
 * the entries it converted, and starts again when one of them is no longer where it was: a pass of
 * reference comparisons instead of a filter over the transcript. The view itself is never handed
 * out: each request gets its own copy (`slice()`), as 1.4.0 passes a fresh array, so a stream
 * function may keep or edit its array.
 */
export function llmView(messages) {
  let view = LLM_VIEWS.get(messages);
  const exposed = isExposedTranscript(messages);
  if (view === undefined || view.from > messages.length || (exposed && !convertedStill(view, messages))) {
    view = { out: [], from: 0, converted: exposed ? [] : undefined, pairing: pairing() };
    LLM_VIEWS.set(messages, view);
  }
  const { out, converted } = view;
  for (let i = view.from; i < messages.length; i++) {
    const m = messages[i];
    if (converted !== undefined) converted.push(m);
    if (isLlmMessage(m)) view.pairing.add(m, out);
  }
  view.from = messages.length;
  return view.pairing.close(out.slice());
}

/** Whether every entry `view` converted is still at its index (never known for a view made before exposure). */
function convertedStill(view, messages) {
  const converted = view.converted;
  if (converted === undefined) return false;
  for (let i = 0; i < converted.length; i++) if (converted[i] !== messages[i]) return false;
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

export const PI_ATTRIBUTION = { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] };
/** The identity the loop sends with every request unless `identity` overrides fields of it. */
export const DEFAULT_AGENT_IDENTITY = { attribution: PI_ATTRIBUTION };
export const getDefaultIdentity = () => DEFAULT_AGENT_IDENTITY;
