// The page of the combination matrix: an Agent, or a WorkerAgent whose loop runs in worker.mjs, with a
// session in the real IndexedDB and a recorder attached, as an app would set them up after each load.
// The test drives it through the functions on `window`.
import { Agent } from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { attachSession } from "/pkg/session/index.js";
import { createRecorder, createReplay } from "/pkg/replay/index.js";
import { MODEL, streamFn, textOf } from "./model.mjs";

const params = { type: "object", properties: { path: { type: "string" } } };
const TOOLS = [
  { name: "slow", label: "Slow", description: "never finishes; stops on abort", parameters: params,
    execute: (id, args, signal) => new Promise((resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("slow stopped")), { once: true })) },
  { name: "fetch", label: "Fetch", description: "a page, after approval", parameters: params,
    execute: async (id, { path }) => ({ content: [{ type: "text", text: `page ${path}` }], details: {} }) },
];
const SYSTEM = "You are a test.";
const plain = (v) => JSON.parse(JSON.stringify(v ?? null, (k, x) => (k === "timestamp" || k === "durationMs" ? undefined : x)));

window.problems = [];
window.approvals = [];
/** When set, a dialog is answered at once: true approves, false denies. */
window.autoDecide = undefined;
const beforeToolCall = ({ toolCall }) => {
  if (toolCall.name !== "fetch") return undefined;
  const answer = (allow) => (allow ? undefined : { block: true, reason: "denied by user" });
  if (window.autoDecide !== undefined) return answer(window.autoDecide);
  return new Promise((resolve) => window.approvals.push({ id: toolCall.id, decide: (allow) => resolve(answer(allow)) }));
};

window.setup = async ({ id, worker }) => {
  const options = { initialState: { systemPrompt: SYSTEM, model: MODEL, tools: TOOLS }, beforeToolCall };
  const agent = worker
    ? new WorkerAgent({ ...options, worker: () => new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" }) })
    : new Agent({ ...options, streamFn });
  const counts = (window.counts = { starts: 0, ends: 0 });
  agent.subscribe((event) => {
    if (event.type === "agent_start") {
      if (counts.starts > counts.ends) window.problems.push("agent_start while a run is going");
      counts.starts++;
    } else if (event.type === "agent_end") {
      counts.ends++;
      if (counts.ends > counts.starts) window.problems.push(`agent_end without agent_start (${counts.ends} ends, ${counts.starts} starts)`);
    } else if (counts.starts === counts.ends) window.problems.push(`${event.type} outside a run`);
  });
  window.recorder = createRecorder();
  try {
    window.recorder.attach(agent);
  } catch (err) {
    window.recorder = undefined;
    window.problems.push(`createRecorder().attach(${worker ? "WorkerAgent" : "Agent"}) throws: ${err.message}`);
  }
  window.agent = agent;
  window.session = await attachSession(agent, { id, onError: (e) => window.problems.push(`session: ${e.name}: ${e.message}`) });
  window.runs = [];
  return window.view();
};

/** Starts `fn()` (a run) and keeps how it settled. */
window.start = (what, fn) => {
  const entry = { what, done: false, error: undefined };
  window.runs.push(entry);
  Promise.resolve()
    .then(fn)
    .then(() => (entry.done = true), (err) => ((entry.done = true), (entry.error = err?.message ?? String(err))));
};
window.prompt = (text) => window.start(`prompt(${JSON.stringify(text)})`, () => window.agent.prompt(text));
window.idle = () => window.runs.every((r) => r.done) && !window.agent.state.isStreaming;
window.decide = (allow) => window.approvals.shift()?.decide(allow);

/** The next action after a reload. */
window.act = (action) => {
  const s = window.session;
  const agent = window.agent;
  switch (action) {
    case "prompt":
      return window.prompt("next");
    case "approve":
    case "deny":
    case "resume":
      window.autoDecide = action !== "deny";
      return window.start("session.resume()", () => s.resume());
    case "continue":
      window.autoDecide = true;
      return window.start("continue()", () => agent.continue());
    case "abort": {
      window.autoDecide = true;
      if (s.pendingCalls.length > 0) window.start("session.resume()", () => s.resume());
      else window.start("continue()", () => agent.continue());
      // The user stops what the action started, as soon as it runs (or at once, if nothing started).
      const stop = () => (agent.state.isStreaming || window.idle() ? agent.abort() : setTimeout(stop, 0));
      return stop();
    }
    default:
      throw new Error(`unknown action ${action}`);
  }
};

/** Plays a recorded log in a fresh Agent; its transcript, or the error play() rejected with. */
window.replay = async (log) => {
  const agent = new Agent({
    initialState: { systemPrompt: SYSTEM, model: MODEL },
    streamFn: () => {
      throw new Error("the replay called the agent's own stream function");
    },
  });
  let timer;
  try {
    await Promise.race([
      createReplay(log).play(agent),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("play() did not settle within 10 s")), 10_000))),
    ]);
    return { messages: plain(agent.state.messages) };
  } catch (err) {
    agent.abort();
    return { error: `${err.name}: ${err.message}`, messages: plain(agent.state.messages) };
  } finally {
    clearTimeout(timer);
  }
};

window.view = () => {
  const agent = window.agent;
  const s = window.session;
  return {
    messages: plain(agent.state.messages),
    shown: agent.state.messages.map((m) => `${m.role}${m.stopReason ? `(${m.stopReason})` : ""}${m.toolCallId ? `(${m.toolCallId})` : ""}:${textOf(m).slice(0, 30)}${m.errorMessage ? ` [${m.errorMessage.slice(0, 60)}]` : ""}`),
    isStreaming: agent.state.isStreaming,
    streaming: agent.state.streamingMessage ? plain(agent.state.streamingMessage) : undefined,
    pendingToolCalls: [...agent.state.pendingToolCalls],
    queued: agent.peekQueuedMessages().map(textOf),
    pendingCalls: s?.pendingCalls.map((p) => p.toolCall.id) ?? [],
    pendingApprovals: s?.pendingApprovals.map((p) => p.toolCall.id) ?? [],
    approvals: window.approvals.map((a) => a.id),
    counts: window.counts,
    runs: window.runs.map((r) => ({ ...r })),
    problems: window.problems,
  };
};
window.ready = true;
