// The model of the combination matrix, for the page's Agent and for the WorkerAgent's worker. The user's
// last message says where the run stops, so the test can reload the page at that moment:
//   "stream"   streams "part one of the answer", then waits (until the abort)
//   "args"     starts a `fetch` call and streams half of its arguments, then waits
//   "tool"     calls `slow` (which never finishes)
//   "approve"  calls `fetch` (which waits for approval in beforeToolCall)
//   "idle"     answers "done"
// Any other user message is answered "ok: <text>"; tool results "after tools"; a context that ends with
// an assistant message "continued". A context a strict provider would reject is answered with an error
// whose message starts with "invalid context for a strict provider", which the test looks for in the
// transcript (the worker's model has no other way to tell the page).
import { createAssistantMessageEventStream } from "/pkg/index.js";
import { strictProblems } from "/support/strict-transcript.mjs";

export const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 };
export const STRICT_ERROR = "invalid context for a strict provider";
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
export const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b?.type === "text").map((b) => b.text).join(""));
const tick = () => new Promise((r) => setTimeout(r, 0));

export function streamFn(model, context, options) {
  const s = createAssistantMessageEventStream();
  const messages = context.messages;
  const last = messages[messages.length - 1];
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() };
  const signal = options?.signal;
  const stopped = () => new Promise((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener("abort", resolve, { once: true })));
  const end = (reason, errorMessage) => {
    partial.stopReason = reason;
    partial.errorMessage = errorMessage;
    s.push({ type: "error", reason, error: partial });
    s.end();
  };
  (async () => {
    await tick();
    const problems = strictProblems(messages);
    if (problems.length > 0) return end("error", `${STRICT_ERROR}: ${problems[0]}`);
    if (signal?.aborted) return end("aborted", "Request was aborted");
    s.push({ type: "start", partial });
    const plan = last?.role === "user" ? textOf(last) : "";
    let text = last?.role === "toolResult" ? "after tools" : last?.role === "assistant" ? "continued" : plan === "idle" ? "done" : `ok: ${plan}`;
    const call = { tool: { id: `slow-${messages.length}`, name: "slow", args: {} }, approve: { id: `fetch-${messages.length}`, name: "fetch", args: { path: "/a" } } }[plan];
    if (plan === "stream") text = "part one of the answer";
    if (call || plan === "args") text = "calling";
    partial.content.push({ type: "text", text: "" });
    s.push({ type: "text_start", contentIndex: 0, partial });
    for (const word of text.split(/(?= )/)) {
      await tick();
      partial.content[0].text += word;
      s.push({ type: "text_delta", contentIndex: 0, delta: word, partial });
    }
    if (plan === "stream") {
      await stopped();
      return end("aborted", "Request was aborted");
    }
    s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    if (plan === "args") {
      const block = { type: "toolCall", id: `fetch-${messages.length}`, name: "fetch", arguments: {} };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: 1, partial });
      s.push({ type: "toolcall_delta", contentIndex: 1, delta: '{"pa', partial });
      await stopped();
      return end("aborted", "Request was aborted");
    }
    if (call) {
      const block = { type: "toolCall", id: call.id, name: call.name, arguments: call.args };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: 1, partial });
      s.push({ type: "toolcall_delta", contentIndex: 1, delta: JSON.stringify(call.args), partial });
      s.push({ type: "toolcall_end", contentIndex: 1, toolCall: block, partial });
      partial.stopReason = "toolUse";
    }
    s.push({ type: "done", reason: partial.stopReason, message: partial });
    s.end();
  })();
  return s;
}
