// The Node half of `npm run bench`, run by run.mjs in its own process:
//   node --expose-gc tests/bench/node-bench.mjs <proxyBase> <pkgDir> <out.json> [options-json]
// CPU time is process.cpuUsage() (user + system, whole process: it includes V8's helper threads), and
// on Linux also the main thread's own CPU time from /proc/thread-self/schedstat.
import { openSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { jobs, runJobs } from "./driver.mjs";
import { prepare, SCENARIOS } from "./scenarios.mjs";

const [proxyBase, pkgDir, outFile, optionsJson] = process.argv.slice(2);
const options = optionsJson ? JSON.parse(optionsJson) : {};
if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");

const oursMod = await import(pathToFileURL(join(pkgDir, "index.js")).href);
// The package does not export its memory; wasm-bindgen's initSync() returns the exports of the
// instance index.js already initialised (not a public API).
const wasmMemory = Object.values((await import(pathToFileURL(join(pkgDir, "pi_agent_wasm.js")).href)).initSync()).find((v) => v instanceof WebAssembly.Memory); // export names may be minified
const core = await import("@earendil-works/pi-agent-core");
const ai = await import("@earendil-works/pi-ai");

const impls = {
  ours: { Agent: oursMod.Agent, streamProxy: oursMod.streamProxy, createAssistantMessageEventStream: oursMod.createAssistantMessageEventStream, piAiStream: ai.createAssistantMessageEventStream },
  reference: { Agent: core.Agent, streamProxy: core.streamProxy, createAssistantMessageEventStream: ai.createAssistantMessageEventStream, piAiStream: ai.createAssistantMessageEventStream },
};

// The main thread's own CPU time, where Linux exposes it (/proc/thread-self/schedstat, ns on CPU):
// reported beside process.cpuUsage() so Node can be compared with Chromium's main-thread clock.
let threadClock;
try {
  const fd = openSync("/proc/thread-self/schedstat", "r");
  const buf = Buffer.alloc(128);
  threadClock = () => {
    const n = readSync(fd, buf, 0, 128, 0);
    return Number(buf.toString("latin1", 0, n).split(" ", 1)[0]) / 1e9;
  };
  if (!(threadClock() > 0)) threadClock = undefined;
} catch {
  threadClock = undefined;
}

let marks = {};
let threadMarks = {};
const env = {
  mark(label) {
    const u = process.cpuUsage();
    marks[label] = (u.user + u.system) / 1e6;
    if (threadClock) threadMarks[label] = threadClock();
    return undefined;
  },
  tick: setImmediate,
  proxyBase,
};

let kept;
const backend = {
  prepare: (scenario, params) => prepare(scenario, params),
  async runOnce(impl, scenario, params, keep) {
    marks = {};
    threadMarks = {};
    const result = await SCENARIOS[scenario](impls[impl], env, params);
    if (keep) kept = result.keep;
    return { marks, threadMarks: threadClock ? threadMarks : undefined, check: result.check };
  },
  async gc() {
    // wasm-bindgen frees a Rust object (and the JS values it holds) in a FinalizationRegistry callback,
    // which V8 runs in a task some time after the GC that found the wrapper dead: several rounds, so
    // that a released Agent's transcript is gone before the heap is read.
    for (let i = 0; i < 4; i++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    globalThis.gc();
  },
  memory: () => ({ heap: process.memoryUsage().heapUsed, wasm: wasmMemory.buffer.byteLength }),
  release() {
    kept = undefined;
  },
};

const list = jobs(options);
const only = options.only ? new Set(options.only) : undefined;
const results = await runJobs(backend, only ? list.filter((j) => only.has(j.id)) : list, (line) => process.stderr.write(`  [node] ${line}\n`));
void kept;
writeFileSync(outFile, JSON.stringify({ env: "node", version: process.version, threadClock: Boolean(threadClock), results }));
process.exit(0);
