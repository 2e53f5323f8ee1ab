// 1.4.0's Agent and streamProxy, with a store set on every event.
import { Agent, streamProxy } from "@earendil-works/pi-agent-core";
import { initialState, proxyOptions } from "../harness.js";
import { mountPi, perUpdateStore } from "./pi.js";

export const mount = (target, { origin, workload }) =>
  mountPi(target, {
    createAgent: () => new Agent({ initialState, streamFn: (m, c, o) => streamProxy(m, c, { ...o, ...proxyOptions(origin, workload) }) }),
    createStore: perUpdateStore,
  });
