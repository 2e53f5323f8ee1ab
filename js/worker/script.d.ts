// pi-agent-wasm/worker-script: a worker module that serves a WorkerAgent (no exports).
export {};
