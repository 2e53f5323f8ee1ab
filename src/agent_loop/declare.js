// Tool declarations and their replay (src/agent_loop/declare.rs): the JSON a
// tool declares, the system messages that add or remove tools, and the replay of
// every system message into one (also used for `state.systemPrompt`). The
// tool-set diff is Rust (src/transcript.rs); the replay is here, once.


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

export const contentText = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.filter((b) => b && b.type === "text").map((b) => b.text).join("\n")
      : "";

/**
 * Applies one system message's tool changes to `tools` (a `Map` of name →
 * declaration): `toolsRemoved` deletes names, then `toolsAdded` sets them, so a
 * re-set name keeps its place and a name added again after a removal moves to
 * the end. The one implementation of the tool replay: the baseline below, and
 * the loop's tool declarations (declare.rs replays the transcript with it).
 * It is JS because its callers include places without the wasm (an `Agent`'s
 * `reset()` before the module is ready, the worker's main-thread side).
 */
export function applyToolChanges(tools, message) {
  for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
  for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
}

/** The declarations `tools` holds once the system messages of `messages` are applied to a copy of it. */
export function toolsAfter(tools, messages) {
  const copy = new Map(tools);
  for (const message of messages) if (message?.role === "system") applyToolChanges(copy, message);
  return [...copy.values()];
}

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
    applyToolChanges(tools, message);
  }
  if (timestamp === undefined && tools.size === 0) return undefined;
  const out = { role: "system", content: content.join("\n\n") };
  if (sections.size > 0) out.sections = Object.fromEntries(sections);
  if (tools.size > 0) out.toolsAdded = [...tools.values()];
  out.timestamp = timestamp ?? 0;
  return out;
}

/** The system prompt the transcript's system messages make: `state.systemPrompt`. */
export function systemPromptOf(messages) {
  const message = currentSystemMessage(messages);
  if (!message) return "";
  const parts = [contentText(message.content)];
  for (const value of Object.values(message.sections ?? {})) if (value != null) parts.push(value);
  return parts.filter((p) => p.length > 0).join("\n\n");
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

const TOOLS_SIGNATURES = new WeakMap();

let nextSignature = 1;
/** The last signature handed out: a run's tool list is a fresh array holding the same tools as the last run's. */
let lastSignature;

const sameTools = (tools, items) => {
  if (items.length !== tools.length) return false;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    const e = items[i];
    if (t !== e.tool || t == null || t.name !== e.name || t.description !== e.description ||
      t.parameters !== e.parameters || t.constrainedSampling !== e.constrainedSampling) return false;
  }
  return true;
};

/**
 * A number that stays the same while `tools` (this array, or a new one) holds
 * the same tool objects with the same declaration fields (the ones
 * `toolDeclarationJson` depends on), so the loop can skip comparing
 * declarations when nothing changed.
 */
export function toolsSignature(tools) {
  if (!Array.isArray(tools)) return 0;
  const seen = TOOLS_SIGNATURES.get(tools);
  if (seen !== undefined && sameTools(tools, seen.items)) return seen.signature;
  if (lastSignature !== undefined && sameTools(tools, lastSignature.items)) return lastSignature.signature;
  const items = tools.map((tool) => ({
    tool,
    name: tool?.name,
    description: tool?.description,
    parameters: tool?.parameters,
    constrainedSampling: tool?.constrainedSampling,
  }));
  lastSignature = { signature: nextSignature++, items };
  TOOLS_SIGNATURES.set(tools, lastSignature);
  return lastSignature.signature;
}
