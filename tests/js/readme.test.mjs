// The documented servers run as written: the Node `http` server (server.mjs) of the README's "Server"
// section and the Express one (express.mjs) of docs/server.md, in an app directory with the packed package, pi-ai's real
// Anthropic provider reaching a local stand-in of Anthropic's API (tests/support/fake-anthropic.mjs).
// Each answers streamProxy (ours, from pkg/) and keeps a session through httpStore. The quick start
// (a Next.js route and page) runs as written in tests/browser/server/nextjs.test.mjs.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startFakeAnthropic } from "../support/fake-anthropic.mjs";
import { readmeFiles } from "../support/readme.mjs";
import { KEY, freePort, packedApp, startProcess } from "../browser/server/journey.mjs";

const { Agent, streamProxy } = await import("../../pkg/index.js");
const { attachSession, httpStore } = await import("../../pkg/session/index.js");

test("the README's Node http server and docs/server.md's Express one, as written", { timeout: 180_000 }, async (t) => {
	const files = { ...readmeFiles("Server"), ...readmeFiles("Handlers", "docs/server.md") };
	const app = packedApp("readme");
	t.after(() => app.remove());
	const fake = await startFakeAnthropic({ key: KEY });
	t.after(() => fake.close());
	for (const file of ["server.mjs", "express.mjs"]) {
		await t.test(file, async () => {
			assert.ok(files[file], `README.md or docs/server.md shows ${file}`);
			// The README's servers listen on PORT when it is set: a free port here, so that test runs at once never collide.
			const port = await freePort();
			writeFileSync(join(app.dir, file), files[file]);
			const server = await startProcess([file], {
				cwd: app.dir,
				env: { APP_TOKEN: "app-token", ANTHROPIC_API_KEY: KEY, PI_TEST_ANTHROPIC_URL: fake.url, PORT: String(port) },
				ready: /$^/, // it prints nothing: ready once it answers
				readyCheck: `http://127.0.0.1:${port}/api/stream`,
			});
			try {
				const proxyUrl = `http://127.0.0.1:${port}`;
				const model = { provider: "anthropic", id: "claude-sonnet-4-6", api: "anthropic-messages" };
				const streamFn = (m, context, options) => streamProxy(m, context, { ...options, proxyUrl, authToken: "app-token" });
				const agent = new Agent({ initialState: { systemPrompt: "Be brief.", model }, streamFn });
				const store = httpStore(`${proxyUrl}/api/sessions`, { headers: { authorization: "Bearer app-token" } });
				const session = await attachSession(agent, { id: "readme", store, tabs: false });
				await agent.prompt("hi");
				await session.flush();
				assert.equal(agent.state.messages.at(-1).content[0].text, "Hello! You said: hi");
				const again = new Agent({ initialState: { model }, streamFn });
				await attachSession(again, { id: "readme", store, tabs: false });
				assert.deepEqual(again.state.messages.map((m) => m.role), ["system", "user", "assistant"]);
				const refused = await streamProxy(model, { messages: [] }, { proxyUrl, authToken: "wrong" }).result();
				assert.match(refused.errorMessage, /^Proxy error: unauthorized/);
				assert.ok(fake.requests.at(-1).key === KEY, "pi-ai found the key in the environment");
			} finally {
				await server.close();
			}
		});
	}
});
