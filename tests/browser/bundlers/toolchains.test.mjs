// The packed package in fresh apps, each toolchain with its default configuration: `npm pack` of pkg/, one
// temporary app that installs it (and the pinned toolchains) from the npm registry, then per toolchain a
// build (or a dev server) and one prompt with a tool, in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core) or in Node:
//   - Vite 8: `vite build` (page and a module Worker, which Vite builds as iife), and the dev server;
//   - webpack 5 (`webpack` with no config: src/index.js -> dist/main.js, page and a module Worker);
//   - Rollup with @rollup/plugin-node-resolve, and esbuild `--bundle --format=esm` (neither copies the
//     .wasm asset: the package's default export condition gives them inline.js);
//   - a plain <script type="module"> page with an import map;
//   - Node ESM `import` and CommonJS `require()`.
// Then the failure paths in Chromium: a .wasm answered with 404 or with an HTML page, and a
// Content-Security-Policy without 'wasm-unsafe-eval', reject `ready` with an error naming the URL and the
// reason, and `prompt()` with the same error.
//
// The scenario (src/scenario.js) builds the Agent at import, before the module is ready, and checks that
// the synchronous members work then. Skipped when pkg/ is not built. PI_BROWSER_PKG_DIR=<dir> tests
// another build of pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { EXPECTED, SCENARIO } from "./scenario.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG_DIR = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");

// Pinned toolchains of the test app.
const TOOLS = {
  vite: "8.4.0",
  webpack: "5.113.0",
  "webpack-cli": "7.3.1",
  rollup: "4.68.8",
  "@rollup/plugin-node-resolve": "16.0.3",
  esbuild: "0.28.2",
};

const FILES = {
  "src/scenario.js": `${SCENARIO}\nexport { run };\n`,
  "src/scenario.cjs": `${SCENARIO}\nmodule.exports = { run };\n`,
  // Main thread only (Rollup and esbuild do not bundle workers).
  "src/app.js": `import * as pkg from "pi-agent-wasm";
import { run } from "./scenario.js";
run(pkg).then((main) => (window.__result = { main }), (e) => (window.__result = { error: String(e && e.stack || e) }));
`,
  // Main thread and a module Worker (Vite, webpack).
  "src/index.js": `import * as pkg from "pi-agent-wasm";
import { run } from "./scenario.js";
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const fromWorker = new Promise((resolve) => {
  worker.onmessage = (e) => resolve(e.data);
  worker.onerror = (e) => resolve({ error: "worker: " + (e.message || "failed to load") });
});
Promise.all([run(pkg), fromWorker]).then(
  ([main, worker]) => (window.__result = { main, worker }),
  (e) => (window.__result = { error: String(e && e.stack || e) }),
);
`,
  "src/worker.js": `import * as pkg from "pi-agent-wasm";
import { run } from "./scenario.js";
run(pkg).then((r) => postMessage(r), (e) => postMessage({ error: String(e && e.stack || e) }));
`,
  "index.html": `<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body>
<script type="module" src="/src/index.js"></script></body></html>
`,
};

// A page with a one-entry import map over the installed package.
const importMapPage = (module) => `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "pi-agent-wasm": "/node_modules/pi-agent-wasm/index.js" } }</script>
</head><body><script type="module">${module}</script></body></html>
`;
const FAILURE_PAGE = importMapPage(`
import { Agent, ready } from "pi-agent-wasm";
const agent = new Agent({ streamFn: () => { throw new Error("not reached"); } });
const readyError = await ready.then(() => null, (e) => e);
const promptError = await agent.prompt("hello").then(() => null, (e) => e);
const late = await new Agent({ streamFn() {} }).prompt("again").then(() => null, (e) => e);
window.__result = { message: readyError?.message, isError: readyError instanceof Error,
  samePrompt: promptError === readyError, sameLate: late === readyError };
`);

