// The world the model-based test puts an agent in: a scripted model server whose answers are drawn
// from the seed (text, one to three tool calls in parallel, a stream that errors after its calls, one
// that stops mid tool-call arguments, one that ignores the abort, one that throws), tools that answer,
// wait, throw or never settle, and an approval dialog that waits for the user. The world outlives an
// agent: a reload makes a new agent in the same world (same model server, same store).
//
// The model checks every context it is sent with the strict-provider check; a violation is reported
// through `problem` and answered anyway, so a sequence goes on and shows what follows.
import { strictProblems } from "../../support/strict-transcript.mjs";
import { prng } from "../../support/prng.mjs";

/** A small seeded PRNG (mulberry32): the same seed gives the same numbers on every machine. */
export function rng(seed) {
  const next = prng(seed);
  next.int = (n) => Math.floor(next() * n);
  next.pick = (weights) => {
    const total = Object.values(weights).reduce((s, w) => s + w, 0);
    let r = next() * total;
    for (const [k, w] of Object.entries(weights)) if ((r -= w) < 0) return k;
    return Object.keys(weights)[0];
  };
  return next;
}

/** One turn of the event loop (setImmediate: the same order on every run). */
export const tick = () => new Promise((resolve) => setImmediate(resolve));

export const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const PARAMS = { type: "object", properties: { n: { type: "number" } } };

// What the model answers, by weight.
const ANSWERS = { text: 30, tools: 40, errorAfterCalls: 7, stallMidArgs: 6, ignoreAbort: 6, throws: 3, errorAtOnce: 4, longText: 4 };
// Which tools it calls, by weight.
// `hang` is rarer: after an abort, the loop waits a second for it before it gives up.
const TOOLS = { echo: 30, slow: 25, guarded: 22, boom: 12, hang: 2 };

/**
 * The world of one sequence. `problem(kind, message)` reports what breaks an invariant; `log(text)`
 * adds to the trace the report shows.
 */
