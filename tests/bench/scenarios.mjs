// The benchmark scenarios, written once for Node and the browser page.
//
// A scenario is `async (impl, env, params) => { check, keep }`:
//   impl  { Agent, streamProxy, createAssistantMessageEventStream, piAiStream } of one implementation
//         (ours: pkg/, the reference: @earendil-works/pi-agent-core + pi-ai's stream class;
//         piAiStream is pi-ai's createAssistantMessageEventStream for both)
//   env   { mark(label), tick(fn), proxyBase }
//         mark(label)  records the CPU clock at this point (Node: process.cpuUsage(), synchronous,
//                      returns undefined; Chromium: a CDP Performance.getMetrics round trip, returns a
//                      promise the scenario awaits, so the page is idle while the clock is read).
//                      Every scenario marks "start" after its setup and "end" when done; S1 and S4b
//                      also mark q0…q4 at quarter boundaries of their deltas.
//         tick(fn)     runs fn in a new macrotask (setImmediate / MessageChannel)
//         proxyBase    origin of the bench server (S4)
//   check  plain data describing what was done (compared between the two implementations)
//   keep   an object to hold alive for a memory probe (the Agent)
//
// Scripted streams: the stream function answers through the implementation's own
// createAssistantMessageEventStream() and pushes the same event objects on both: one partial
// message mutated in place (as pi-ai's providers do), BATCH events per macrotask (a network chunk).
import { MODEL, textDeltas, transcript, usage } from "./data.mjs";

export const BATCH = 100;

function pump(env, total, pushOne) {
  let i = 0;
  const step = () => {
    const end = Math.min(total, i + BATCH);
    while (i < end) pushOne(i++);
    if (i < total) env.tick(step);
  };
  env.tick(step);
}

/**
 * The stream kinds a stream function can return, each fed by `produce(i)` (the i-th of `total`
 * events, made in order), `BATCH` events per macrotask as network chunks arrive:
 *   own        the implementation's own createAssistantMessageEventStream() (ours: the package's;
 *              the reference: pi-ai's), events pushed
 *   piai       pi-ai 1.4.0's class from @earendil-works/pi-ai, events pushed (what its providers return)
 *   generator  an `async function*` with `result()`
 *   pull       a hand-written iterator whose `next()` builds each event and returns a resolved
 *              promise (a reader-based stream), a new macrotask per batch
 */
export const STREAM_KINDS = ["own", "piai", "generator", "pull"];

function makeStream(kind, impl, env, total, produce) {
  if (kind === "own" || kind === "piai" || kind === undefined) {
    const stream = kind === "piai" ? impl.piAiStream() : impl.createAssistantMessageEventStream();
    pump(env, total, (i) => stream.push(produce(i)));
    return stream;
  }
  let resolveResult;
  const result = new Promise((r) => (resolveResult = r));
  const take = (i) => {
    const event = produce(i);
    if (event.type === "done") resolveResult(event.message);
    return event;
  };
  const nextTick = () => new Promise((r) => env.tick(r));
  if (kind === "generator") {
    async function* events() {
      for (let i = 0; i < total; i++) {
        if (i % BATCH === 0) await nextTick();
        yield take(i);
      }
    }
    const it = events();
    it.result = () => result;
    return it;
  }
  if (kind === "pull") {
    let i = 0;
    const iterator = {
      next() {
        if (i >= total) return Promise.resolve({ value: undefined, done: true });
        const k = i++;
        if (k % BATCH === 0) return nextTick().then(() => ({ value: take(k), done: false }));
        return Promise.resolve({ value: take(k), done: false });
      },
      return() {
        return Promise.resolve({ value: undefined, done: true });
      },
    };
    return { [Symbol.asyncIterator]: () => iterator, result: () => result };
  }
  throw new Error(`unknown stream kind ${kind}`);
}

/** The tool hooks as the demo sets them (an async `beforeToolCall` that approves these tools), plus an `afterToolCall`. */
const TOOL_HOOKS = {
  beforeToolCall: async ({ toolCall }) => (toolCall.name === "fetch_page" ? { block: true, reason: "no" } : undefined),
  afterToolCall: async () => undefined,
};

