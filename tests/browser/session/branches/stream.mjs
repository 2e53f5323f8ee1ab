// The stream function of the branch tests, in the page (Agent) and in the worker (WorkerAgent): every
// context it receives must suit a strict provider (a context that does not ends the answer with an error
// the test sees). "look …" calls the page's `look` tool; otherwise it answers "re: <prompt> #n".
import { createAssistantMessageEventStream } from "/pkg/index.js";
import { strictProblems } from "/support/strict-transcript.mjs";

export const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
export const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));

export function streamFn(model, context) {
  const s = createAssistantMessageEventStream();
  const last = context.messages.at(-1);
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() + Math.random() };
  const problems = strictProblems(context.messages);
  setTimeout(() => {
    s.push({ type: "start", partial });
    if (problems.length > 0) {
      return s.push({ type: "error", reason: "error", error: { ...partial, stopReason: "error", errorMessage: `strict: ${problems[0]}` } });
    }
    if (last.role === "user" && textOf(last).startsWith("look")) {
      const block = { type: "toolCall", id: `look-${partial.timestamp}`, name: "look", arguments: {} };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: 0, partial });
      s.push({ type: "toolcall_end", contentIndex: 0, toolCall: block, partial });
      partial.stopReason = "toolUse";
    } else {
      const text = last.role === "toolResult" ? `after ${textOf(last)}` : `re: ${textOf(last)} #${Math.round(partial.timestamp % 1000)}`;
      partial.content.push({ type: "text", text });
      s.push({ type: "text_start", contentIndex: 0, partial });
      s.push({ type: "text_delta", contentIndex: 0, delta: text, partial });
      s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    }
    s.push({ type: "done", reason: partial.stopReason, message: partial });
  }, 1);
  return s;
}