export function createWorld({ seed, problem, log, createAssistantMessageEventStream }) {
  let requestCount = 0;
  const world = {
    /** Approval dialogs open now: { id, name, decide(allow), incarnation }. */
    approvals: [],
    /** From the end of a sequence on: every call is approved and the model answers with text. */
    winding: false,
    /** The incarnation (agent) the page runs now; a dialog belongs to one. */
    incarnation: 0,
    requests: () => requestCount,
  };

  const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b?.type === "text").map((b) => b.text).join(""));

  /** The model server: a stream function that answers from the seed and the request's number. */
  world.streamFn = (model, context, options) => {
    const k = ++requestCount;
    const messages = context?.messages ?? [];
    const problems = strictProblems(messages);
    if (problems.length > 0) problem("strict-context", `request ${k}: ${problems[0]} [${describe(messages)}]`);
    const r = rng(seed * 7919 + k * 104729);
    let kind = world.winding ? "text" : r.pick(ANSWERS);
    const last = messages[messages.length - 1];
    // A context ending in the model's own answer is a continue() the loop allowed: answer with text.
    if (last?.role === "assistant" && kind !== "text") kind = "text";
    const calls = [];
    if (["tools", "errorAfterCalls", "stallMidArgs", "ignoreAbort"].includes(kind)) {
      const n = kind === "tools" ? 1 + r.int(3) : 1 + r.int(2);
      for (let i = 0; i < n; i++) calls.push({ id: `c${k}_${i}`, name: r.pick(TOOLS), n: r.int(9) });
    }
    log(`  model, request ${k}: ${kind}${calls.length ? ` (${calls.map((c) => c.name).join(", ")})` : ""}, after ${textOf(last) ? JSON.stringify(textOf(last).slice(0, 20)) : last?.role}`);
    const s = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() };
    const signal = options?.signal;
    const respectsAbort = kind !== "ignoreAbort";
    const aborted = () => respectsAbort && signal?.aborted;
    const endAborted = () => {
      partial.stopReason = "aborted";
      partial.errorMessage = "Request was aborted";
      s.push({ type: "error", reason: "aborted", error: partial });
      s.end();
    };
    if (kind === "throws") throw new Error(`model server unreachable (request ${k})`);
    (async () => {
      await tick();
      if (aborted()) return endAborted();
      s.push({ type: "start", partial });
      if (kind === "errorAtOnce") {
        partial.stopReason = "error";
        partial.errorMessage = `overloaded (request ${k})`;
        s.push({ type: "error", reason: "error", error: partial });
        return s.end();
      }
      const text = kind === "longText" ? Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ") : calls.length ? "calling" : `answer ${k}`;
      partial.content.push({ type: "text", text: "" });
      s.push({ type: "text_start", contentIndex: 0, partial });
      for (const piece of text.split(/(?= )/)) {
        await tick();
        if (aborted()) return endAborted();
        partial.content[0].text += piece;
        s.push({ type: "text_delta", contentIndex: 0, delta: piece, partial });
      }
      s.push({ type: "text_end", contentIndex: 0, content: text, partial });
      for (const [i, c] of calls.entries()) {
        const index = partial.content.length;
        const json = JSON.stringify({ n: c.n });
        const block = { type: "toolCall", id: c.id, name: c.name, arguments: {} };
        partial.content.push(block);
        s.push({ type: "toolcall_start", contentIndex: index, partial });
        await tick();
        if (aborted()) return endAborted();
        s.push({ type: "toolcall_delta", contentIndex: index, delta: json.slice(0, 3), partial });
        if (kind === "stallMidArgs" && i === calls.length - 1) {
          // The connection stays open mid-arguments until the user aborts (or the page goes).
          if (!signal?.aborted) await new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }));
          return endAborted();
        }
        await tick();
        if (aborted()) return endAborted();
        block.arguments = { n: c.n };
        s.push({ type: "toolcall_delta", contentIndex: index, delta: json.slice(3), partial });
        s.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial });
      }
      await tick();
      if (aborted()) return endAborted();
      if (kind === "errorAfterCalls") {
        partial.stopReason = "error";
        partial.errorMessage = `connection reset (request ${k})`;
        s.push({ type: "error", reason: "error", error: partial });
        return s.end();
      }
      partial.stopReason = calls.length ? "toolUse" : "stop";
      s.push({ type: "done", reason: partial.stopReason, message: partial });
      s.end();
    })();
    return s;
  };

  const result = (text) => ({ content: [{ type: "text", text }], details: { text } });
  const ticks = async (n, signal) => {
    for (let i = 0; i < n; i++) {
      await tick();
      if (signal?.aborted) throw new Error("tool saw the abort");
    }
  };
  /** The page's tools. */
  world.tools = [
    { name: "echo", label: "echo", description: "answers at once", parameters: PARAMS, execute: async (id, { n }) => result(`echo ${n}`) },
    { name: "slow", label: "slow", description: "answers after a while; stops on abort", parameters: PARAMS,
      execute: async (id, { n }, signal) => (await ticks(3 + (n ?? 0) * 2, signal), result(`slow ${n}`)) },
    { name: "guarded", label: "guarded", description: "needs approval", parameters: PARAMS, execute: async (id, { n }) => (await tick(), result(`guarded ${n}`)) },
    { name: "boom", label: "boom", description: "throws", parameters: PARAMS, execute: async () => (await tick(), Promise.reject(new Error("boom"))) },
    { name: "hang", label: "hang", description: "never settles, ignores the abort", parameters: PARAMS, execute: () => new Promise(() => {}) },
  ];

  /** The app's beforeToolCall: `guarded` waits for the user's decision (the dialog closes on abort). */
  world.beforeToolCall = ({ toolCall }, signal) => {
    if (toolCall?.name !== "guarded") return undefined;
    if (world.winding) return undefined;
    const incarnation = world.incarnation;
    return new Promise((resolve) => {
      const close = () => {
        world.approvals = world.approvals.filter((a) => a !== entry);
        signal?.removeEventListener?.("abort", close);
      };
      const entry = {
        id: toolCall.id,
        incarnation,
        decide(allow) {
          close();
          resolve(allow ? undefined : { block: true, reason: "denied by user" });
        },
      };
      world.approvals.push(entry);
      log(`  dialog opens for ${toolCall.id}`);
      signal?.addEventListener?.("abort", close);
    });
  };

  return world;
}

/** A context's messages, shortly: "system user assistant(toolUse: c1_0 c1_1) toolResult(c1_0) …". */
export function describe(messages) {
  return messages
    .map((m) => {
      const calls = Array.isArray(m?.content) ? m.content.filter((b) => b?.type === "toolCall").map((b) => b.id) : [];
      if (m?.role === "assistant") return `assistant(${m.stopReason}${calls.length ? `: ${calls.join(" ")}` : ""})`;
      if (m?.role === "toolResult") return `toolResult(${m.toolCallId})`;
      return m?.role;
    })
    .join(" ");
}
