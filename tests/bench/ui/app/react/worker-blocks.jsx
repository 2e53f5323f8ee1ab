// Ours in a Worker, the answer rendered by TextBlocks (pi-agent-wasm/react).
import { WorkerAgent } from "pi-agent-wasm/worker";
import { TextBlocks, useAgent } from "pi-agent-wasm/react";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi } from "./pi.jsx";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () =>
      new WorkerAgent({ initialState, worker: () => new Worker("/build/agent-worker.js", { type: "module" }), proxy: proxyOptions(origin, workload) }),
    useAgentState: useAgent,
    blocks: TextBlocks,
  });
