// The page of the worker benchmark (worker.mjs): S1 and S4a through an Agent, with three agents: ours in
// the page, the reference in the page, and ours in a Worker (WorkerAgent), for S1 also with a session. Marks read the renderer's
// main-thread CPU time (TaskDuration, threadTicks) over CDP: the worker's thread is not in it.
import * as ours from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { attachSession, indexedDBStore } from "/pkg/session/index.js";
import * as ref from "/ref/reference.js";
import { MODEL, deltasFor, textStreamFn } from "./worker-streams.mjs";

const impls = { ours, reference: ref };
const initialState = { systemPrompt: "You are a benchmark.", model: MODEL };

function makeAgent(impl, scenario, params) {
  if (impl === "worker") {
    if (scenario === "S1") {
      return new WorkerAgent({ initialState, worker: new Worker(new URL("./worker-agent.mjs", import.meta.url), { type: "module" }), workerOptions: params });
    }
    return new WorkerAgent({
      initialState,
      worker: new Worker("/pkg/worker/script.js", { type: "module" }),
      proxy: { proxyUrl: `${location.origin}/${params.variant}`, authToken: "bench-token" },
    });
  }
  const m = impls[impl];
  const streamFn = scenario === "S1"
    ? textStreamFn(m, deltasFor(params.deltas, params.size))
    : (model, context, options) => m.streamProxy(model, context, { ...options, proxyUrl: `${location.origin}/${params.variant}`, authToken: "bench-token" });
  return new m.Agent({ initialState, streamFn });
}

// One WorkerAgent per scenario, reused (reset between runs) as an app keeps its agent: starting the worker is
// not part of a run's cost.
const workerAgents = new Map();
async function workerAgent(scenario, params) {
  const key = scenario + JSON.stringify(params);
  let agent = workerAgents.get(key);
  if (!agent) {
    agent = makeAgent("worker", scenario, params);
    // The worker has started once it answered a first (empty-transcript) continue, which fails at once.
    await agent.continue().catch(() => {});
    workerAgents.set(key, agent);
  }
  agent.reset();
  return agent;
}

// "session": ours in a Worker with pi-agent-wasm/session attached (IndexedDB, written from the worker): a
// session of its own per run, attached before the first mark, its writes landed before the second.
const store = indexedDBStore({ name: "bench-worker" });

window.bench = {
  prepare(params) {
    if (params.deltas && params.size) deltasFor(params.deltas, params.size);
  },
  async run(impl, scenario, params) {
    const agent = impl === "worker" || impl === "session" ? await workerAgent(scenario, params) : makeAgent(impl, scenario, params);
    const id = `bench-${Math.random().toString(36).slice(2)}`;
    const session = impl === "session" ? await attachSession(agent, { id, store, tabs: false }) : undefined;
    let deltas = 0;
    let sink = 0;
    const unsubscribe = agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
        const message = event.message;
        sink += message.content[message.content.length - 1].text.length;
        deltas++;
      }
    });
    await window.__benchMark("start");
    await agent.prompt("Write a long answer.");
    await session?.flush();
    await window.__benchMark("end");
    const last = agent.state.messages[agent.state.messages.length - 1];
    unsubscribe();
    let logged;
    if (session) {
      await session.detach();
      logged = (await store.load(id)).length;
      await store.clear(id);
    }
    return { deltas, textLength: last.content[0]?.text?.length ?? 0, stopReason: last.stopReason, error: last.errorMessage, sink: sink > 0, logged };
  },
};
// The two marks alone: what the measurement itself costs the main thread (a CDP round trip each).
window.bench.empty = async () => {
  await window.__benchMark("start");
  await window.__benchMark("end");
};
window.benchReady = true;
