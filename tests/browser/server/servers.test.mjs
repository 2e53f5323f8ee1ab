// pi-agent-wasm/server where users run it, on Node: the packed package installed into an app, its
// endpoints (createProxyHandler with pi-ai's Anthropic provider, createStoreHandler on PGlite)
// served by plain Node `http` (through toNodeHandler) and by Hono (the Fetch handlers as they
// are), each serving the packed client to headless Chromium for the whole journey (journey.mjs).
// Anthropic's API is a stand-in on 127.0.0.1 (tests/support/fake-anthropic.mjs).
import test from "node:test";
import { startFakeAnthropic } from "../../support/fake-anthropic.mjs";
import { KEY, freePort, journey, launchChromium, packedApp, startProcess } from "./journey.mjs";

test("Node http and Hono serve the proxy and the session store end to end", { timeout: 300_000 }, async (t) => {
	const app = packedApp("servers");
	t.after(() => app.remove());
	const fake = await startFakeAnthropic({ key: KEY });
	t.after(() => fake.close());
	const browser = await launchChromium();
	t.after(() => browser.close());
	for (const [name, script] of [["Node http", "node-server.mjs"], ["Hono", "hono-server.mjs"]]) {
		await t.test(name, async (t) => {
			const port = await freePort();
			const server = await startProcess([script], { cwd: app.dir, env: { PORT: String(port), ANTHROPIC_API_KEY: KEY, PI_TEST_ANTHROPIC_URL: fake.url }, ready: /listening on/ });
			t.after(() => server.close());
			await journey(t, { url: `http://127.0.0.1:${port}`, fake, browser, session: `trip-${script}` });
		});
	}
});
