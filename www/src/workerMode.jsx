// "Run the agent in a Worker": the switch and the agent it picks. The mode lives in the URL (?worker=1), so
// switching reloads the page with a fresh agent of the other kind.
import { Agent } from "pi-agent-wasm";
import { WorkerAgent } from "pi-agent-wasm/worker";

export const runsInWorker = () => new URLSearchParams(window.location.search).get("worker") === "1";

/**
 * The demo's agent: in the page with a `streamFn` over streamProxy, or in a Worker where the worker runs
 * streamProxy with the same options. Everything else (tools, beforeToolCall, listeners) is the same object.
 */
export function createAgent({ proxy, ...options }) {
	if (!runsInWorker()) return new Agent({ ...options, streamFn: proxy });
	return new WorkerAgent({
		...options,
		proxy: proxy.options,
		// A function, so a failed worker is replaced by a fresh one at the next prompt.
		worker: () => new Worker(new URL("./agent.worker.js", import.meta.url), { type: "module" }),
	});
}

export function WorkerSwitch({ disabled }) {
	const on = runsInWorker();
	return (
		<label className="picker" title="The loop, streamProxy and the WebAssembly run in a dedicated Worker; tools and dialogs stay in the page">
			<input
				type="checkbox"
				data-testid="worker-switch"
				checked={on}
				disabled={disabled}
				onChange={() => {
					const url = new URL(window.location.href);
					if (on) url.searchParams.delete("worker");
					else url.searchParams.set("worker", "1");
					window.location.assign(url);
				}}
			/>
			<span className="muted">Run the agent in a Worker</span>
		</label>
	);
}
