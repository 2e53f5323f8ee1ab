import type { Agent, AgentTool, BeforeToolCallContext, BeforeToolCallResult, StreamFn } from "../index.js";

/** A replay log (JSON). Opaque apart from its version fields. */
export interface ReplayLog {
  pi: "replay";
  v: 1;
  tools: unknown[];
  requests: unknown[];
  calls: unknown[];
  decisions: Record<string, unknown>;
  inputs: unknown[];
  /** The transcript the first recorded run started from. */
  initial?: unknown[];
}

export interface Recorder {
  /** Records everything `agent` does from now on: requests, tools, approvals, inputs. */
  attach<A extends Agent>(agent: A): A;
  /** Wraps a stream function to record each request and its events. */
  streamFn(inner: StreamFn): StreamFn;
  /** Wraps tools to record each call, its updates and its result. */
  tools(tools: readonly AgentTool<any>[]): AgentTool<any>[];
  /** The log so far. */
  log(): ReplayLog;
  /** The log as JSON text. */
  export(): string;
}

export declare function createRecorder(options?: { now?: () => number }): Recorder;

export interface ReplayOptions {
  /** `"instant"` (default): full speed; `"recorded"`: the recorded delays, divided by `speed`. */
  timing?: "instant" | "recorded";
  speed?: number;
  /** Called once when the replay diverges from the log. */
  onDivergence?: (error: ReplayDivergenceError) => void;
}

export interface Replay {
  /** Answers each request from the log; a different request ends with an error naming the first difference. */
  readonly streamFn: StreamFn;
  /** Stand-ins that return the recorded results. */
  readonly tools: AgentTool<any>[];
  /** Returns the recorded approval decisions. */
  beforeToolCall(context: BeforeToolCallContext, signal?: AbortSignal): Promise<BeforeToolCallResult | undefined>;
  /** Sets the agent's stream function, tools and (when recorded) `beforeToolCall`. */
  attach<A extends Agent>(agent: A): A;
  /** Attaches and repeats the recorded inputs; rejects with the divergence if there is one. */
  play(agent: Agent): Promise<void>;
  readonly divergence: ReplayDivergenceError | undefined;
}

export declare function createReplay(log: ReplayLog | string, options?: ReplayOptions): Replay;
/** Validates a log; throws `ReplayLogError` for another version. */
export declare function readReplayLog(log: ReplayLog | string): ReplayLog;
export declare const REPLAY_LOG_VERSION: 1;
export declare class ReplayLogError extends Error {}
export declare class ReplayDivergenceError extends Error {
  /** Index of the request that diverged (undefined for a tool call). */
  readonly request: number | undefined;
}
