// The worker module of pi-agent-wasm/worker: serves a WorkerAgent with the
// main thread's tools and hooks and, with the `proxy` option, streamProxy.
import { serveAgent } from "./host.js";

serveAgent();
