// The harness's `workerUrl`: a worker whose agent streams from the example model.
import { serveAgent } from "/pkg/worker/host.js";
import { streamFn } from "./harness.js";

serveAgent({ streamFn });
