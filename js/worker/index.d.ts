// Types of pi-agent-wasm/worker: the Agent API with the agent in a dedicated module Worker.
import type { Agent, AgentOptions, AgentMessage, ProxyStreamOptions } from "../index.js";

export interface WorkerAgentOptions extends Omit<AgentOptions, "streamFn"> {
  /**
   * The worker: a module Worker running `pi-agent-wasm/worker-script` (or a module of the app's that calls
   * `serveAgent`), or a function that creates one. With a function, a run after a failed or terminated
   * worker starts a fresh one.
   */
  worker: Worker | (() => Worker);
  /** The worker streams every request through `streamProxy` with these options (merged over the loop's). */
  proxy?: Omit<ProxyStreamOptions, "signal">;
  /** Structured-cloneable data handed to the worker module's `serveAgent` setup function. */
  workerOptions?: unknown;
  /** A stream function cannot cross to the worker: use `proxy` or register one with `serveAgent`. */
  streamFn?: never;
}

/** The Agent API, the agent in a Worker (see the README's "Workers"). */
export interface WorkerAgent extends Agent {
  /** Ends the worker; a running run ends as a failed run (an assistant error message, `agent_end`). */
  terminate(): void;
  /** The Worker in use: a new one after a failure when `worker` is a function. */
  readonly worker: Worker | undefined;
}
export declare const WorkerAgent: {
  new (options: WorkerAgentOptions): WorkerAgent;
  prototype: WorkerAgent;
};

/** The default `convertToLlm` (which runs in the worker: a WorkerAgent with it makes no call for it). */
export declare function defaultConvertToLlm(messages: AgentMessage[]): AgentMessage[];
