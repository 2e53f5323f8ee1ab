// 1.4.0's Agent and streamProxy, with a hand-written hook that sets React state once per animation frame.
import { Agent, streamProxy } from "@earendil-works/pi-agent-core";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi, usePerFrame } from "./pi.jsx";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () => new Agent({ initialState, streamFn: (m, c, o) => streamProxy(m, c, { ...o, ...proxyOptions(origin, workload) }) }),
    useAgentState: usePerFrame,
  });
