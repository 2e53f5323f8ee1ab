// Ours in the page: Agent + streamProxy + useAgent (pi-agent-wasm/react).
import { Agent, streamProxy } from "pi-agent-wasm";
import { useAgent } from "pi-agent-wasm/react";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi } from "./pi.jsx";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () => new Agent({ initialState, streamFn: (m, c, o) => streamProxy(m, c, { ...o, ...proxyOptions(origin, workload) }) }),
    useAgentState: useAgent,
  });
