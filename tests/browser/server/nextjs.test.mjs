// The README's quick start as written, in a fresh Next.js app (App Router, its default build):
// app/api/stream/route.js and app/page.js from the README, and the session store route of its
// "Server" section, with the packed package and pi-ai from the npm registry (the setup of
// tests/browser/bundlers/nextjs.test.mjs, tests/support/next-app.mjs: pinned versions, `next build`,
// `next start` on 127.0.0.1). Anthropic's API is a local stand-in (fake-anthropic.mjs), reached through the
// route's real pi-ai provider. In headless Chromium: the README's page answers a message, and
// client.mjs's page carries the whole journey (journey.mjs) through the README's routes.
import test from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeAnthropic } from "../../support/fake-anthropic.mjs";
import { NEXT_VERSIONS, installAndBuild } from "../../support/next-app.mjs";
import { readmeFiles } from "../../support/readme.mjs";
import { KEY, freePort, journey, launchChromium, packPkg, startProcess } from "./journey.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const VERSIONS = { ...NEXT_VERSIONS, "@earendil-works/pi-ai": "1.4.0", "@electric-sql/pglite": "0.5.17" };

const FILES = {
	"app/layout.js": `export default function RootLayout({ children }) {
  return <html><body>{children}</body></html>;
}
`,
	"app/scenario/page.js": `"use client";
import { useEffect } from "react";
import { start } from "../client.mjs";
export default function Scenario() {
  useEffect(() => {
    const params = new URLSearchParams(location.search);
    start({ token: params.get("token"), session: params.get("session") });
  }, []);
  return <p>scenario</p>;
}
`,
};

test("Next.js: the README's quick start and the session store route, end to end", { timeout: 600_000 }, async (t) => {
	const files = { ...readmeFiles("Quick start"), ...readmeFiles("Server") };
	for (const path of ["app/api/stream/route.js", "app/page.js", "app/api/sessions/[id]/route.js"]) assert.ok(files[path], `README.md shows ${path}`);
	const tmp = mkdtempSync(join(tmpdir(), "pi-next-server-"));
	t.after(() => rmSync(tmp, { recursive: true, force: true }));
	const tarball = packPkg(tmp);
	const app = join(tmp, "app");
	mkdirSync(app);
	writeFileSync(join(app, "package.json"), JSON.stringify({ name: "fresh-next-app", private: true, dependencies: { ...VERSIONS, "pi-agent-wasm": `file:${tarball}` } }, null, 2));
	for (const [path, text] of Object.entries({ ...FILES, ...files })) {
		if (!path.startsWith("app/")) continue;
		mkdirSync(dirname(join(app, path)), { recursive: true });
		writeFileSync(join(app, path), text);
	}
	cpSync(join(HERE, "client.mjs"), join(app, "app/client.mjs"));

	const fake = await startFakeAnthropic({ key: KEY });
	t.after(() => fake.close());
	const env = { NEXT_TELEMETRY_DISABLED: "1", APP_TOKEN: "token-ada", NEXT_PUBLIC_APP_TOKEN: "token-ada", ANTHROPIC_API_KEY: KEY, PI_TEST_ANTHROPIC_URL: fake.url };
	const next = installAndBuild(app, env);
	const port = await freePort();
	const server = await startProcess([next, "start", "-p", String(port), "-H", "127.0.0.1"], { cwd: app, env, ready: /Ready in/ });
	t.after(() => server.close());
	const url = `http://127.0.0.1:${port}`;
	const browser = await launchChromium();
	t.after(() => browser.close());

	await t.test("the README's page answers a message through the README's route", async () => {
		const page = await browser.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(e.message));
		await page.goto(url);
		await page.fill("input", "hello from the quick start");
		await page.click("button");
		await page.waitForSelector("text=assistant: Hello! You said: hello from the quick start");
		assert.deepEqual(errors, []);
		await page.close();
	});

	await t.test("the journey through the README's routes", (t) => journey(t, { url, fake, browser, pagePath: "/scenario" }));
	assert.doesNotMatch(server.output(), new RegExp(KEY));
});
