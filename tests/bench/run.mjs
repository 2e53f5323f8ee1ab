#!/usr/bin/env node
// `npm run bench`: ours (pkg/) against the reference (@earendil-works/pi-agent-core 1.4.0), in Node and
// in headless Chromium, interleaved in one process / one page. Reports numbers; asserts nothing.
//
//   node tests/bench/run.mjs [--runs N (11)] [--heavy-runs N (5: ours' S4b)] [--ref-s4b-runs N (2)] [--only S1,S1-piai,S2-pull-hooks,S3-5000-ui,S4a,… (job ids)]
//                            [--no-node] [--no-chromium] [--no-worker] [--no-session] [--no-server] [--no-s5] [--no-s4b-string] [--pkg DIR (default pkg/)] [--pkg-note TEXT]
//                            [--no-ui] [--ui-runs N (5)]
//
// Scenarios (tests/bench/scenarios.mjs; inputs in data.mjs):
//   S1  one prompt, 20,000 text deltas of 50 chars, a listener reading event.message; per-quarter cost;
//       once per stream kind (S1, S1-piai, S1-generator, S1-pull: see STREAM_KINDS in scenarios.mjs)
//   S2  200 turns of 8 parallel trivial tools (one prompt); per turn; per stream kind, without and
//       with beforeToolCall + afterToolCall (S2[-kind][-hooks])
//   S3  an Agent preloaded with 500 / 5,000 / 50,000 messages answering 100 short prompts; per prompt;
//       at 5,000 and 50,000 also with the tool hooks (S3-N-hooks) and with a UI reading
//       agent.state.messages after each prompt (S3-N-ui)
//   S4a streamProxy, 20,000 text deltas from the bench server on 127.0.0.1; client CPU per delta
//   S4b streamProxy, one tool call with 200 KB of JSON arguments in 4,000 deltas; total and per quarter
//       (plus S4b-string: the same size as one long string value)
//   S5  esbuild bundle (minified, gzip, brotli) of a minimal `import { Agent, streamProxy }` browser app
//   UI  one prompt answered into a React or Svelte chat transcript in Chromium, the AI SDK's useChat, the
//       reference with two hooks, ours in the page and in a Worker, with and without the block renderer
//       (tests/bench/ui/run.mjs: main-thread CPU, JS+GC and layout from a trace, frames, first token)
// Results: printed, and written to test-output/bench/results.md (+ results.json).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import { entryFile } from "../support/package-entry.mjs";
import { openBenchPage } from "./chromium.mjs";
import { jobs, runJobs } from "./driver.mjs";
import { BATCH } from "./scenarios.mjs";
import { renderReport } from "./report.mjs";
import { bundleReference, here, outDir, referenceVersions, root, snapshotPkg, startServer } from "./setup.mjs";

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const value = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const options = {
  runs: Number(value("--runs") ?? 11),
  heavyRuns: Number(value("--heavy-runs") ?? 5),
  refS4bRuns: Number(value("--ref-s4b-runs") ?? 2),
  s4bString: !flag("--no-s4b-string"),
};
if (value("--only")) options.only = value("--only").split(",");

const started = Date.now();
const log = (line) => process.stderr.write(`[bench +${((Date.now() - started) / 1000).toFixed(0)}s] ${line}\n`);
const load = () => loadavg().map((x) => x.toFixed(2)).join(" / ");
const loadStart = load();

mkdirSync(outDir, { recursive: true });
const pkg = snapshotPkg("pkg", value("--pkg") ? resolve(value("--pkg")) : undefined);
log(`pkg snapshot: wasm ${pkg.wasmBytes} B, sha ${pkg.wasmSha}, built ${pkg.builtAt}${pkg.nameSection ? " (name section: NOT a release build)" : ""}`);
const refDir = await bundleReference();
const server = await startServer(pkg.dir, refDir);
log(`server ${server.base}`);

const envs = [];
const notes = [
  `The scripted stream functions push ${BATCH} events per macrotask (setImmediate in Node, a MessageChannel message in Chromium), mutating one partial message in place as pi-ai's providers do; each implementation's own \`createAssistantMessageEventStream()\` carries the same event objects.`,
  "S2: each response is `start` + `done` with 8 tool calls (`{ i: number }`, a plain JSON-Schema object schema); each tool's `execute` is `async` and returns one text block. 200 tool turns + 1 final text turn in one `prompt()`; per turn = total / 200.",
  "S3: a fresh Agent per run preloaded with the transcript (alternating user / assistant text messages, built once, not measured); each prompt's response is `start`, `text_start`, 2 `text_delta`, `done`.",
  "S4: the proxy server is a separate Node process (tests/bench/server.mjs) that writes the SSE body in 16 KB writes as fast as the socket takes them. The client iterates `streamProxy(…)`'s stream and reads each delta's partial (text block, or the tool call's `arguments` object). CPU includes fetch and body reading on both sides. S4b's stream is gated per quarter (the server sends the next quarter once the consumer has marked the previous one: 5 small POSTs per run, their CPU included).",
  `S4b is quadratic on the reference (it re-parses the whole argument text per delta): the reference runs ${options.refS4bRuns}× for S4b and once for S4b-string, after one 1/10-size warm-up; ours runs ${options.heavyRuns}× after three 1/10-size warm-ups.`,
  `Runs: ${options.runs} measured runs per implementation (${2 * options.runs - 1} for S1 and S2, ${options.heavyRuns} for ours' S4b), after 2–5 warm-up runs (5 for S1, 3 for S2 and S4a, 2 for S3; S4b: 3 for ours, 1 for the reference, at 1/10 size); one forced full GC before each scenario's warm-up and none between measured runs (V8's forced GC also discards optimised code, which would make each run partly cold).`,
];

