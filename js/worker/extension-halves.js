// The worker halves of the extensions of extensions.js, by name (imported by host.js only: the
// main thread's WorkerAgent loads none of them).
import { replayInWorker } from "../replay/in-worker.js";
import { sessionInWorker } from "../session/in-worker.js";

const HALVES = { ...replayInWorker, ...sessionInWorker };

/** The worker half of extension `name`, if there is one. */
export const workerExtension = (name) => (Object.hasOwn(HALVES, name) ? HALVES[name] : undefined);
