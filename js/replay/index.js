// pi-agent-wasm/replay: record a run (every request and the events the loop read from its stream,
// every tool call and approval decision, the user's inputs, and the order in which the agent saw
// it all) into a versioned JSON log, and play a log back deterministically, in the browser or in
// Node. log.js is the format and its reader, recorder.js the recorder, player.js the playback,
// divergence.js the message hashes and the report of a replay that went another way.
export { REPLAY_LOG_VERSION, ReplayLogError, readReplayLog } from "./log.js";
export { ReplayDivergenceError } from "./divergence.js";
export { createRecorder } from "./recorder.js";
export { createReplay } from "./player.js";
