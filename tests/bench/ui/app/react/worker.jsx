// Ours in a Worker: WorkerAgent (its loop, streamProxy and the wasm in a module Worker) + useAgent.
import { WorkerAgent } from "pi-agent-wasm/worker";
import { useAgent } from "pi-agent-wasm/react";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi } from "./pi.jsx";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () =>
      new WorkerAgent({
        initialState,
        worker: () => new Worker("/build/agent-worker.js", { type: "module" }),
        proxy: proxyOptions(origin, workload),
      }),
    useAgentState: useAgent,
  });
