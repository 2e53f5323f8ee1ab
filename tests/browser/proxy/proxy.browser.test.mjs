// streamProxy in headless Chromium (playwright-core driving Debian's /usr/bin/chromium; nothing is
// downloaded): the page imports pkg/index.js (top-level-await init, zero config) and runs streamProxy in
// the page and in a dedicated module Worker, against the scripted SSE server on another port (CORS
// preflight). Checked: a text stream, a tool-call stream, an abort mid-stream. Expected results come from the
// reference streamProxy run in Node on the same scripts (tests/js/proxy/harness.mjs).
//
// Skipped when pkg/ is not built. PI_BROWSER_REFERENCE=1 also runs the reference, bundled with esbuild,
// in the browser (a control for the harness itself). PI_BROWSER_PKG_DIR=<dir> tests another build of pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startSseServer } from "../../support/sse-server.mjs";
import { runProxy, MODEL, CONTEXT, E, sseScript } from "../../js/proxy/harness.mjs";
import { withoutSnapshot, describeDiff } from "../../js/proxy/normalize.mjs";
import { streamProxy as referenceStreamProxy } from "@earendil-works/pi-agent-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
// PI_BROWSER_PKG_DIR points at another build (e.g. a frozen copy while pkg/ is being rebuilt).
const PKG_DIR = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");
const HERE = fileURLToPath(new URL("./", import.meta.url));
const JS_PROXY = fileURLToPath(new URL("../../js/proxy/", import.meta.url));



/** The reference streamProxy bundled for the browser (pi-ai reduced to the two modules proxy.js uses). */
async function bundleReference(outDir) {
	const esbuild = await import("esbuild");
	const aiDist = join(REPO, "node_modules/@earendil-works/pi-ai/dist/utils/");
	const shim = `export { createAssistantMessageEventStream } from ${JSON.stringify(aiDist + "event-stream.js")};\nexport { parseStreamingJson } from ${JSON.stringify(aiDist + "json-parse.js")};\n`;
	await esbuild.build({
		entryPoints: [join(REPO, "node_modules/@earendil-works/pi-agent-core/dist/proxy.js")],
		bundle: true,
		format: "esm",
		platform: "browser",
		outfile: join(outDir, "index.js"),
		logLevel: "silent",
		plugins: [
			{
				name: "pi-ai-shim",
				setup(b) {
					b.onResolve({ filter: /^@earendil-works\/pi-ai$/ }, () => ({ path: "pi-ai-shim", namespace: "shim" }));
					b.onLoad({ filter: /.*/, namespace: "shim" }, () => ({ contents: shim, resolveDir: REPO, loader: "js" }));
				},
			},
		],
	});
}

// ----- scenarios (each on its own path of the SSE server) ---------------------------------------------------

const SCENARIOS = [
	{
		name: "text",
		path: "/text",
		script: sseScript([
			E.start(),
			E.thinkingStart(0),
			E.thinkingDelta(0, "thinking 🤔"),
			E.thinkingEnd(0, "sig-th"),
			E.textStart(1),
			E.textDelta(1, "Hello, "),
			E.textDelta(1, "日本語 🦀 world"),
			E.textEnd(1, "sig-tx"),
			{ type: "mystery" },
			E.done("stop", undefined, { providerThinkingLevel: "high" }),
		], { eol: "\r\n" }),
		check(r) {
			assert.equal(r.final.content[1].text, "Hello, 日本語 🦀 world");
			assert.equal(r.final.stopReason, "stop");
			assert.deepEqual(r.warnings, [["Unhandled proxy event type: mystery"]]);
		},
	},
	{
		name: "tool call",
		path: "/tool",
		// Random 1..9-byte writes: chunk boundaries inside lines and UTF-8 characters.
		script: {
			status: 200,
			chunking: { random: 7, max: 9 },
			delayMs: 1,
			lines: [
				E.start(),
				E.toolStart(0, "call_1", "get_weather"),
				E.toolDelta(0, '{"city": "Zür'),
				E.toolDelta(0, 'ich", "days": [1, 2'),
				E.toolDelta(0, "]}"),
				E.toolEnd(0, { type: "toolCall", id: "call_1", name: "get_weather", arguments: { city: "Zürich", days: [1, 2] }, thoughtSignature: "ts-1" }),
				E.done("toolUse"),
			],
		},
		check(r) {
			assert.deepEqual(r.final.content, [
				{ type: "toolCall", id: "call_1", name: "get_weather", arguments: { city: "Zürich", days: [1, 2] }, thoughtSignature: "ts-1" },
			]);
			assert.equal(r.final.stopReason, "toolUse");
		},
	},
	{
		name: "abort mid-stream",
		path: "/abort",
		script: sseScript([E.start(), E.textStart(0), E.textDelta(0, "one "), E.textDelta(0, "two"), E.textEnd(0), E.done("stop")], {
			delayMs: 60,
			end: "hang",
		}),
		abortAfterEvents: 3,
		check(r) {
			assert.deepEqual(r.events.map((e) => e.type), ["start", "text_start", "text_delta", "error"]);
			assert.equal(r.final.stopReason, "aborted");
			assert.equal(r.final.errorMessage, "Request aborted by user");
		},
	},
];