// ---- Node -------------------------------------------------------------------------------------
if (!flag("--no-node")) {
  log("Node: running (own process, --expose-gc)");
  const out = join(outDir, "node.json");
  try {
    execFileSync(process.execPath, ["--expose-gc", join(here, "node-bench.mjs"), server.base, pkg.dir, out, JSON.stringify(options)], {
      stdio: ["ignore", "inherit", "inherit"],
      cwd: root,
    });
    const data = JSON.parse(readFileSync(out, "utf8"));
    envs.push({ name: "Node", results: data.results });
    if (data.threadClock) {
      envs.push({
        name: "Node main thread",
        results: data.results.map((r) => ({ ...r, samples: r.threadSamples, memory: undefined })),
      });
    }
  } catch (error) {
    log(`Node run failed: ${error.message}`);
    notes.push(`Node run failed: ${error.message}`);
  }
}

// ---- Chromium -----------------------------------------------------------------------------------
let chromiumVersion;
if (!flag("--no-chromium")) {
  log("Chromium: launching");
  const chrome = await openBenchPage(server.base, { log });
  chromiumVersion = chrome.version;
  const { page, cdp } = chrome;
  const backend = {
    prepare: (scenario, params) => page.evaluate(([s, p]) => window.bench.prepare(s, p), [scenario, params]),
    async runOnce(impl, scenario, params, keep) {
      chrome.takeMarks();
      const check = await page.evaluate(([i, s, p, k]) => window.bench.run(i, s, p, k), [impl, scenario, params, keep]);
      return { marks: chrome.takeMarks(), check };
    },
    async gc() {
      // Several rounds: wasm-bindgen frees Rust objects in FinalizationRegistry callbacks (see node-bench.mjs).
      for (let i = 0; i < 4; i++) {
        await cdp.send("HeapProfiler.collectGarbage");
        await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 5)));
      }
      await cdp.send("HeapProfiler.collectGarbage");
    },
    async memory() {
      const { usedSize } = await cdp.send("Runtime.getHeapUsage");
      const wasm = await page.evaluate(() => window.bench.wasmBytes());
      return { heap: usedSize, wasm };
    },
    release: () => page.evaluate(() => window.bench.release()),
  };
  try {
    let list = jobs(options);
    if (options.only) list = list.filter((j) => options.only.includes(j.id));
    const results = await runJobs(backend, list, (line) => log(`[chromium] ${line}`));
    if (chrome.errors.length) notes.push(`Page errors: ${chrome.errors.map((e) => e.message).join("; ")}`);
    envs.push({ name: "Chromium", results });
  } catch (error) {
    log(`Chromium run failed: ${error.stack}`);
    notes.push(`Chromium run failed: ${error.message}`);
  } finally {
    await chrome.browser.close();
  }
}
// ---- Chromium, the agent in a Worker: main-thread CPU per delta (tests/bench/worker.mjs) ----------
if (!flag("--no-chromium") && !flag("--no-worker")) {
  try {
    const { workerBench } = await import("./worker.mjs");
    const worker = await workerBench(server.base, { runs: options.runs, log });
    notes.push(`The agent in a Worker (tests/bench/worker.mjs), Chromium main-thread CPU per text delta through an Agent:\n\n${worker.markdown}\n`);
  } catch (error) {
    log(`worker bench failed: ${error.stack}`);
    notes.push(`worker bench failed: ${error.message}`);
  }
}
server.close();

// ---- the UI path (tests/bench/ui/): its own pages, server and browser ----------------------------------
let ui;
if (!flag("--no-chromium") && !flag("--no-ui")) {
  try {
    const { uiBench } = await import("./ui/run.mjs");
    ui = (await uiBench({ pkgDir: pkg.dir, runs: Number(value("--ui-runs") ?? 5), log: (line) => log(`[ui] ${line}`) })).markdown;
  } catch (error) {
    log(`UI bench failed: ${error.stack}`);
    notes.push(`UI bench failed: ${error.message}`);
  }
}

