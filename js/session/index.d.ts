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
   * Appends `text` (whole lines) to the log. `options.length`, when the session gives it, is the length of the log
   * (in UTF-16 code units) this writer extends: a store shared by several writers (another browser, another device)
   * refuses a stale append with an Error named "SessionConflictError" whose `length` is the log's length now, and
   * writes nothing.
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
  /** Replaces the log with `text`, atomically if the backend can (to repair a torn tail; `options.length` as in `append`). */
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
  /** Called once with the store's first failure; the session stops writing, the agent keeps working. */
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

export interface Session {
  readonly id: string;
  /** The store held this session and the agent now holds its conversation. */
  readonly restored: boolean;
  /** Restoring cut an answer or a tool call that was in flight. */
  readonly interrupted: boolean;
  /** Characters of a torn or corrupted log tail dropped at the last restore. */
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
  /** Runs the pending calls (through `beforeToolCall` again), adds their results, then `agent.continue()`. */
  resume(options?: { signal?: AbortSignal }): Promise<void>;
  /** Writes what is batched now. */
  flush(): Promise<void>;
  /** Called with the session when `isLeader`, `pendingCalls`, `error` or the followed transcript change. */
  subscribe(listener: (session: Session) => void): () => boolean;
  /** Writes what is batched, detaches from the agent, releases the tab lock. */
  detach(): Promise<void>;
  /** Deletes the log (the agent keeps its state; the next write starts a new log). */
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
