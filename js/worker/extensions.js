// A seam for optional entries that must run part of their work where a WorkerAgent's loop runs
// (pi-agent-wasm/session writes a WorkerAgent's log in its worker; pi-agent-wasm/replay records and
// plays its runs there). An extension has a name, a half on the main thread and a half in the
// worker (extension-halves.js); their messages cross with the agent's own protocol, in order with it.
//
// Main thread: `post = workerAgent[WORKER_EXTENSION](name, { message(value), started(), stopped(error) })`
// sends `value` to the worker half with `post(value)`; `message` gets what the worker half posts,
// `started` runs each time a fresh worker starts (after a failure or `terminate()`), which knows
// nothing of the extension yet, and `stopped` (optional) when the worker fails or is terminated
// (nothing it was asked will be answered). Worker: the half registered under `name` gets
// `(value, { agent, post })`: the worker's Agent, and a function posting to the main thread half.

/** `Symbol.for`, so that two copies of the package agree. */
export const WORKER_EXTENSION = Symbol.for("pi-agent-wasm.workerExtension");