// A page whose .wasm requests are dropped at first (the server closes their connection): it waits for ready,
// then runs an agent.
const DROPPED_PAGE = importMapPage(`
import { Agent, ready, createAssistantMessageEventStream } from "pi-agent-wasm";
const readyError = await ready.then(() => null, (e) => e.message);
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const streamFn = () => {
  const stream = createAssistantMessageEventStream();
  const message = { role: "assistant", content: [{ type: "text", text: "ok" }], api: "a", provider: "p", model: "m", usage, stopReason: "stop", timestamp: Date.now() };
  setTimeout(() => stream.push({ type: "done", reason: "stop", message }));
  return stream;
};
const agent = new Agent({ streamFn });
await agent.prompt("hello").catch(() => {});
window.__result = { readyError, answer: agent.state.messages.at(-1)?.content?.[0]?.text ?? null };
`);

// Everything called at import, before the module is ready: a default stream function, an agent without
// streamFn, queue modes and follow-ups carried into its wasm core, agentLoop's stream returned at once and
// filled later, runToolCall and runAgentLoop waiting.
const EARLY_PAGE = importMapPage(`
import { Agent, agentLoop, runAgentLoop, runToolCall, setDefaultStreamFn, createAssistantMessageEventStream, ready } from "pi-agent-wasm";
const MODEL = { id: "m", name: "m", api: "a", provider: "p", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (content) => ({ role: "user", content, timestamp: 1 });
// Answers with the last user message's text.
const streamFn = (_model, context) => {
  const stream = createAssistantMessageEventStream();
  const last = context.messages.filter((m) => m.role === "user").at(-1).content;
  const text = "re:" + (typeof last === "string" ? last : last[0].text);
  const message = { role: "assistant", content: [{ type: "text", text }], api: "a", provider: "p", model: "m", usage, stopReason: "stop", timestamp: Date.now() };
  setTimeout(() => stream.push({ type: "done", reason: "stop", message }));
  return stream;
};
let settled = false;
ready.then(() => (settled = true));
setDefaultStreamFn(streamFn);
const agent = new Agent({ initialState: { model: MODEL } });
agent.followUpMode = "all";
agent.followUp(user("f1"));
agent.followUp(user("f2"));
const peeked = agent.peekQueuedMessages().map((m) => m.content);
const prompted = agent.prompt("p");
const idle = agent.waitForIdle();
const stream = agentLoop([user("loop")], { messages: [] }, { model: MODEL, convertToLlm: (m) => m }, undefined, streamFn);
const streamAtOnce = typeof stream[Symbol.asyncIterator] === "function" && typeof stream.result === "function";
const emitted = [];
const ran = runAgentLoop([user("run")], { messages: [] }, { model: MODEL, convertToLlm: (m) => m }, (e) => void emitted.push(e.type), undefined, streamFn);
const echo = { name: "echo", label: "Echo", description: "", parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: async (_id, args) => ({ content: [{ type: "text", text: "echo:" + args.text }], details: {} }) };
const tool = runToolCall({ type: "toolCall", id: "c1", name: "echo", arguments: { text: "x" } }, { tools: [echo] });
// abort() before the module is ready aborts the run a prompt() before it asked for.
// (The stream function ends with "aborted" when its signal was aborted, as pi-ai's do.)
const abortable = (_model, _context, options) => {
  const stream = createAssistantMessageEventStream();
  setTimeout(() => {
    const stopReason = options?.signal?.aborted ? "aborted" : "stop";
    const message = { role: "assistant", content: [], api: "a", provider: "p", model: "m", usage, stopReason, timestamp: Date.now() };
    stream.push(stopReason === "aborted" ? { type: "error", reason: stopReason, error: message } : { type: "done", reason: stopReason, message });
  });
  return stream;
};
const aborted = new Agent({ initialState: { model: MODEL }, streamFn: abortable });
const abortedEnds = [];
aborted.subscribe((e) => void (e.type === "agent_end" && abortedEnds.push(e.messages.at(-1).stopReason)));
const abortedRun = aborted.prompt("stop me");
aborted.abort();
const before = { settled, peeked, mode: agent.followUpMode, streamAtOnce };
const loopEvents = [];
for await (const e of stream) loopEvents.push(e.type);
const loopResult = await stream.result();
await prompted;
await idle;
const outcome = await tool;
const ranMessages = await ran;
await abortedRun;
window.__result = {
  before,
  transcript: agent.state.messages.map((m) => m.role + ":" + (typeof m.content === "string" ? m.content : m.content[0].text)),
  loop: { first: loopEvents[0], last: loopEvents.at(-1), answer: loopResult.at(-1).content[0].text },
  run: { answer: ranMessages.at(-1).content[0].text, ends: emitted.filter((t) => t === "agent_end").length },
  tool: outcome.result.content[0].text,
  aborted: { ends: abortedEnds, last: aborted.state.messages.at(-1).stopReason, streaming: aborted.state.isStreaming },
};
`);

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
};

