// The demo's agent worker: the package's worker script serves the WorkerAgent of agent.js (loop, streamProxy
// and wasm in this worker; tools, the approval dialog and listeners stay in the page).
import "pi-agent-wasm/worker-script";
