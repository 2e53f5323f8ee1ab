// The worker of the worker benchmark's S1: serves a WorkerAgent whose stream function is S1's scripted
// text stream, run in the worker.
import * as impl from "/pkg/index.js";
import { serveAgent } from "/pkg/worker/host.js";
import { deltasFor, textStreamFn } from "./worker-streams.mjs";

serveAgent(({ deltas, size }) => ({ streamFn: textStreamFn(impl, deltasFor(deltas, size)) }));