/**
 * Static files of `dir` on 127.0.0.1; `wasm404` answers every .wasm with 404, `wasmHtml` with an HTML page
 * (a single-page app's fallback), `wasmDrops` closes the connection of its first requests, `headers` go on every
 * response; `seen.wasm` counts the .wasm's requests.
 */
async function serve(dir, { wasm404 = false, wasmHtml = false, wasmDrops = 0, headers = {} } = {}) {
  const root = resolve(dir);
  const seen = { wasm: 0 };
  const server = http.createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path.endsWith("/")) path += "index.html";
    const file = resolve(root, "." + path);
    // `wasmDrops`: the first requests of the .wasm end without an answer (the connection closed). Every
    // answer then closes its connection, so that each request has a fresh one: Chromium sends a request
    // again by itself when a reused connection closes before answering.
    if (wasmDrops > 0) res.setHeader("connection", "close");
    if (file.endsWith(".wasm") && ++seen.wasm <= wasmDrops) return void req.socket.destroy();
    const ok = (file === root || file.startsWith(root + sep)) && existsSync(file) && statSync(file).isFile();
    if (!ok || (wasm404 && file.endsWith(".wasm"))) {
      res.writeHead(404, { "content-type": "text/plain", ...headers });
      res.end("not found");
      return;
    }
    if (wasmHtml && file.endsWith(".wasm")) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...headers });
      res.end("<!doctype html><html><body>app</body></html>");
      return;
    }
    res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "cache-control": "no-store", ...headers });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () => {
      const closed = new Promise((r) => server.close(r));
      server.closeAllConnections();
      return closed;
    },
  };
}

/** Loads `url` and returns `window.__result`; fails on page errors. */
async function pageResult(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30000 });
    const result = await page.evaluate(() => window.__result);
    assert.deepEqual(errors, [], "no page errors");
    return result;
  } finally {
    await page.close();
  }
}

function assertRan(result, where) {
  assert.equal(result.error, undefined, `${where}: ${result.error}`);
  assert.deepEqual(result.main, EXPECTED, `${where}: main thread`);
  if (where.includes("worker")) assert.deepEqual(result.worker, EXPECTED, `${where}: module Worker`);
}

/** Runs a tool from the app's node_modules/.bin with its defaults. */
const tool = (app, name, args) =>
  execFileSync(join(app, "node_modules/.bin", name), args, { cwd: app, encoding: "utf8", stdio: "pipe", env: { ...process.env, NO_COLOR: "1" } });

const kB = (file) => `${(statSync(file).size / 1000).toFixed(1)} kB`;
const jsFiles = (dir) => readdirSync(dir, { recursive: true }).filter((f) => /\.(js|wasm)$/.test(f));

