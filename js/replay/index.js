// pi-agent-wasm/replay: record a run (every request and the events the loop read from its stream,
// every tool call and approval decision, the user's inputs, and the order in which the agent saw
// it all) into a versioned JSON log, and play a log back deterministically, in the browser or in
// Node. log.js is the format and its reader, recorder.js the recorder, player.js the playback,
// divergence.js the message hashes and the report of a replay that went another way.
import { readReplayLog } from "./log.js";
import { createPlayer } from "./player.js";

export { REPLAY_LOG_VERSION, ReplayLogError, readReplayLog } from "./log.js";
export { ReplayDivergenceError } from "./divergence.js";
export { createRecorder } from "./recorder.js";

/**
 * Plays a log back (its JSON text or the object, read whole first: a bad log throws a
 * `ReplayLogError`). `timing: "instant"` (default) answers at full speed; `"recorded"` waits the
 * recorded delays, divided by `speed`. Returns `{ streamFn, tools, beforeToolCall, attach(agent),
 * play(agent), divergence }`.
 */
export const createReplay = (log, options) => createPlayer(readReplayLog(log), options);
