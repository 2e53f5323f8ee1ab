import type { AssistantMessageEventSource, Model, StreamFn, Usage } from "../index.js";
import type { SessionStore } from "../session/index.js";

/** A Fetch handler: what Next.js route handlers, Hono, SvelteKit, Remix, Deno, Bun and Cloudflare Workers take. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * Who is asking: a string or number id, or an object with an `id` (it keys the user's stored sessions and the
 * per-user limits). A falsy value refuses the request with 401; a `Response` is sent as it is (a 403 of the app's).
 */
export type Authorize<User> = (request: Request) => User | null | undefined | false | Response | Promise<User | null | undefined | false | Response>;

/** A user id as `authorize` returns it. */
export type UserId = string | number | { id: string | number };

/** What the endpoints share. */
export interface EndpointOptions<User extends UserId> {
  /** Required, with no open default: who may use the endpoint. Called before the body is read. */
  authorize: Authorize<User>;
  /**
   * Origins whose pages may call the endpoint from another origin (CORS), e.g. `["https://app.example"]`.
   * Default: none (same-origin pages only; a request from another origin is refused with 403).
   */
  origins?: string[];
  /** `Host` values the server answers to (protection against DNS rebinding for servers on a private address). Default: any. */
  hosts?: string[];
  /** Called with an unexpected error (the client gets a 500 "internal error"). Provider errors, keys redacted, go to the client's stream. */
  onError?: (error: unknown, request: Request) => void;
}

/**
 * A pi-ai `Models` collection (`builtinModels()`, `createModels()`), or anything with its `streamSimple`: `getModel`
 * finds the `"provider/id"` names of `models`, and `getAuth` tells the handler which key pi-ai resolved, so that no
 * error shows it.
 */
export interface ModelsCollection {
  streamSimple(model: Model<any>, context: any, options?: any): AssistantMessageEventSource | Promise<AssistantMessageEventSource>;
  getModel?(provider: string, id: string): Model<any> | undefined;
  getAuth?(model: any): Promise<unknown>;
}

export interface ProxyLimits {
  /** Largest request body, in bytes (default 4 MiB): 413 beyond it, counted while reading. */
  bodyBytes?: number;
  /** Time to receive the body (default 30,000 ms): 408 for a body that never ends. */
  bodyMs?: number;
  /** Longest request, from its arrival to the end of the answer (default 10 minutes): the provider request is aborted and the stream ends with an error. */
  requestMs?: number;
  /** The most output tokens a request may ask for (a client's `maxTokens` is capped to it and to the model's). Default: the model's. */
  maxTokens?: number;
  /** Streams a user may have open at once (default 4): 429 beyond. */
  streamsPerUser?: number;
}

/** What a request used, when the provider's stream ended. */
export interface UsageInfo {
  model: Model<any>;
  request: Request;
  stopReason: string | undefined;
}

export interface ProxyHandlerOptions<User extends UserId> extends EndpointOptions<User> {
  /**
   * The models a client may use: pi-ai `Model`s, or `"provider/id"` names of `stream`'s collection; or a function from
   * the client's requested model (untrusted: only its `provider` and `id` are checked) to the server's `Model`. The
   * server's model is used, never the client's `baseUrl`, `headers`, `api` or `compat`.
   */
  models: Array<Model<any> | string> | ((requested: { provider: string; id: string }, request: Request) => Model<any> | undefined | Promise<Model<any> | undefined>);
  /** How a request reaches the provider: a pi-ai `Models` collection, or a stream function. */
  stream: ModelsCollection | StreamFn;
  /** The key for a provider (default: the one pi-ai resolves itself, from the environment). */
  getApiKey?: (provider: string, request: Request) => string | undefined | Promise<string | undefined>;
  limits?: ProxyLimits;
  /** Called once the provider's stream ends, with what the request used (for metering). */
  onUsage?: (user: User, usage: Usage, info: UsageInfo) => void | Promise<void>;
  /** More strings that no error may show (keys the provider resolves itself are found through `stream.getAuth`). */
  secrets?: string[];
}

/**
 * The endpoint `streamProxy` calls (`POST /api/stream`): checks who asks and what, calls the provider with the server's
 * key, and streams the answer in the proxy protocol (`data: <event>` lines without `partial`).
 */
export declare function createProxyHandler<User extends UserId>(options: ProxyHandlerOptions<User>): FetchHandler;

export interface StoreLimits {
  /** Largest write, in bytes (default 16 MiB). */
  bodyBytes?: number;
  /** Time to receive a write's body (default 30,000 ms). */
  bodyMs?: number;
  /** Longest log, in UTF-16 code units (default 64 Mi). */
  logChars?: number;
}

/** A client `sessionDatabase` takes: a PGlite instance, a `pg.Pool` or `pg.Client`, or a PGlite data directory ("memory://" by default). */
export type DatabaseClient = string | { query(sql: string, params?: unknown[]): Promise<{ rows: any[] }> };

export interface StoreHandlerOptions<User extends UserId> extends EndpointOptions<User> {
  /** Where the logs are kept: a `sessionDatabase(…)`, or what it takes. Default: PGlite in memory (a development default). */
  database?: SessionDatabase | DatabaseClient;
  limits?: StoreLimits;
}

/** The endpoint `httpStore` calls: `GET`, `POST`, `PUT`, `DELETE` of `<mount>/:id`, each user's own sessions. */
export declare function createStoreHandler<User extends UserId>(options: StoreHandlerOptions<User>): FetchHandler;

/** Session logs in Postgres (PGlite or a server). */
export interface SessionDatabase {
  /** The log's text from character `from` on, and its length. */
  read(owner: string, id: string, from?: number): Promise<{ text: string; length: number }>;
  /** Appends; with `expected`, only if the log has that length. */
  append(owner: string, id: string, text: string, expected?: number): Promise<{ length: number } | { conflict: number }>;
  /** Replaces; with `expected`, only if the log has that length. */
  replace(owner: string, id: string, text: string, expected?: number): Promise<{ length: number } | { conflict: number }>;
  clear(owner: string, id: string): Promise<void>;
  /** A `SessionStore` of `owner`'s sessions (for `attachSession` on the server). */
  forOwner(owner: string): SessionStore;
  /** Creates the tables now (otherwise at the first use). */
  ready(): Promise<void>;
  /** Closes a PGlite the database opened itself. */
  close(): Promise<void>;
}

/** Session logs in PGlite (the default: in memory, or a data directory) or a Postgres server through `pg`. */
export declare function sessionDatabase(client?: DatabaseClient, options?: { table?: string }): SessionDatabase;

/**
 * Node's `(req, res)` for a Fetch handler: `http.createServer(toNodeHandler(handler))`, or Express's
 * `app.post("/api/stream", toNodeHandler(handler))` (typed loosely, so the declaration needs no @types/node).
 */
export declare function toNodeHandler(handler: FetchHandler): (req: any, res: any, next?: (error?: unknown) => void) => Promise<void>;

/** A pi-ai `AssistantMessageEvent` as the proxy protocol sends it (without `partial`), or undefined. */
export declare function toProxyEvent(event: unknown): object | undefined;
