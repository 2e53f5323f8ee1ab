// The model the README examples talk to, in Node, in pages and in workers: it answers a context with
// proxy events (pi-ai's stream events without `partial`, what `streamProxy` reads), and checks that
// every context it is sent would be accepted by a strict provider. A user message that starts with the
// name of one of the context's tools calls it ("add 2 3" calls add with { a: 2, b: 3 }, other tools
// get { query: <the rest> }); after tool results it answers "Result: <their text>"; anything else is
// answered "Hello there!". `fetch` requests to https://my-app.example and https://my-proxy.example
// (the servers the examples name) are answered by it as a `streamProxy` server would.
import { assertStrictContext } from "./strict-transcript.mjs";

export const USAGE = { input: 5, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
export const EXAMPLE_ORIGINS = ["https://my-app.example", "https://my-proxy.example"];

const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b?.type === "text").map((b) => b.text).join(""));

/** The proxy events answering `context`; throws a StrictTranscriptError for a context a strict provider rejects. */
export function answer(context) {
  assertStrictContext(context);
  const messages = context.messages;
  const last = messages[messages.length - 1];
  if (last?.role === "toolResult") {
    const results = [];
    for (let i = messages.length - 1; i >= 0 && messages[i].role === "toolResult"; i--) results.unshift(textOf(messages[i]));
    return textEvents(`Result: ${results.join(", ")}`);
  }
  const words = textOf(last).trim().split(/\s+/);
  const tool = toolsOf(context).find((t) => t.name === words[0]);
  if (last?.role === "user" && tool) {
    const n = words.slice(1).map(Number);
    const args = tool.name === "add" ? { a: n[0] ?? 0, b: n[1] ?? 0 } : { query: words.slice(1).join(" ") };
    const json = JSON.stringify(args);
    const id = `${tool.name}-${messages.length}`;
    return [
      { type: "start" },
      { type: "toolcall_start", contentIndex: 0, id, toolName: tool.name },
      { type: "toolcall_delta", contentIndex: 0, delta: json.slice(0, 4) },
      { type: "toolcall_delta", contentIndex: 0, delta: json.slice(4) },
      { type: "toolcall_end", contentIndex: 0, toolCall: { type: "toolCall", id, name: tool.name, arguments: args } },
      { type: "done", reason: "toolUse", usage: USAGE },
    ];
  }
  return textEvents("Hello there!");
}

/** The tools the context declares: `context.tools`, or its system messages' `toolsAdded`/`toolsRemoved` replayed. */
export function toolsOf(context) {
  if (Array.isArray(context.tools)) return context.tools;
  const tools = new Map();
  for (const m of context.messages) {
    if (m?.role !== "system") continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(typeof t === "string" ? t : t?.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.values()];
}

function textEvents(text) {
  const cut = Math.ceil(text.length / 2);
  return [
    { type: "start" },
    { type: "text_start", contentIndex: 0 },
    { type: "text_delta", contentIndex: 0, delta: text.slice(0, cut) },
    { type: "text_delta", contentIndex: 0, delta: text.slice(cut) },
    { type: "text_end", contentIndex: 0 },
    { type: "done", reason: "stop", usage: USAGE },
  ];
}

/** A stream function over `answer`, built with the package's `createAssistantMessageEventStream`. */
export function exampleStreamFn(createAssistantMessageEventStream) {
  return (model, context) => {
    const events = answer(context);
    const s = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: USAGE, stopReason: "stop", timestamp: Date.now() };
    (async () => {
      for (const e of events) {
        await new Promise((r) => setTimeout(r, 0));
        const i = e.contentIndex;
        if (e.type === "text_start") partial.content[i] = { type: "text", text: "" };
        if (e.type === "text_delta") partial.content[i].text += e.delta;
        if (e.type === "toolcall_start") partial.content[i] = { type: "toolCall", id: e.id, name: e.toolName, arguments: {} };
        if (e.type === "toolcall_end") partial.content[i] = e.toolCall;
        if (e.type === "done") {
          partial.stopReason = e.reason;
          s.push({ type: "done", reason: e.reason, message: partial });
        } else if (e.type === "text_end") s.push({ type: "text_end", contentIndex: i, content: partial.content[i].text, partial });
        else if (e.type === "toolcall_end") s.push({ type: "toolcall_end", contentIndex: i, toolCall: e.toolCall, partial });
        else s.push({ ...e, partial });
      }
      s.end();
    })();
    return s;
  };
}

/**
 * Makes `fetch` answer POST https://my-app.example/api/stream (and my-proxy.example) from `answer`, as
 * `streamProxy`'s server would; `requests` collects what was posted ({ url, headers, body }). Other
 * URLs go to the real fetch. A context a strict provider rejects gets HTTP 400 with the problem.
 */
export function routeExampleFetch(target = globalThis, requests = []) {
  const real = target.fetch.bind(target);
  target.fetch = async (input, init = {}) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!EXAMPLE_ORIGINS.some((o) => url.startsWith(o + "/"))) return real(input, init);
    const body = JSON.parse(init.body);
    requests.push({ url, headers: Object.fromEntries(new Headers(init.headers ?? {}).entries()), body });
    const { status, headers, text } = proxyAnswer(body);
    return new Response(text, { status, headers });
  };
  return requests;
}

/**
 * What a `streamProxy` server answers to a request body `{ model, context, options }`: the events
 * of `answer(context)` as server-sent events, or HTTP 400 with `{ error }` for a context a strict
 * provider rejects. `{ status, headers, text }`, for a `Response` or Node's `http`.
 */
export function proxyAnswer(body) {
  try {
    const text = answer(body.context).map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
    return { status: 200, headers: { "content-type": "text/event-stream" }, text };
  } catch (err) {
    return { status: 400, headers: { "content-type": "application/json" }, text: JSON.stringify({ error: err.message }) };
  }
}
