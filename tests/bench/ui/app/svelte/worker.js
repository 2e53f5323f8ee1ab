// Ours in a Worker: WorkerAgent + agentStore.
import { WorkerAgent } from "pi-agent-wasm/worker";
import { agentStore } from "pi-agent-wasm/svelte";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi } from "./pi.js";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () =>
      new WorkerAgent({ initialState, worker: () => new Worker("/build/agent-worker.js", { type: "module" }), proxy: proxyOptions(origin, workload) }),
    createStore: (agent) => agentStore(agent),
  });
