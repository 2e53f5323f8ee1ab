// The page of the branch tests: an Agent or a WorkerAgent attached to a session in the real IndexedDB.
// `window.setup({ id, worker })` builds it (after each reload); `window.view()` describes it.
import { Agent } from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { attachSession } from "/pkg/session/index.js";
import { MODEL, streamFn, textOf } from "./stream.mjs";

const look = { name: "look", label: "look", description: "look", parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: "seen" }], details: {} }) };

let stamp = Date.now();
window.user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ++stamp });
window.setup = async ({ id, worker = false }) => {
  const options = { initialState: { systemPrompt: "test", model: MODEL, tools: [look] } };
  const agent = worker
    ? new WorkerAgent({ ...options, worker: () => new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" }) })
    : new Agent({ ...options, streamFn });
  const session = await attachSession(agent, { id });
  window.agent = agent;
  window.session = session;
  window.heard = 0;
  session.branches.subscribe(() => window.heard++);
  return window.view();
};
window.view = () => ({
  texts: window.agent.state.messages.slice(1).map((m) => `${m.role[0]}:${textOf(m) || m.stopReason || ""}`),
  errors: window.agent.state.messages.filter((m) => m.stopReason === "error").map((m) => m.errorMessage),
  points: window.session.branches.points,
  leader: window.session.isLeader,
});
window.ready = true;
