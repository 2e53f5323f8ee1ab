import type { Agent, AgentMessage, AgentToolCall, AssistantMessage } from "../index.js";

/**
 * Where a session's log lives. A log is text that only grows: `append` adds to its end,
 * `load` returns everything appended so far (a torn last write is fine: the reader drops it).
 * Implement it for your own backend (a server, OPFS, a file in Node).
 */
export interface SessionStore {
  /** The log's text, or "" when there is none. */
  load(id: string): Promise<string> | string;
  /**
   * Appends `text` (whole records) to the log. `options.length`, when the session gives it, is the length of the log
   * (in UTF-16 code units) this writer extends: the characters it read, plus those it wrote since. A store shared by
   * several writers (another browser, another device) refuses a stale append with an Error named "SessionConflictError"
   * whose `length` is the log's length now, and writes nothing.
   */
  append(id: string, text: string, options?: { length?: number }): Promise<void> | void;
  /** Deletes the log. */
  clear(id: string): Promise<void> | void;
  /**
   * The log's text after its first `from` characters ("" when it has no more). Optional: a tab that follows another
   * tab's session reads only what was appended since its last read with it, and the whole log again without it.
   */
  loadFrom?(id: string, from: number): Promise<string> | string;
  /**
   * True when other browsers or devices write the same logs (`httpStore`): when its page is shown again, an idle
   * session reads what they appended meanwhile and shows it.
   */
  shared?: boolean;
  /**
   * Replaces the log with `text`, atomically if the backend can (to repair a damaged log, and by `clear()`);
   * `options.length` as in `append` (none for `clear()`).
   */
  replace?(id: string, text: string, options?: { length?: number }): Promise<void> | void;
}

/** Sessions in memory (tests, Node). */
export declare function memoryStore(): SessionStore;
/** Sessions in IndexedDB (the default in browsers); each write adds rows of at most 64,000 characters (32,000 when the text has one above U+00FF). */
export declare function indexedDBStore(options?: { name?: string }): SessionStore;

export interface SessionOptions {
  /** The session's key in the store. */
  id: string;
  /** Default: `indexedDBStore()` where IndexedDB exists, else `memoryStore()`. */
  store?: SessionStore;
  /** Longest time a change waits in memory before it is written (default 100 ms): the write waits for an idle moment within it. */
  flushMs?: number;
  /**
   * Called once with the store's first failure (the session stops writing, the agent keeps working), and with a
   * `SessionLogError` when restoring finds records missing or damaged in the middle of the log (what precedes them is
   * restored and the log repaired to it; the session keeps writing).
   */
  onError?: (error: Error) => void;
  /** `false`: no Web Locks / BroadcastChannel coordination between tabs. */
  tabs?: boolean;
}

/** A restored tool call that still has to run. */
export interface PendingToolCall {
  toolCall: AgentToolCall;
  assistantMessage: AssistantMessage;
  /** It was waiting for approval in `beforeToolCall` (which `resume()` calls again). */
  approval: boolean;
}

/** A message of the transcript shown that has other versions. */
export interface BranchPoint {
  /** Its index in `agent.state.messages`. */
  readonly index: number;
  /** Which version is shown, from 0 (the oldest). */
  readonly version: number;
  /** How many versions there are. */
  readonly count: number;
}

/**
 * The versions of a session's conversation. Editing a sent message or regenerating an answer starts a new
 * version from that point and keeps the earlier one; the transcript the agent holds is one path through them.
 * Versions are written to the session's log, so they survive a reload and every tab sees them.
 */