const OPTIONS = { authToken: "browser-tok", temperature: 0.1, sessionId: "s-browser", metadata: { ui: "chromium" } };

test("streamProxy in headless Chromium: page and dedicated module Worker", { timeout: 180000 }, async (t) => {
	const targets = [];
	if (existsSync(join(PKG_DIR, "index.js"))) targets.push({ name: "ours", implPath: "/pkg/index.js" });
	const withReference = process.env.PI_BROWSER_REFERENCE === "1";
	if (targets.length === 0 && !withReference) return t.skip("pkg/ not built");

	// Expected: the reference in Node, same scripts.
	const expected = {};
	for (const sc of SCENARIOS) {
		const run = await runProxy(
			{ name: "reference", streamProxy: referenceStreamProxy },
			{ script: sc.script, options: OPTIONS, ...(sc.abortAfterEvents ? { abort: { afterEvents: sc.abortAfterEvents } } : {}) },
		);
		sc.check({ events: run.events, final: run.settled, warnings: run.warnings });
		expected[sc.name] = { events: run.events.map(withoutSnapshot), final: run.settled, warnings: run.warnings, rawBody: run.request.rawBody };
	}

	const cleanups = [];
	try {
		const mounts = { "/pkg/": PKG_DIR, "/t/": HERE, "/js-proxy/": JS_PROXY };
		if (withReference) {
			const dir = mkdtempSync(join(tmpdir(), "pi-proxy-ref-"));
			cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
			await bundleReference(dir);
			writeFileSync(join(dir, "README.txt"), "reference streamProxy bundled by proxy.browser.test.mjs\n");
			mounts["/ref/"] = dir;
			targets.push({ name: "reference (esbuild bundle)", implPath: "/ref/index.js" });
		}
		const statics = await startStaticServer(mounts);
		cleanups.push(() => statics.close());
		const routes = Object.fromEntries(SCENARIOS.map((sc) => [`${sc.path}/api/stream`, sc.script]));
		const sse = await startSseServer(routes);
		cleanups.push(() => sse.close());

		const { chromium } = await import("playwright-core");
		const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 30000 });
		cleanups.push(() => browser.close());
		const page = await browser.newPage();
		page.setDefaultTimeout(30000);
		const pageErrors = [];
		page.on("pageerror", (e) => pageErrors.push(String(e)));
		page.on("console", (m) => {
			if (m.type() === "error") pageErrors.push(`console.error: ${m.text()}`);
		});
		await page.goto(`${statics.url}/t/page.html`);
		await page.waitForFunction(() => window.__ready === true);

		for (const target of targets) {
			const implUrl = `${statics.url}${target.implPath}`;
			const exportType = await page.evaluate((u) => window.exportType(u), implUrl);
			if (exportType !== "function") {
				await t.test(`${target.name}: exports streamProxy`, () => assert.fail(`${target.implPath} exports streamProxy as ${exportType}`));
				continue;
			}
			for (const where of ["page", "worker"]) {
				for (const sc of SCENARIOS) {
					await t.test(`${target.name} in ${where}: ${sc.name}`, async () => {
						const before = sse.requests.length;
						const payload = {
							model: MODEL,
							context: CONTEXT,
							options: { ...OPTIONS, proxyUrl: `${sse.url}${sc.path}` },
							abortAfterEvents: sc.abortAfterEvents,
							timeoutMs: 10000,
						};
						const r = await page.evaluate(
							([fn, u, p]) => (fn === "page" ? window.runInPage(u, p) : window.runInWorker(u, p)),
							[where, implUrl, payload],
						);
						assert.equal(r.scope, where === "page" ? "Window" : "DedicatedWorkerGlobalScope");
						sc.check(r);
						const exp = expected[sc.name];
						const msg = describeDiff({ events: exp.events, final: exp.final, warnings: exp.warnings }, { events: r.events, final: r.final, warnings: r.warnings });
						if (msg) assert.fail(`vs the reference in Node: ${msg}`);
						// The request, as the SSE server saw it: a CORS preflight, then the POST.
						await sse.settled();
						const mine = sse.requests.slice(before);
						const post = mine.find((q) => q.method === "POST");
						assert.ok(post, "the POST reached the server");
						assert.equal(post.path, `${sc.path}/api/stream`);
						assert.equal(post.headers.authorization, "Bearer browser-tok");
						assert.equal(post.headers["content-type"], "application/json");
						assert.equal(post.rawBody, exp.rawBody);
						assert.ok(mine.some((q) => q.method === "OPTIONS"), "cross-origin POST with JSON + Authorization is preflighted");
						if (sc.abortAfterEvents) assert.equal(post.clientClosed, true, "abort closes the connection");
					});
				}
			}
		}
		await t.test("no page errors", () => assert.deepEqual(pageErrors, []));
	} finally {
		for (const c of cleanups.reverse()) {
			try {
				await c();
			} catch {
				// keep closing the rest
			}
		}
	}
});
