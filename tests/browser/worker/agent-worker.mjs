// The worker of the WorkerAgent runs: the scenario's scripted stream function and worker-side tools.
import * as impl from "/pkg/index.js";
import { serveAgent } from "/pkg/worker/host.js";
import { scripted } from "/support/scripted.mjs";
import { Trace } from "/support/trace.mjs";
import { SCENARIOS } from "./scenarios.mjs";

serveAgent(({ name }) => {
	const sc = SCENARIOS[name];
	return { streamFn: scripted(impl, sc.responses, { tr: new Trace() }), tools: sc.workerTools?.() };
});