// S1 with a session attached (pi-agent-wasm/session), ours with and without: tests/bench/session.mjs.
if (!flag("--no-session")) notes.push(...(await (await import("./session.mjs")).sessionBench({ pkgDir: pkg.dir, runs: options.runs * 3, log, chromium: !flag("--no-chromium") })));

// The server half (pi-agent-wasm/server): CPU per streamed token beside a hand-written relay, 200
// concurrent streams, the session store on PGlite and Postgres: tests/bench/server-side.mjs.
if (!flag("--no-server")) {
  try {
    const { serverBench } = await import("./server-side.mjs");
    notes.push(await serverBench({ pkgDir: pkg.dir, runs: options.runs, log: (line) => log(`[server] ${line}`) }));
  } catch (error) {
    log(`server bench failed: ${error.stack}`);
    notes.push(`server bench failed: ${error.message}`);
  }
}

// ---- S5 -----------------------------------------------------------------------------------------
function sizes(buf) {
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}
const add = (a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip, brotli: a.brotli + b.brotli });

async function bundle(id, source, { ours }) {
  const dir = join(outDir, "s5", id);
  const aliasPlugin = {
    name: "pi-agent-wasm",
    setup(build) {
      build.onResolve({ filter: /^pi-agent-wasm(\/react|\/svelte)?$/ }, (args) =>
        // The main entry as Vite and webpack resolve it (index.js and the .wasm file), the others by the exports map.
        ({ path: args.path === "pi-agent-wasm" ? join(pkg.dir, "index.js") : entryFile(pkg.dir, args.path) }));
    },
  };
  const result = await esbuild.build({
    stdin: { contents: source, resolveDir: root, loader: "js", sourcefile: `${id}.mjs` },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outdir: dir,
    entryNames: "app",
    external: ["react", "react-dom", "svelte", "svelte/*"],
    plugins: ours ? [aliasPlugin] : [],
    write: false,
    logLevel: "error",
  });
  const js = sizes(Buffer.concat(result.outputFiles.filter((f) => f.path.endsWith(".js")).map((f) => Buffer.from(f.contents))));
  if (!ours) return { id, js, total: js };
  // esbuild leaves `new URL("./pi_agent_wasm_bg.wasm", import.meta.url)` alone: the app ships the file as is.
  const wasm = sizes(readFileSync(join(pkg.dir, "pi_agent_wasm_bg.wasm")));
  return { id, js, wasm, total: add(js, wasm) };
}

let s5;
if (!flag("--no-s5")) {
  log("S5: bundling");
  const app = (from) => `import { Agent, streamProxy } from "${from}";
export const agent = new Agent({
  streamFn: (model, context, options) => streamProxy(model, context, { ...options, proxyUrl: "https://example.invalid", authToken: "token" }),
});`;
  s5 = [
    { name: "reference: `import { Agent, streamProxy }` from pi-agent-core 1.4.0", ...(await bundle("reference", app("@earendil-works/pi-agent-core"), { ours: false })) },
    { name: "ours: `import { Agent, streamProxy }` from pi-agent-wasm", ...(await bundle("ours", app("pi-agent-wasm"), { ours: true })) },
    {
      name: "ours + `pi-agent-wasm/react` (`useAgent`; react external)",
      ...(await bundle("ours-react", `${app("pi-agent-wasm")}
import { useAgent } from "pi-agent-wasm/react";
export function Transcript() { return useAgent(agent).messages.length; }`, { ours: true })),
    },
  ];
}
await esbuild.stop?.();

// ---- report -------------------------------------------------------------------------------------
const seconds = (Date.now() - started) / 1000;
const meta = {
  date: new Date().toISOString().replace("T", " ").slice(0, 16) + " UTC",
  pkg: { ...pkg, source: relative(root, pkg.source).startsWith("..") ? pkg.source : `${relative(root, pkg.source)}/` },
  pkgNote: value("--pkg-note"),
  git: (() => {
    try {
      const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
      const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "js", "Cargo.toml", "Cargo.lock"], { cwd: root, encoding: "utf8" }).trim() !== "";
      return `${head}${dirty ? " (src/ or js/ modified in the working tree)" : ""}`;
    } catch {
      return undefined;
    }
  })(),
  ref: referenceVersions(),
  node: process.version,
  chromium: chromiumVersion,
  cpus: `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`,
  loadStart,
  loadEnd: load(),
  runTime: `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`,
};
const markdown = renderReport({ meta, envs, s5, notes, ui });
writeFileSync(join(outDir, "results.md"), markdown);
writeFileSync(join(outDir, "results.json"), JSON.stringify({ meta, envs, s5, notes, ui }, null, 1));
process.stdout.write(`${markdown}\n`);
log(`wrote ${join(outDir, "results.md")}`);