test("toolchains with their default configuration", { timeout: 600000 }, async (t) => {
  if (!existsSync(join(PKG_DIR, "package.json"))) throw new Error("pkg/ is not built: run node scripts/build.mjs");
  const tmp = mkdtempSync(join(tmpdir(), "pi-bundlers-"));
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  try {
    const packed = execFileSync("npm", ["pack", PKG_DIR, "--pack-destination", tmp, "--silent"], { encoding: "utf8" }).trim().split("\n").at(-1);
    const app = join(tmp, "app");
    mkdirSync(join(app, "src"), { recursive: true });
    writeFileSync(join(app, "package.json"), JSON.stringify({
      name: "fresh-app", private: true, type: "module",
      dependencies: { "pi-agent-wasm": `file:${join(tmp, packed)}` },
      devDependencies: TOOLS,
    }, null, 2));
    for (const [file, text] of Object.entries(FILES)) writeFileSync(join(app, file), text);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: app, stdio: "pipe" });

    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    cleanups.push(() => browser.close());
    const inBrowser = async (dir, path = "/", options, seen) => {
      const server = await serve(dir, options);
      try {
        return await pageResult(browser, server.url + path);
      } finally {
        if (seen) Object.assign(seen, server.seen);
        await server.close();
      }
    };

    await t.test("Node ESM import", () => {
      const out = execFileSync(process.execPath, ["--input-type=module", "-e",
        `import * as pkg from "pi-agent-wasm"; import { run } from "./src/scenario.js"; console.log(JSON.stringify(await run(pkg)));`],
      { cwd: app, encoding: "utf8" });
      assertRan({ main: JSON.parse(out) }, "node import");
    });

    await t.test("Node require()", () => {
      const out = execFileSync(process.execPath, ["-e",
        `const pkg = require("pi-agent-wasm"); require("./src/scenario.cjs").run(pkg).then((r) => console.log(JSON.stringify(r)));`],
      { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      assertRan({ main: JSON.parse(out) }, "node require");
    });

    await t.test("plain <script type=module> page with an import map", async () => {
      writeFileSync(join(app, "importmap.html"), importMapPage(`import * as pkg from "pi-agent-wasm";
import { run } from "/src/scenario.js";
run(pkg).then((main) => (window.__result = { main }), (e) => (window.__result = { error: String(e && e.stack || e) }));`));
      assertRan(await inBrowser(app, "/importmap.html"), "import map");
    });

    await t.test("Vite build (page and module worker)", async (st) => {
      tool(app, "vite", ["build", "--outDir", "dist-vite"]);
      st.diagnostic(`dist-vite: ${jsFiles(join(app, "dist-vite")).map((f) => `${f} ${kB(join(app, "dist-vite", f))}`).join(", ")}`);
      assertRan(await inBrowser(join(app, "dist-vite")), "vite build, worker");
    });

    await t.test("Vite dev server (page and module worker)", async () => {
      const { createServer } = await import(join(app, "node_modules/vite/dist/node/index.js"));
      const server = await createServer({ root: app, configFile: false, logLevel: "silent", server: { host: "127.0.0.1" } });
      await server.listen();
      try {
        assertRan(await pageResult(browser, server.resolvedUrls.local[0]), "vite dev, worker");
      } finally {
        await server.close();
      }
    });

    await t.test("webpack 5 (no config; page and module worker)", async (st) => {
      tool(app, "webpack", []);
      const dist = join(app, "dist");
      writeFileSync(join(dist, "index.html"), `<!doctype html><html><body><script src="main.js"></script></body></html>`);
      st.diagnostic(`dist: ${jsFiles(dist).map((f) => `${f} ${kB(join(dist, f))}`).join(", ")}`);
      assertRan(await inBrowser(dist), "webpack, worker");
    });

    await t.test("Rollup with @rollup/plugin-node-resolve", async (st) => {
      tool(app, "rollup", ["src/app.js", "--plugin", "node-resolve", "--format", "es", "--file", "dist-rollup/app.js"]);
      writeFileSync(join(app, "dist-rollup/index.html"), `<!doctype html><html><body><script type="module" src="app.js"></script></body></html>`);
      st.diagnostic(`dist-rollup/app.js ${kB(join(app, "dist-rollup/app.js"))}`);
      assertRan(await inBrowser(join(app, "dist-rollup")), "rollup");
    });

    await t.test("esbuild --bundle --format=esm", async (st) => {
      tool(app, "esbuild", ["src/app.js", "--bundle", "--format=esm", "--outfile=dist-esbuild/app.js", "--log-level=warning"]);
      writeFileSync(join(app, "dist-esbuild/index.html"), `<!doctype html><html><body><script type="module" src="app.js"></script></body></html>`);
      st.diagnostic(`dist-esbuild/app.js ${kB(join(app, "dist-esbuild/app.js"))}`);
      assertRan(await inBrowser(join(app, "dist-esbuild")), "esbuild");
    });

    await t.test("before the module is ready: defaults, queues, streams and runs wait", async () => {
      writeFileSync(join(app, "early.html"), EARLY_PAGE);
      const r = await inBrowser(app, "/early.html");
      assert.deepEqual(r, {
        before: { settled: false, peeked: ["f1", "f2"], mode: "all", streamAtOnce: true },
        // The follow-ups queued before the module was ready run after the prompt, both at once ("all").
        transcript: ["user:p", "assistant:re:p", "user:f1", "user:f2", "assistant:re:f2"],
        loop: { first: "agent_start", last: "agent_end", answer: "re:loop" },
        run: { answer: "re:run", ends: 1 },
        tool: "echo:x",
        aborted: { ends: ["aborted"], last: "aborted", streaming: false },
      });
    });

    await t.test("a .wasm answered with 404 rejects ready and prompt() with the URL and the status", async () => {
      writeFileSync(join(app, "failure.html"), FAILURE_PAGE);
      const r = await inBrowser(app, "/failure.html", { wasm404: true });
      assert.equal(r.isError, true);
      assert.match(r.message, /^pi-agent-wasm: could not load the WebAssembly module from http:\/\/127\.0\.0\.1:\d+\/node_modules\/pi-agent-wasm\/pi_agent_wasm_bg\.wasm: HTTP 404/);
      assert.equal(r.samePrompt, true, "prompt() rejects with the load error");
      assert.equal(r.sameLate, true, "a later agent's prompt() rejects with the load error");
    });

    await t.test("a .wasm whose connection drops is fetched again: ready resolves and the agent runs", async () => {
      writeFileSync(join(app, "dropped.html"), DROPPED_PAGE);
      const seen = {};
      const r = await inBrowser(app, "/dropped.html", { wasmDrops: 2 }, seen);
      assert.deepEqual(r, { readyError: null, answer: "ok" });
      assert.equal(seen.wasm, 3, "two dropped requests, then the one that loaded");
    });

    await t.test("an HTML page served for the .wasm rejects ready and prompt() with the reason and the content type", async () => {
      const r = await inBrowser(app, "/failure.html", { wasmHtml: true });
      assert.equal(r.isError, true);
      assert.match(r.message, /^pi-agent-wasm: could not load the WebAssembly module from http:\/\/127\.0\.0\.1:\d+\/node_modules\/pi-agent-wasm\/pi_agent_wasm_bg\.wasm: .*magic word.*\(content-type: text\/html; charset=utf-8\)$/);
      assert.equal(r.samePrompt, true);
    });

    await t.test("a CSP without 'wasm-unsafe-eval' rejects ready with the reason", async () => {
      const csp = "default-src 'self'; script-src 'self' 'unsafe-inline'";
      const r = await inBrowser(app, "/failure.html", { headers: { "content-security-policy": csp } });
      assert.equal(r.isError, true);
      assert.match(r.message, /^pi-agent-wasm: could not load the WebAssembly module from http:\/\/127\.0\.0\.1:\d+\/node_modules\/pi-agent-wasm\/pi_agent_wasm_bg\.wasm: .*(unsafe-eval|Content Security Policy)/);
      assert.equal(r.samePrompt, true);
    });
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
});
