// The Chromium half of the benchmark: both implementations in one page, driven by run.mjs /
// profile.mjs through `window.bench`. Marks call the exposed binding `__benchMark`, which reads the
// renderer's main-thread CPU time over CDP (Performance.getMetrics, TaskDuration in threadTicks).
import * as oursMod from "/pkg/index.js";
import { initSync } from "/pkg/pi_agent_wasm.js";
import * as ref from "/ref/reference.js";
import { prepare, SCENARIOS } from "./scenarios.mjs";

const impls = {
  ours: { Agent: oursMod.Agent, streamProxy: oursMod.streamProxy, createAssistantMessageEventStream: oursMod.createAssistantMessageEventStream, piAiStream: ref.createAssistantMessageEventStream },
  reference: { Agent: ref.Agent, streamProxy: ref.streamProxy, createAssistantMessageEventStream: ref.createAssistantMessageEventStream, piAiStream: ref.createAssistantMessageEventStream },
};
// The package does not export its memory; once it is ready, wasm-bindgen's initSync() returns the
// exports of the instance index.js initialised (not a public API).
await oursMod.ready;
const wasmMemory = Object.values(initSync()).find((v) => v instanceof WebAssembly.Memory); // export names may be minified

// Macrotasks without timer clamping. While a mark is being read (a CDP round trip, the page awaiting
// it), the scripted producers are held, so they cannot run ahead of the consumer during the pause.
const queue = [];
let posted = 0;
let holding = false;
const channel = new MessageChannel();
channel.port1.onmessage = () => {
  posted--;
  if (!holding) queue.shift()();
};
const post = () => {
  while (!holding && posted < queue.length) {
    posted++;
    channel.port2.postMessage(0);
  }
};
const tick = (fn) => {
  queue.push(fn);
  post();
};

let noMarks = false;
const env = {
  mark(label) {
    if (noMarks) return undefined;
    holding = true;
    return window.__benchMark(label).finally(() => {
      holding = false;
      post();
    });
  },
  tick,
  proxyBase: location.origin,
};

let kept;
window.bench = {
  prepare: (scenario, params) => void prepare(scenario, params),
  async run(impl, scenario, params, keep, withMarks = true) {
    noMarks = !withMarks;
    try {
      const result = await SCENARIOS[scenario](impls[impl], env, params);
      if (keep) kept = result.keep;
      return result.check;
    } finally {
      noMarks = false;
    }
  },
  release() {
    kept = undefined;
  },
  wasmBytes: () => wasmMemory.buffer.byteLength,
};
window.benchReady = true;
