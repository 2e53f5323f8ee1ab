// pi-agent-wasm/server and httpStore as the README uses them (compiled only against our package).
import { Agent, type Model, type StreamFn } from "pi-agent-wasm";
import { attachSession, httpStore, SessionConflictError, type SessionStore } from "pi-agent-wasm/session";
import { createProxyHandler, createStoreHandler, sessionDatabase, toNodeHandler, type FetchHandler } from "pi-agent-wasm/server";

declare const model: Model<any>;
declare const streamFn: StreamFn;
declare const models: { streamSimple: StreamFn; getModel(provider: string, id: string): Model<any> | undefined };

const authorize = (request: Request) => (request.headers.get("authorization") === "Bearer x" ? "me" : null);

export const POST: FetchHandler = createProxyHandler({
  stream: models,
  models: ["anthropic/claude-sonnet-4-6", model],
  getApiKey: (provider) => (provider === "anthropic" ? "key" : undefined),
  authorize,
  limits: { bodyBytes: 1 << 20, requestMs: 60_000, maxTokens: 4096, streamsPerUser: 2 },
  onUsage: (user, usage, info) => console.log(user.toUpperCase(), usage.totalTokens, info.model.id, info.stopReason),
  origins: ["https://app.example"],
});

// A user object with an id, a models function, a stream function.
export const withObjects = createProxyHandler({
  stream: streamFn,
  models: (requested) => (requested.id === model.id ? model : undefined),
  authorize: async () => ({ id: 42, plan: "pro" as const }),
  onUsage: (user) => console.log(user.plan),
});

export const sessions = createStoreHandler({ authorize, database: sessionDatabase("memory://", { table: "sessions" }) });
export const node = toNodeHandler(sessions);

export async function page(): Promise<void> {
  const store: SessionStore = httpStore("/api/sessions", { headers: async () => ({ authorization: "Bearer x" }) });
  await store.append("s", "text", { length: 0 });
  const agent = new Agent({ initialState: { model }, streamFn });
  await attachSession(agent, { id: "chat", store });
  const error = new SessionConflictError(3);
  const length: number = error.length;
  console.log(length);
}

// @ts-expect-error authorize is required
createProxyHandler({ stream: streamFn, models: [model] });
// @ts-expect-error models is required
createProxyHandler({ stream: streamFn, authorize });
