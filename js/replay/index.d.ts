import type { Agent, AgentTool, BeforeToolCallContext, BeforeToolCallResult, StreamFn } from "../index.js";

/**
 * A replay log (JSON): each request with the events the loop read, each tool call and
 * `beforeToolCall` decision with its outcome, the user's inputs, and `steps`, the order in which
 * the agent saw all of it. Opaque apart from its version fields; `readReplayLog` checks the rest.
 */
export interface ReplayLog {
  pi: "replay";
  v: 2;
  /** The recorded agent's settings when the recorder was attached (playback applies them). */
  agent?: { model?: unknown; thinkingLevel?: string; steeringMode?: string; followUpMode?: string; toolExecution?: string };
  /** Set when the log was taken while a run was going on: playback stops where it ends. */
  running?: boolean;
  tools: unknown[];
  /** The transcript when the recorder was attached (playback starts there). */
  initial?: unknown[];
  requests: unknown[];
  calls: unknown[];
  decisions: unknown[];
  inputs: unknown[];
  steps: unknown[];
}

export interface Recorder {
  /**
   * Records everything `agent` does from now on: its requests and the stream items the loop read,
   * tool calls, `beforeToolCall` decisions, inputs (prompt, steer, followUp, abort, continue, the
   * queue methods, reset, and the transcript, model and tools the app sets between runs), and the
   * order of it all. A stream function, tools or hook set later are recorded too. Works with an
   * `Agent` and a `WorkerAgent`; a recorder records one agent.
   */
  attach<A extends object>(agent: A): A;
  /** Wraps a stream function to record each request and the stream items the loop reads. */
  streamFn(inner: StreamFn): StreamFn;
  /** Wraps tools to record each call, its updates and its outcome. */
  tools(tools: readonly AgentTool<any>[]): AgentTool<any>[];
  /** A copy of the log so far. */
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
  /**
   * How long `play()` waits for the agent to take its next recorded step before it reports the
   * replay as diverged (the agent waits on something the log never had). Default 10,000 ms.
   */
  stallMs?: number;
}

export interface Replay {
  /** Answers each request from the log; a different request ends with an error naming the first difference. */
  readonly streamFn: StreamFn;
  /** Stand-ins that give the recorded outcomes, whatever their abort signal does. */
  readonly tools: AgentTool<any>[];
  /** Returns the recorded approval decisions. */
  beforeToolCall(context: BeforeToolCallContext, signal?: AbortSignal): Promise<BeforeToolCallResult | undefined> | BeforeToolCallResult | undefined;
  /** Sets the agent's stream function, tools and (when recorded) `beforeToolCall`; each answers as soon as it is asked. */
  attach<A extends object>(agent: A): A;
  /**
   * Plays the whole log on `agent` (an `Agent` or a `WorkerAgent`): sets its stream function,
   * tools, hooks, settings and transcript, makes the recorded inputs and the world's answers in
   * the recorded order, and resolves once the agent is idle after the last step. Rejects with the
   * `ReplayDivergenceError` when the agent goes another way. A replay plays once.
   */
  play(agent: object): Promise<void>;
  readonly divergence: ReplayDivergenceError | undefined;
}

export declare function createReplay(log: ReplayLog | string, options?: ReplayOptions): Replay;
/** Reads a log (its JSON text or the object), checking all of it; throws a `ReplayLogError` naming the first bad field. */
export declare function readReplayLog(log: ReplayLog | string): ReplayLog;
export declare const REPLAY_LOG_VERSION: 2;
export declare class ReplayLogError extends Error {
  /** Where in the log the first bad field is, e.g. `requests[1].events[0][1]` (empty for text that is not JSON). */
  readonly path: string;
}
export declare class ReplayDivergenceError extends Error {
  /** The number of the request the replay was at, counted from 1 as the message says; `undefined` before the first. */
  readonly request: number | undefined;
}
