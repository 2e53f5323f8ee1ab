// Records a scenario with an Agent or a WorkerAgent (a real module Worker), plays its log on a
// fresh Agent or WorkerAgent, and reports both sides' events and transcripts.
import { Agent, createAssistantMessageEventStream } from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { createRecorder, createReplay } from "/pkg/replay/index.js";
import { makeScripted, trace, transcript } from "/tests/js/replay/scripted.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const scripted = makeScripted(createAssistantMessageEventStream);

function make(mode, scenario, options = {}) {
  const s = scenario ? SCENARIOS[scenario] : undefined;
  const initialState = s ? { systemPrompt: "sys", model: MODEL, tools: s.tools() } : {};
  if (mode === "agent") {
    return new Agent({ initialState, streamFn: s ? scripted(s.script) : () => { throw new Error("this agent is not expected to stream"); }, ...options });
  }
  return new WorkerAgent({ initialState, worker: () => new Worker("./worker.mjs", { type: "module" }), workerOptions: { scenario }, ...options });
}

window.run = async (scenario, record, play) => {
  const s = SCENARIOS[scenario];
  const a = make(record, scenario, s.options);
  const recorder = createRecorder();
  recorder.attach(a);
  const recorded = trace(a);
  let ended;
  a.subscribe((e) => void (e.type === "agent_end" && (ended = transcript(a))));
  await s.drive(a);
  await a.waitForIdle();
  // A WorkerAgent's recorder sends the end of the run with it: the log holds it once the run settled.
  const log = recorder.export();
  const b = make(play);
  const replayed = trace(b);
  const replay = createReplay(log);
  let error;
  await replay.play(b).catch((e) => (error = `${e.name}: ${e.message}`));
  const out = { recorded, replayed, ended, transcript: transcript(b), error, requests: JSON.parse(log).requests.length };
  a.terminate?.();
  b.terminate?.();
  return out;
};
window.ready = true;
