// What every setup of the UI benchmark shares: the model, the counters (window.__ui, set up by page.html)
// and how a message's text is read.
export const ui = window.__ui;

export const MODEL = {
  id: "bench-model",
  name: "Bench Model",
  api: "bench-api",
  provider: "bench-provider",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
};
export const initialState = { systemPrompt: "You are a benchmark.", model: MODEL };
export const proxyOptions = (origin, workload) => ({ proxyUrl: `${origin}/pi/${workload}`, authToken: "bench-token" });

/** A pi message's text: its text blocks (one block's own string when there is one). */
export function textOf(message) {
  const content = message.content;
  if (typeof content === "string") return content;
  let out;
  for (const block of content) if (block.type === "text") out = out === undefined ? block.text : out + block.text;
  return out ?? "";
}

/** An AI SDK UIMessage's text: its text parts (one part's own string when there is one). */
export function uiText(message) {
  let out;
  for (const part of message.parts) if (part.type === "text") out = out === undefined ? part.text : out + part.text;
  return out ?? "";
}

/**
 * Called by a row each time it renders, after the DOM holds its text: counts the streaming row's
 * renders, and notes when the answer's first text reached the screen.
 */
export function rowRendered(role, text, streaming) {
  if (streaming) ui.renders++;
  if (!ui.firstToken && role === "assistant" && text.length > 0) ui.firstToken = performance.now();
}

/** Rows are keyed by message object. */
const ids = new WeakMap();
let nextId = 0;
export function keyOf(message) {
  let id = ids.get(message);
  if (id === undefined) ids.set(message, (id = nextId++));
  return id;
}
