// The scripted stream function of the session browser tests, for the page's Agent and for the
// WorkerAgent's worker (session-worker.mjs).
import { createAssistantMessageEventStream } from "/pkg/index.js";
import { strictProblems } from "/support/strict-transcript.mjs";

export const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const textOf = (m) => typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
const lastUserText = (messages) => textOf([...messages].reverse().find((m) => m.role === "user"));

// "big …": BIG (100,000 characters of newlines, quotes, backslashes and emoji) in 997-character
// deltas, one every 5 ms.
export const BIG = Array.from({ length: 2500 }, (_, i) => `${i}: "q" \\ é 🦀\n\u2028{}`).join("").slice(0, 100_000);
// "latin …": LATIN (150,000 characters, none above U+00FF) in 997-character deltas, at once.
export const LATIN = Array.from({ length: 9000 }, (_, i) => `${i}: "q" \\ é\n{}`).join("").slice(0, 150_000);

// "long …": 400 words, one every 5 ms. "tool …": calls `slow` (never finishes). "fetch …": calls
// `fetch` (needs approval). "count": how many messages the request has. After a tool result:
// "after tools". Anything else: "ok: <prompt>". A context a strict provider would reject is
// answered "invalid context: <the first problem>" (the tests' expected answers then differ).
export function streamFn(model, context) {
  const s = createAssistantMessageEventStream();
  const messages = context.messages;
  const last = messages[messages.length - 1];
  const prompt = lastUserText(messages);
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() };
  (async () => {
    await sleep(1);
    s.push({ type: "start", partial });
    let calls = [];
    let text = `ok: ${prompt}`;
    if (last.role === "toolResult") text = "after tools";
    else if (prompt.startsWith("long")) text = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
    else if (prompt.startsWith("big")) text = BIG;
    else if (prompt.startsWith("latin")) text = LATIN;
    else if (prompt.startsWith("tool")) calls = [{ id: "slow-1", name: "slow" }];
    else if (prompt === "count") text = `count: ${messages.length} messages`;
    else if (prompt.startsWith("fetch")) calls = [{ id: "fetch-1", name: "fetch", args: { path: "/about.txt" } }];
    if (calls.length) text = "calling";
    const invalid = strictProblems(messages);
    if (invalid.length > 0) {
      text = `invalid context: ${invalid[0]}`;
      calls = [];
    }
    partial.content.push({ type: "text", text: "" });
    s.push({ type: "text_start", contentIndex: 0, partial });
    for (const word of text === BIG || text === LATIN ? text.match(/[^]{1,997}/gu) : text.split(/(?= )/)) {
      partial.content[0].text += word;
      s.push({ type: "text_delta", contentIndex: 0, delta: word, partial });
      if (text.length > 100 && text !== LATIN) await sleep(5);
    }
    s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    for (const c of calls) {
      const block = { type: "toolCall", id: c.id, name: c.name, arguments: c.args ?? {} };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: partial.content.length - 1, partial });
      s.push({ type: "toolcall_end", contentIndex: partial.content.length - 1, toolCall: block, partial });
      partial.stopReason = "toolUse";
    }
    s.push({ type: "done", reason: partial.stopReason, message: partial });
  })();
  return s;
}

