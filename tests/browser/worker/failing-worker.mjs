// A worker for the failure tests: `workerOptions.mode` picks what goes wrong.
import * as impl from "/pkg/index.js";
import { serveAgent } from "/pkg/worker/host.js";
import { scripted, call, text } from "/support/scripted.mjs";

// Messages that are not the protocol's, which the WorkerAgent must ignore.
self.postMessage({ hello: "not for the agent" });
self.postMessage({ "pi-agent-wasm/worker": { op: "done", id: 12345, ok: true } });

serveAgent(({ mode }) => {
	const responses = {
		crash: [{ content: [call("c1", "crash", {})] }],
		hang: [{ content: [text("waiting", ["wait", "ing"])], hang: true, honourSignal: false, timing: "micro" }],
		ok: [{ content: [text("fine")] }],
		throwSetup: null,
	}[mode];
	if (responses === null) throw new Error("setup failed");
	return {
		streamFn: scripted(impl, responses ?? [{ content: [text("fine")] }]),
		tools: [
			{
				name: "crash",
				label: "Crash",
				description: "throws outside any promise, then never settles",
				parameters: { type: "object", properties: {} },
				execute: () => {
					setTimeout(() => {
						throw new Error("the worker blew up");
					});
					return new Promise(() => {});
				},
			},
		],
	};
});
