// The page the session browser tests drive: an Agent (or a WorkerAgent, whose loop runs in
// session-worker.mjs) with a scripted stream function and tools, attached to a session in the real
// IndexedDB. `window.setup(options)` builds it (after each reload).
import { Agent } from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { attachSession, indexedDBStore } from "/pkg/session/index.js";
import { BIG, LATIN, MODEL, streamFn, textOf } from "./stream.mjs";

window.BIG = BIG;
window.LATIN = LATIN;

const params = { type: "object", properties: {} };
const TOOLS = [
  { name: "slow", label: "Slow", description: "never finishes", parameters: params, execute: () => new Promise(() => {}) },
  { name: "fetch", label: "Fetch", description: "a page", parameters: { type: "object", properties: { path: { type: "string" } } },
    execute: async (id, { path }) => ({ content: [{ type: "text", text: `page ${path}` }], details: {} }) },
];

// Runs before the session's own pagehide handler (registered first): a test makes a write be in
// flight when the session writes what it has batched.
addEventListener("pagehide", () => window.beforeHide?.());

window.approvals = [];
window.errors = [];
window.setup = async ({ id = "test", store: kind = "idb", flushMs, worker = false } = {}) => {
  let store = indexedDBStore({ name: "session-test" });
  window.readChars = 0;
  if (kind === "counting") {
    // Counts the characters this tab reads from the store.
    const inner = store;
    const counted = async (text) => ((window.readChars += text.length), text);
    store = { ...inner, load: async (id) => counted(await inner.load(id)), loadFrom: async (id, from) => counted(await inner.loadFrom(id, from)) };
  }
  if (kind === "throwing") {
    // A store whose writes fail as a full disk does (QuotaExceededError).
    store = { ...store, append: async () => { throw new DOMException("The quota has been exceeded.", "QuotaExceededError"); } };
  }
  const options = {
    initialState: { systemPrompt: "You are a test.", model: MODEL, tools: TOOLS },
    // A dialog per call of `fetch`; it closes (`cancelled`) when the call's signal aborts.
    beforeToolCall: ({ toolCall }, signal) =>
      toolCall.name !== "fetch" ? undefined : new Promise((resolve) => {
        const entry = { id: toolCall.id, approve: () => resolve(undefined), cancelled: false };
        signal?.addEventListener("abort", () => (entry.cancelled = true));
        window.approvals.push(entry);
      }),
  };
  // The WorkerAgent's tools and hooks stay in the page; its stream function is the worker's.
  const agent = worker
    ? new WorkerAgent({ ...options, worker: () => new Worker(new URL("./session-worker.mjs", import.meta.url), { type: "module" }) })
    : new Agent({ ...options, streamFn });
  const session = await attachSession(agent, { id, store, flushMs, onError: (e) => window.errors.push(`${e.name}: ${e.message}`) });
  // After the session's own pagehide handler: what a page's teardown does to a run (its fetch aborted).
  addEventListener("pagehide", () => window.abortOnHide && agent.abort());
  window.agent = agent;
  window.session = session;
  window.runs = [];
  window.run = (text) => window.runs.push(agent.prompt(text).then(() => "done", (e) => `rejected: ${e.message}`));
  window.view = () => ({
    messages: agent.state.messages.map((m) => ({ role: m.role, text: textOf(m), stopReason: m.stopReason, errorMessage: m.errorMessage, isError: m.isError, toolCallId: m.toolCallId })),
    streaming: textOf(agent.state.streamingMessage),
    remote: textOf(session.remoteStreamingMessage),
    pendingToolCalls: [...agent.state.pendingToolCalls],
    isStreaming: agent.state.isStreaming,
    queued: agent.peekQueuedMessages().map(textOf),
    hasQueued: agent.hasQueuedMessages(),
    isLeader: session.isLeader,
    restored: session.restored,
    interrupted: session.interrupted,
    dropped: session.dropped,
    pendingApprovals: session.pendingApprovals.map((p) => p.toolCall.id),
    pendingCalls: session.pendingCalls.map((p) => p.toolCall.id),
    errors: window.errors,
    approvals: window.approvals.map((a) => a.id),
    cancelled: window.approvals.filter((a) => a.cancelled).map((a) => a.id),
  });
  return window.view();
};
window.ready = true;
