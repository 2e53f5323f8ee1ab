import type { SessionStore } from "../index.js";

export interface HttpStoreOptions {
  /** Headers of every request, such as the user's credentials: an object, or a function that returns one (or a promise of one). */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** The requests' credentials mode (default "same-origin": the page's cookies go with them). */
  credentials?: RequestCredentials;
}

/**
 * A session store on the app's server (`createStoreHandler` of `pi-agent-wasm/server`), at
 * `${url}/${encodeURIComponent(id)}`: the session follows its user to another browser or device.
 * Appends and replaces name the log's length they extend; a stale one rejects with a
 * `SessionConflictError`, and the session catches up with the other writer.
 */
export declare function httpStore(url: string | URL, options?: HttpStoreOptions): SessionStore;

/** A store refused an append or a replace: another writer extended the log, which is `length` characters long now. */
export declare class SessionConflictError extends Error {
  constructor(length: number, message?: string);
  readonly name: "SessionConflictError";
  /** The log's length now, in UTF-16 code units. */
  readonly length: number;
}