function emptyPartial(model) {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: usage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

/** A stream function answering with one text block streamed as `deltas`. */
function textStreamFn(impl, env, deltas, kind) {
  return (model) => {
    const partial = emptyPartial(model);
    const n = deltas.length;
    return makeStream(kind, impl, env, n + 4, (i) => {
      if (i === 0) return { type: "start", partial };
      if (i === 1) {
        partial.content.push({ type: "text", text: "" });
        return { type: "text_start", contentIndex: 0, partial };
      }
      if (i < n + 2) {
        const delta = deltas[i - 2];
        partial.content[0].text += delta;
        return { type: "text_delta", contentIndex: 0, delta, partial };
      }
      if (i === n + 2) return { type: "text_end", contentIndex: 0, content: partial.content[0].text, partial };
      return { type: "done", reason: "stop", message: partial };
    });
  };
}

const cache = new Map();
function cached(key, make) {
  if (!cache.has(key)) cache.set(key, make());
  return cache.get(key);
}

/** Inputs built before anything is measured (so the first measured run does not pay for them). */
export function prepare(scenario, params) {
  if (scenario === "s1") cached(`deltas:${params.deltas}:${params.size}`, () => textDeltas(params.deltas, params.size));
  if (scenario === "s3") cached(`transcript:${params.size}`, () => transcript(params.size));
}

// ---- S1: one prompt, N text deltas, a listener reading event.message ----------------------------

async function s1(impl, env, { deltas: count = 20_000, size = 50, kind, quarterMarks = true } = {}) {
  const deltas = cached(`deltas:${count}:${size}`, () => textDeltas(count, size));
  const agent = new impl.Agent({
    initialState: { systemPrompt: "You are a benchmark.", model: MODEL },
    streamFn: textStreamFn(impl, env, deltas, kind),
  });
  const quarter = count / 4;
  let seen = 0;
  let sink = 0;
  agent.subscribe((event) => {
    if (event.type === "message_update") {
      const message = event.message;
      const block = message.content[message.content.length - 1];
      sink += block.text.length;
      if (event.assistantMessageEvent.type === "text_delta" && ++seen % quarter === 0 && quarterMarks) return env.mark(`q${seen / quarter}`);
    } else if (event.type === "message_start" && event.message.role === "assistant" && quarterMarks) {
      return env.mark("q0");
    }
    return undefined;
  });
  await env.mark("start");
  await agent.prompt("Write a long answer.");
  await env.mark("end");
  const last = agent.state.messages[agent.state.messages.length - 1];
  return {
    keep: agent,
    check: { deltas: seen, textLength: last.content[0].text.length, messages: agent.state.messages.length, sink: sink > 0 },
  };
}

// ---- S2: turns of N parallel trivial tools -------------------------------------------------------

async function s2(impl, env, { turns = 200, tools: toolCount = 8, kind, hooks = false } = {}) {
  const tools = [];
  for (let k = 0; k < toolCount; k++) {
    tools.push({
      name: `tool_${k}`,
      label: `Tool ${k}`,
      description: "A trivial tool.",
      parameters: { type: "object", properties: { i: { type: "number" } }, required: ["i"] },
      execute: async (toolCallId, args) => ({ content: [{ type: "text", text: `ok ${args.i}` }], details: {} }),
    });
  }
  let calls = 0;
  const streamFn = (model) => {
    const k = calls++;
    const partial = emptyPartial(model);
    const final = { ...partial };
    if (k < turns) {
      final.content = tools.map((tool, j) => ({ type: "toolCall", id: `call_${k}_${j}`, name: tool.name, arguments: { i: j } }));
      final.stopReason = "toolUse";
    } else {
      final.content = [{ type: "text", text: "All done." }];
    }
    return makeStream(kind, impl, env, 2, (i) =>
      i === 0 ? { type: "start", partial } : { type: "done", reason: final.stopReason, message: final },
    );
  };
  const agent = new impl.Agent({
    initialState: { systemPrompt: "You are a benchmark.", model: MODEL, tools },
    streamFn,
    ...(hooks ? TOOL_HOOKS : {}),
  });
  let events = 0;
  agent.subscribe((event) => {
    if (event.type === "tool_execution_end" || event.type === "message_end") events++;
  });
  await env.mark("start");
  await agent.prompt("Call the tools.");
  await env.mark("end");
  const results = agent.state.messages.filter((m) => m.role === "toolResult");
  return {
    keep: agent,
    check: { requests: calls, toolResults: results.length, errors: results.filter((m) => m.isError).length, events },
  };
}

// ---- S3: short prompts on an Agent holding a long transcript ------------------------------------

async function s3(impl, env, { size = 500, prompts = 100, hooks = false, ui = false } = {}) {
  const messages = cached(`transcript:${size}`, () => transcript(size));
  const reply = ["Short ", "answer."];
  const streamFn = (model) => {
    const stream = impl.createAssistantMessageEventStream();
    const partial = emptyPartial(model);
    pump(env, 5, (i) => {
      if (i === 0) stream.push({ type: "start", partial });
      else if (i === 1) {
        partial.content.push({ type: "text", text: "" });
        stream.push({ type: "text_start", contentIndex: 0, partial });
      } else if (i < 4) {
        partial.content[0].text += reply[i - 2];
        stream.push({ type: "text_delta", contentIndex: 0, delta: reply[i - 2], partial });
      } else stream.push({ type: "done", reason: "stop", message: partial });
    });
    return stream;
  };
  const agent = new impl.Agent({
    initialState: { systemPrompt: "You are a benchmark.", model: MODEL, messages },
    streamFn,
    ...(hooks ? TOOL_HOOKS : {}),
  });
  let events = 0;
  agent.subscribe((event) => {
    if (event.type === "message_end") events++;
  });
  let seen = 0;
  await env.mark("start");
  for (let i = 0; i < prompts; i++) {
    await agent.prompt(`Question ${i}?`);
    // A UI rendering the transcript after each answer.
    if (ui) seen += agent.state.messages.length;
  }
  await env.mark("end");
  return { keep: agent, check: { messages: agent.state.messages.length, events, seen } };
}

// ---- S4: streamProxy against the bench server ----------------------------------------------------

/**
 * S4a (kind "text") and S4b (kind "toolcall"): iterate streamProxy's stream and read each delta's
 * partial message (the text block, or the tool call's current arguments object).
 */
async function s4(impl, env, { variant, kind, deltas: expected }) {
  const context = { systemPrompt: "You are a benchmark.", messages: [{ role: "user", content: "Go.", timestamp: 1 }] };
  const quarter = expected / 4;
  let deltas = 0;
  let sink = 0;
  // Tool-call streams are gated per quarter (see server.mjs): the server sends quarter k+1 only after
  // the consumer has marked the end of quarter k, so each quarter's CPU is that quarter's own work
  // (otherwise the stream's reader parses ahead of the consumer and the marks mean nothing).
  const gate = kind === "toolcall" ? `g${Math.random().toString(36).slice(2)}` : undefined;
  const proxyUrl = gate ? `${env.proxyBase}/${variant}/gate/${gate}` : `${env.proxyBase}/${variant}`;
  const openGate = (k) => fetch(`${env.proxyBase}/gate/${gate}/${k}`, { method: "POST" }).then((r) => r.arrayBuffer());
  await env.mark("start");
  const stream = impl.streamProxy(MODEL, context, { proxyUrl, authToken: "bench-token" });
  for await (const event of stream) {
    if (kind === "text") {
      if (event.type === "text_delta") {
        deltas++;
        sink += event.partial.content[event.contentIndex].text.length;
      }
    } else if (event.type === "toolcall_delta") {
      const args = event.partial.content[event.contentIndex].arguments;
      if (args.path !== undefined) sink++;
      if (++deltas % quarter === 0) {
        const p = env.mark(`q${deltas / quarter}`);
        if (p) await p;
        await openGate(deltas / quarter);
      }
    } else if (event.type === "toolcall_start") {
      const p = env.mark("q0");
      if (p) await p;
      await openGate(0);
    }
  }
  const message = await stream.result();
  await env.mark("end");
  const block = message.content[0];
  if (message.stopReason === "error" || message.stopReason === "aborted") console.error(`S4 ${variant}: ${message.errorMessage}`);
  return {
    check: {
      deltas,
      stopReason: message.stopReason,
      error: message.errorMessage,
      size: block === undefined ? 0 : kind === "text" ? block.text.length : JSON.stringify(block.arguments).length,
      sink: sink > 0,
    },
  };
}

export const SCENARIOS = { s1, s2, s3, s4 };