export interface Branches {
  /** Where the transcript shown forks, in order. The same array until it changes. */
  readonly points: readonly BranchPoint[];
  /** The same as `points`, for `useSyncExternalStore` and stores. */
  getSnapshot(): readonly BranchPoint[];
  /** The fork point at message `index`, if the transcript forks there. */
  at(index: number): BranchPoint | undefined;
  /** Calls `listener` when the fork points change. */
  subscribe(listener: (points: readonly BranchPoint[]) => void): () => boolean;
  /** Shows version `version` of the message at `index`, with what followed it; the version shown now is kept. */
  switchTo(index: number, version: number): Promise<void>;
  /**
   * Replaces the user message at `index` with `message` (a text becomes a user message) and runs the agent from
   * there (`agent.prompt`); the earlier version, with everything after it, is kept. Resolves when the run ends.
   */
  edit(index: number, message: AgentMessage | string): Promise<void>;
  /** Runs the assistant answer at `index` again (`agent.continue`); the earlier answer and what followed it are kept. */
  regenerate(index: number): Promise<void>;
}

export interface Session {
  /** The versions of the conversation: where the transcript forks, and a way to edit, regenerate and switch. */
  readonly branches: Branches;
  readonly id: string;
  /** The store held records of this session and the agent now holds what they say. */
  readonly restored: boolean;
  /** Restoring cut an answer or a tool call that was in flight. */
  readonly interrupted: boolean;
  /** Characters dropped at the last restore: a torn tail, or all that followed records missing or damaged. */
  readonly dropped: number;
  /** Restored calls to run, in source order: waiting for approval, never started, or `replay: "safe"`. */
  readonly pendingCalls: readonly PendingToolCall[];
  /** The pending calls that were waiting in `beforeToolCall`. */
  readonly pendingApprovals: readonly PendingToolCall[];
  /** True in the tab that runs the session (Web Locks); others follow it and take over when it closes. */
  readonly isLeader: boolean;
  /** In a following tab, the answer the leading tab is streaming. */
  readonly remoteStreamingMessage: AgentMessage | undefined;
  /** The store's first failure. */
  readonly error: Error | undefined;
  /**
   * Runs the pending calls (through `beforeToolCall` again), adds their results, then `agent.continue()`.
   * While calls wait, `agent.prompt()` first gives each an `isError` result saying the user moved on
   * (`MOVED_ON_APPROVAL`, `MOVED_ON_CALL`; a call `resume()` asks about again is cancelled: its hook's signal
   * aborts), and `agent.continue()` runs them as `resume()` does. `agent.abort()` ends a `resume()` that runs.
   */
  resume(options?: { signal?: AbortSignal }): Promise<void>;
  /** Writes what is batched now. */
  flush(): Promise<void>;
  /** Called with the session when `isLeader`, `pendingCalls`, `error` or the followed transcript change. */
  subscribe(listener: (session: Session) => void): () => boolean;
  /** Writes what is batched, detaches from the agent, releases the tab lock. */
  detach(): Promise<void>;
  /**
   * Empties the log. The agent keeps its state, and its next change writes its whole transcript again; a restore before
   * that leaves the agent as it was configured.
   */
  clear(): Promise<void>;
}

/**
 * Restores `agent` from the store and keeps it there. Resolves once the agent holds the restored conversation and the
 * store holds what the agent holds. Attach before the agent's first run (and after its tools are set).
 * `agent` is an `Agent` or a `WorkerAgent` (pi-agent-wasm/worker): the session lives in the page either way.
 */
export declare function attachSession(agent: Agent, options: SessionOptions): Promise<Session>;

export { httpStore, SessionConflictError, type HttpStoreOptions } from "./stores/http.js";

/** A log of another version. */
export declare class SessionLogError extends Error {}
/** The `errorMessage` of an answer cut off by a reload. */
export declare const INTERRUPTED_STREAM: string;
/** The text of the result of a tool call cut off by a reload. */
export declare const INTERRUPTED_TOOL: string;
/** The text of the result of a restored call waiting for approval when the app prompted instead. */
export declare const MOVED_ON_APPROVAL: string;
/** The text of the result of a restored call that had not run when the app prompted instead. */
export declare const MOVED_ON_CALL: string;
