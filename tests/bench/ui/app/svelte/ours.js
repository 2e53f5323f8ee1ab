// Ours in the page: Agent + streamProxy + agentStore (pi-agent-wasm/svelte).
import { Agent, streamProxy } from "pi-agent-wasm";
import { agentStore } from "pi-agent-wasm/svelte";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi } from "./pi.js";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () => new Agent({ initialState, streamFn: (m, c, o) => streamProxy(m, c, { ...o, ...proxyOptions(origin, workload) }) }),
    createStore: (agent) => agentStore(agent),
  });
