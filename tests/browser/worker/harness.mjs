// Runs a scenario with the in-page Agent or the WorkerAgent and returns its trace.
import * as impl from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { scripted, resetTimestamps, MODEL } from "/support/scripted.mjs";
import { Trace, snap, signalState } from "/support/trace.mjs";
import { finalState, recordAgent } from "/support/agent.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const workerUrl = new URL("./agent-worker.mjs", import.meta.url);

window.runScenario = async (name, mode) => {
	const sc = SCENARIOS[name];
	resetTimestamps();
	const tr = new Trace();
	const options = { initialState: { model: MODEL }, ...(sc.options?.(tr, impl) ?? {}) };
	let agent;
	if (mode === "page") {
		agent = new impl.Agent({ ...options, streamFn: scripted(impl, sc.responses, { tr: new Trace() }) });
		if (sc.workerTools) agent.state.tools = [...agent.state.tools, ...sc.workerTools()];
	} else {
		agent = new WorkerAgent({ ...options, worker: () => new Worker(workerUrl, { type: "module" }), workerOptions: { name } });
	}
	if (sc.light) {
		agent.subscribe((ev) => {
			tr.log.push(ev.type);
		});
	} else recordAgent(agent, tr);
	await sc.drive(agent, tr);
	const final = finalState(agent, tr);
	final.tools = final.tools.filter((n) => !sc.workerTools?.().some((t) => t.name === n));
	if (sc.light) {
		final.messages = final.messages.map((m) => JSON.stringify(m).length);
	}
	tr.note("final", final);
	agent.worker?.terminate();
	return tr.result();
};
window.scenarioNames = Object.keys(SCENARIOS);
window.ready = true;
