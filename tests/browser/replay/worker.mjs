// The worker of the page's WorkerAgents: the scripted stream function of the scenario the page names.
import { createAssistantMessageEventStream } from "/pkg/index.js";
import { serveAgent } from "/pkg/worker/host.js";
import { makeScripted } from "/tests/js/replay/scripted.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const scripted = makeScripted(createAssistantMessageEventStream);
serveAgent(({ scenario }) => ({ streamFn: scenario ? scripted(SCENARIOS[scenario].script) : () => { throw new Error("this agent is not expected to stream"); } }));
