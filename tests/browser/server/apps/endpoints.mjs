// The two endpoints of the test servers, as an app writes them: the proxy for streamProxy (pi-ai's
// Anthropic provider, the key from the environment) and the session store (PGlite, in memory).
// Every user of the test has a token; both endpoints ask authorize() who is calling.
import { builtinModels } from "@earendil-works/pi-ai/providers/all";
import { createProxyHandler, createStoreHandler } from "pi-agent-wasm/server";

const USERS = { "token-ada": "ada", "token-bob": "bob" };
const authorize = (request) => USERS[(request.headers.get("authorization") ?? "").replace(/^Bearer /, "")] ?? null;

const models = builtinModels();
export const proxy = createProxyHandler({
	stream: models,
	models: ["anthropic/claude-sonnet-4-6"],
	getApiKey: () => process.env.ANTHROPIC_API_KEY,
	authorize,
});
export const sessions = createStoreHandler({ authorize });
