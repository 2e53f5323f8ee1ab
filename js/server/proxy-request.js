// The body of a proxy request, `{ model, context, options }` as `streamProxy` sends it, checked
// before any provider is called. A bad field is a 400 whose message names it. The client
// chooses among the models the server offers (by provider and id: the server's own model is
// used, never the client's `baseUrl`, `headers`, `api` or `compat`) and among the stream
// options below; it never sets a key, headers or the provider's URL.

import { HttpError } from "./http.js";

const bad = (field, what) => {
  throw new HttpError(400, `${field}: ${what}`);
};
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const string = (v, field) => typeof v === "string" || bad(field, "must be a string");

/** Options that would steer the provider elsewhere or carry credentials: refused, not dropped. */
const FORBIDDEN = {
  headers: "the server sets the provider's headers",
  apiKey: "the server holds the provider's key",
  baseUrl: "the server chooses the provider's URL",
  api: "the server chooses the provider's API",
  env: "the server sets the provider's environment",
  fetch: "the server makes the provider's requests",
};
const REASONING = new Set(["minimal", "low", "medium", "high", "xhigh", "max"]);
const CACHE_RETENTION = new Set(["none", "short", "long"]);
const TRANSPORTS = new Set(["sse", "websocket", "auto"]);
/** Sampling parameters a client may set; others (`samplingParams` is merged into the provider's body as is) are refused. */
const SAMPLING = new Set(["top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "seed"]);

/**
 * The stream options the client may set, checked and copied. `maxTokens` is capped by the
 * server's limit and the model's; `maxRetryDelayMs` by `maxRetryDelayMs`. Options this version
 * does not know are dropped (a newer client may send more).
 */
function streamOptions(options, { model, maxTokens, maxRetryDelayMs }) {
  if (options === undefined || options === null) options = {};
  if (!isObject(options)) bad("options", "must be an object");
  for (const key of Object.keys(FORBIDDEN)) {
    if (options[key] !== undefined && options[key] !== null) bad(`options.${key}`, `not allowed (${FORBIDDEN[key]})`);
  }
  const out = {};
  const number = (key, min, max) => {
    const v = options[key];
    if (v === undefined || v === null) return;
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) bad(`options.${key}`, `must be a number from ${min} to ${max}`);
    out[key] = v;
  };
  const oneOf = (key, set) => {
    const v = options[key];
    if (v === undefined || v === null) return;
    if (!set.has(v)) bad(`options.${key}`, `must be one of ${[...set].join(", ")}`);
    out[key] = v;
  };
  number("temperature", 0, 2);
  number("maxTokens", 1, Number.MAX_SAFE_INTEGER);
  number("maxRetryDelayMs", 0, Number.MAX_SAFE_INTEGER);
  oneOf("reasoning", REASONING);
  oneOf("cacheRetention", CACHE_RETENTION);
  oneOf("transport", TRANSPORTS);
  if (options.sessionId !== undefined && options.sessionId !== null) {
    string(options.sessionId, "options.sessionId");
    if (options.sessionId.length > 256) bad("options.sessionId", "must be at most 256 characters");
    out.sessionId = options.sessionId;
  }
  if (options.thinkingBudgets !== undefined && options.thinkingBudgets !== null) {
    const budgets = options.thinkingBudgets;
    if (!isObject(budgets)) bad("options.thinkingBudgets", "must be an object of token counts");
    for (const [level, n] of Object.entries(budgets)) {
      if (!REASONING.has(level) || !Number.isInteger(n) || n < 0) bad(`options.thinkingBudgets.${level}`, "must be a thinking level's token count");
    }
    out.thinkingBudgets = { ...budgets };
  }
  if (options.samplingParams !== undefined && options.samplingParams !== null) {
    const params = options.samplingParams;
    if (!isObject(params)) bad("options.samplingParams", "must be an object");
    for (const [key, v] of Object.entries(params)) {
      if (!SAMPLING.has(key)) bad(`options.samplingParams.${key}`, `not allowed (allowed: ${[...SAMPLING].join(", ")})`);
      if (typeof v !== "number" || !Number.isFinite(v)) bad(`options.samplingParams.${key}`, "must be a number");
    }
    out.samplingParams = { ...params };
  }
  const cap = Math.min(maxTokens, model.maxTokens > 0 ? model.maxTokens : Infinity);
  if (cap !== Infinity) out.maxTokens = Math.min(out.maxTokens ?? cap, cap);
  if (out.maxRetryDelayMs !== undefined) out.maxRetryDelayMs = Math.min(out.maxRetryDelayMs, maxRetryDelayMs);
  return out;
}

const TEXT = (b, f) => string(b.text, `${f}.text`);
const BLOCKS = {
  text: TEXT,
  image: (b, f) => {
    string(b.data, `${f}.data`);
    string(b.mimeType, `${f}.mimeType`);
  },
  thinking: (b, f) => string(b.thinking, `${f}.thinking`),
  toolCall: (b, f) => {
    string(b.id, `${f}.id`);
    string(b.name, `${f}.name`);
    if (!isObject(b.arguments)) bad(`${f}.arguments`, "must be an object");
  },
};
const ALLOWED_BLOCKS = {
  system: ["text"],
  user: ["text", "image"],
  assistant: ["text", "thinking", "toolCall"],
  toolResult: ["text", "image"],
};

function content(value, role, field, stringAllowed) {
  if (typeof value === "string" && stringAllowed) return;
  if (!Array.isArray(value)) bad(field, stringAllowed ? "must be a string or an array of content blocks" : "must be an array of content blocks");
  const allowed = ALLOWED_BLOCKS[role];
  for (let i = 0; i < value.length; i++) {
    const block = value[i];
    const f = `${field}[${i}]`;
    if (!isObject(block)) bad(f, "must be an object");
    if (!allowed.includes(block.type)) bad(`${f}.type`, `must be ${allowed.map((t) => JSON.stringify(t)).join(" or ")} in a ${role} message`);
    BLOCKS[block.type](block, f);
  }
}

function tool(t, f) {
  if (!isObject(t)) bad(f, "must be an object");
  string(t.name, `${f}.name`);
  if (t.description !== undefined) string(t.description, `${f}.description`);
  if (!isObject(t.parameters)) bad(`${f}.parameters`, "must be a JSON Schema object");
}

function message(m, f) {
  if (!isObject(m)) bad(f, "must be an object");
  switch (m.role) {
    case "system":
      content(m.content, "system", `${f}.content`, true);
      if (m.toolsAdded !== undefined) {
        if (!Array.isArray(m.toolsAdded)) bad(`${f}.toolsAdded`, "must be an array");
        m.toolsAdded.forEach((t, i) => tool(t, `${f}.toolsAdded[${i}]`));
      }
      break;
    case "user":
      content(m.content, "user", `${f}.content`, true);
      break;
    case "assistant":
      content(m.content, "assistant", `${f}.content`, false);
      break;
    case "toolResult":
      string(m.toolCallId, `${f}.toolCallId`);
      content(m.content, "toolResult", `${f}.content`, false);
      break;
    default:
      bad(`${f}.role`, 'must be "system", "user", "assistant" or "toolResult"');
  }
}

/** The request's context as the provider gets it: only the fields a context has. */
function transcript(context) {
  if (!isObject(context)) bad("context", "must be an object { messages }");
  if (!Array.isArray(context.messages)) bad("context.messages", "must be an array");
  context.messages.forEach((m, i) => message(m, `context.messages[${i}]`));
  const out = { messages: context.messages };
  if (context.systemPrompt !== undefined && context.systemPrompt !== null) {
    string(context.systemPrompt, "context.systemPrompt");
    out.systemPrompt = context.systemPrompt;
  }
  if (context.tools !== undefined && context.tools !== null) {
    if (!Array.isArray(context.tools)) bad("context.tools", "must be an array");
    context.tools.forEach((t, i) => tool(t, `context.tools[${i}]`));
    out.tools = context.tools;
  }
  return out;
}

/**
 * Parses and checks a request body. `resolve(requested)` gives the server's model for the
 * client's `{ provider, id }` (or undefined). Returns `{ model, context, options }`.
 */
export async function parseProxyRequest(text, resolve, limits) {
  let body;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObject(body)) bad("body", "must be a JSON object { model, context, options }");
  const requested = body.model;
  if (!isObject(requested) || typeof requested.provider !== "string" || typeof requested.id !== "string") {
    bad("model", "must be an object with string provider and id");
  }
  const model = await resolve(requested);
  if (!model) bad("model", `${requested.provider}/${requested.id} is not offered by this server`);
  const context = transcript(body.context);
  return { model, context, options: streamOptions(body.options, { model, ...limits }) };
}
