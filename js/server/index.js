// pi-agent-wasm/server: the server half of the package, plain JavaScript (no WebAssembly).
//   createProxyHandler  the endpoint `streamProxy` calls (POST /api/stream): the provider's key
//                       stays on the server, the answer streams back in the proxy protocol
//   createStoreHandler  the endpoint `httpStore` calls: session logs in Postgres, per user
//   sessionDatabase     those logs in PGlite or a Postgres server, also as a SessionStore
//   toNodeHandler       either handler for Node's `http`, Express and the like
// Each handler is a Fetch handler, `(request: Request) => Promise<Response>`: a Next.js route
// handler, Hono, SvelteKit, Remix, Deno, Bun and Cloudflare Workers take it as it is.
export { createProxyHandler } from "./proxy.js";
export { createStoreHandler } from "./store.js";
export { sessionDatabase } from "./database.js";
export { toNodeHandler } from "./node.js";
export { toProxyEvent } from "./proxy-events.js";
