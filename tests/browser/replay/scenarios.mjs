// The runs the Chromium replay test records and plays: each a script for the stream function (run
// in the page or in the worker), the page's tools and hooks, and how the user drives the run.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (f) => {
  for (let k = 0; k < 20_000 && !f(); k++) await sleep(0);
};
const tool = (name, execute) => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute });
const ok = (text) => ({ content: [{ type: "text", text }], details: {} });
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 5 });

export const SCENARIOS = {
  // Tools with progress, a denial after a while, a follow-up queued while a tool runs.
  tools: {
    script: [
      { thinking: "hmm", text: "let me", calls: [{ id: "k1", name: "calc", args: { x: 1 } }, { id: "k2", name: "calc", args: { x: 2 } }] },
      { text: "four" },
      { text: "you are welcome" },
    ],
    tools: () => [tool("calc", async (id, args, signal, onUpdate) => (onUpdate?.(ok("half")), await sleep(2), ok(`calc ${JSON.stringify(args)}`)))],
    options: { beforeToolCall: async ({ toolCall }) => (await sleep(2), toolCall.id === "k2" ? { block: true, reason: "denied by user" } : undefined) },
    async drive(agent) {
      const run = agent.prompt("2+2?");
      await until(() => agent.state.pendingToolCalls.size > 0);
      agent.followUp(user("thanks"));
      await run;
    },
  },
  // An abort during a tool that settles on it with its own result, then steering and a new prompt.
  abort: {
    script: [{ text: "working on it", calls: [{ id: "L1", name: "long_task" }] }, { text: "after the abort" }],
    tools: () => [tool("long_task", (id, args, signal, onUpdate) => new Promise((resolve, reject) => {
      let step = 0;
      const timer = setInterval(() => onUpdate?.(ok(`step ${++step}`)), 5);
      signal.addEventListener("abort", () => (clearInterval(timer), reject(new Error(`Task aborted at step ${step}`))));
    }))],
    options: {},
    async drive(agent) {
      const run = agent.prompt("run it");
      await until(() => agent.state.pendingToolCalls.size > 0);
      await sleep(30);
      agent.abort();
      await run;
      agent.steer(user("never mind"));
      await agent.prompt("what now?");
    },
  },
};
