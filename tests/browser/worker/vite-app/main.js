// Two WorkerAgents: one on the app's worker module, one on the package's worker script named through
// `new URL("pi-agent-wasm/worker-script", import.meta.url)` (streamProxy to a closed port: the run must end
// with streamProxy's network error, which proves the worker loaded and ran it).
import { WorkerAgent } from "pi-agent-wasm/worker";

const model = { id: "m", name: "m", api: "a", provider: "p", baseUrl: "", reasoning: false, input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 };

async function run(agent) {
	const types = [];
	agent.subscribe((e) => types.push(e.type));
	await agent.prompt("hi");
	const last = agent.state.messages.at(-1);
	agent.worker?.terminate();
	return { types, stopReason: last.stopReason, text: last.content[0]?.text, errorMessage: last.errorMessage };
}

window.results = (async () => {
	const own = await run(new WorkerAgent({ initialState: { model }, worker: new Worker(new URL("./agent.worker.js", import.meta.url), { type: "module" }) }));
	let pkgScript;
	try {
		pkgScript = await run(new WorkerAgent({
			initialState: { model },
			worker: new Worker(new URL("pi-agent-wasm/worker-script", import.meta.url), { type: "module" }),
			proxy: { proxyUrl: "http://127.0.0.1:9", authToken: "t" },
		}));
	} catch (e) {
		pkgScript = { thrown: String(e) };
	}
	return { own, pkgScript };
})();
