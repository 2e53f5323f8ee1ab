// Ours in the page, the answer rendered by TextBlocks (pi-agent-wasm/react): one element per block.
import { Agent, streamProxy } from "pi-agent-wasm";
import { TextBlocks, useAgent } from "pi-agent-wasm/react";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi } from "./pi.jsx";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () => new Agent({ initialState, streamFn: (m, c, o) => streamProxy(m, c, { ...o, ...proxyOptions(origin, workload) }) }),
    useAgentState: useAgent,
    blocks: TextBlocks,
  });
