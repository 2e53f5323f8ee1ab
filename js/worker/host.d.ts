// Types of pi-agent-wasm/worker-host: the worker side of pi-agent-wasm/worker.
import type { AgentOptions, AgentTool, StreamFn } from "../index.js";

/** What runs in the worker: a stream function, tools (added to the main thread's) and hooks. */
export interface WorkerSetup extends Partial<Pick<AgentOptions, "convertToLlm" | "transformContext" | "getApiKey" |
  "onPayload" | "onResponse" | "onProviderStreamEvent" | "beforeToolCall" | "afterToolCall" | "finishTurn" |
  "prepareRequest" | "prepareNextTurn" | "prepareNextTurnWithContext">> {
  streamFn?: StreamFn;
  tools?: AgentTool<any>[];
}

/**
 * Serves the WorkerAgent that created this worker. `setup` (or what it returns for the main thread's
 * `workerOptions`) says what runs in the worker; main-thread hooks of the same name win.
 */
export declare function serveAgent(
  setup?: WorkerSetup | ((workerOptions: any) => WorkerSetup | Promise<WorkerSetup>),
  scope?: { postMessage(message: unknown): void; addEventListener(type: "message", listener: (event: MessageEvent) => void): void },
): void;
