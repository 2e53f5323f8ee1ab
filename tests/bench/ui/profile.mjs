#!/usr/bin/env node
// Where a UI bench cell spends the page's main-thread time, by function: the same page and runs as
// run.mjs, with the bundles unminified (function names kept) and V8's sampling profiler in the trace.
// Prints, per setup, the trace's breakdown (as run.mjs reports it) and the functions with the most
// self time on the page's main thread and on its workers, summed over the runs.
//
//   node tests/bench/ui/profile.mjs --only react-worker-blocks[,…] [--workload fast] [--mode cold] [--runs 3] [--top 30]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startServerProcess } from "../setup.mjs";
import { buildSetups, here } from "./build.mjs";
import { coldAnswer } from "./run.mjs";
import { CATEGORIES, analyse, endTrace, startTrace } from "./trace.mjs";
import { workloadDeltas } from "./workloads.mjs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const setups = arg("--only", "react-worker-blocks").split(",");
const workload = arg("--workload", "fast");
const mode = arg("--mode", "cold");
const runs = Number(arg("--runs", 3));
const top = Number(arg("--top", 30));
const pkgDir = resolve(arg("--pkg", join(here, "../../../pkg")));
const PROFILER = [...CATEGORIES, "disabled-by-default-v8.cpu_profiler"];

/**
 * The source module of each line of an unminified esbuild bundle (its "// path" comments), by URL path:
 * "react-dom", "ours: worker/index.js", "app: …".
 */
const moduleMaps = new Map();
function moduleOf(url, line) {
  const m = /\/build\/([^?]+\.js)$/.exec(url);
  if (!m) return url ? url.replace(/\?.*/, "") : "(native)";
  let map = moduleMaps.get(m[1]);
  if (!map) {
    map = [];
    readFileSync(join(outDir, "build", m[1]), "utf8").split("\n").forEach((text, i) => {
      const c = /^\/\/ (\S+\.m?jsx?)$/.exec(text);
      if (!c) return;
      const path = c[1];
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? (/(?:^|\/)(?:pkg|perf27-named|[^/]*named)\/(.*)$/.exec(path) ? `ours: ${/(?:^|\/)(?:pkg|[^/]*named)\/(.*)$/.exec(path)[1]}` : `app: ${path.replace(/^.*tests\/bench\/ui\/app\//, "")}`);
      map.push([i + 1, name]);
    });
    moduleMaps.set(m[1], map);
  }
  let name = `${m[1]} (bundle)`;
  for (const [from, n] of map) if (from <= line) name = n;
  return name;
}

/** Self time (µs) by "function url:line:column" of every profile in the trace, by thread name; and by module, self and inclusive. */
function selfTimes(events, names, pid) {
  const byThread = new Map();
  const profiles = new Map();
  for (const e of events) {
    if (e.name !== "ProfileChunk" && e.name !== "Profile") continue;
    const key = `${e.pid}:${e.id}`;
    let p = profiles.get(key);
    if (!p) profiles.set(key, (p = { pid: e.pid, tid: undefined, nodes: new Map(), samples: [], deltas: [] }));
    // The "Profile" event is on the sampled thread; its chunks are on the profiler's.
    if (e.name === "Profile") {
      p.tid = e.tid;
      continue;
    }
    const data = e.args?.data ?? {};
    for (const n of data.cpuProfile?.nodes ?? []) p.nodes.set(n.id, n);
    p.samples.push(...(data.cpuProfile?.samples ?? []));
    p.deltas.push(...(data.timeDeltas ?? []));
  }
  for (const p of profiles.values()) {
    if (p.pid !== pid) continue;
    const thread = names.get(`${p.pid}:${p.tid}`) ?? `${p.pid}:${p.tid}`;
    let totals = byThread.get(thread);
    if (!totals) byThread.set(thread, (totals = new Map()));
    let mods = byThread.get(`${thread} by module (self | inclusive)`);
    if (!mods) byThread.set(`${thread} by module (self | inclusive)`, (mods = new Map()));
    const parents = new Map();
    for (const n of p.nodes.values()) for (const c of n.children ?? []) parents.set(c, n.id);
    const modOf = (n) => (n.callFrame?.url ? moduleOf(n.callFrame.url, n.callFrame.lineNumber + 1) : n.callFrame?.functionName?.startsWith("(") ? n.callFrame.functionName : "(native)");
    // Each sample's node gets the time until the next sample.
    for (let i = 0; i < p.samples.length; i++) {
      const node = p.nodes.get(p.samples[i]);
      const dt = p.deltas[i + 1] ?? 0;
      if (!node || dt <= 0) continue;
      const f = node.callFrame ?? {};
      const url = (f.url ?? "").replace(/^https?:\/\/[^/]+/, "");
      const key = `${f.functionName || "(anonymous)"} ${url}${url ? `:${f.lineNumber + 1}:${f.columnNumber + 1}` : ""}`;
      totals.set(key, (totals.get(key) ?? 0) + dt);
      const self = modOf(node);
      mods.set(`${self} self`, (mods.get(`${self} self`) ?? 0) + dt);
      const seen = new Set();
      for (let n = node; n; n = p.nodes.get(n.parent ?? parents.get(n.id))) {
        const m = modOf(n);
        if (seen.has(m) || m.startsWith("(")) continue;
        seen.add(m);
        mods.set(`${m} incl`, (mods.get(`${m} incl`) ?? 0) + dt);
      }
    }
  }
  return byThread;
}

/** The page's renderer process: the one with the "ui-end" mark. */
const pageProcess = (events) => events.find((e) => e.name === "ui-end" && (e.cat ?? "").includes("blink.user_timing"))?.pid;

const outDir = join(here, "../../../test-output/bench/ui-profile");
mkdirSync(outDir, { recursive: true });
await buildSetups(pkgDir, join(outDir, "build"), setups, { minify: false });
const server = await startServerProcess(join(here, "server.mjs"), [JSON.stringify({ "/app/": join(here, "app"), "/build/": join(outDir, "build") })]);
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
try {
  const { text } = workloadDeltas(workload);
  const all = Object.fromEntries(setups.map((s) => [s, { figures: [], threads: new Map() }]));
  for (let r = 0; r < runs; r++) {
    for (const setup of setups) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const cdp = await browser.newBrowserCDPSession();
      const url = `${server.base}/app/page.html?setup=${setup}&workload=${workload}&length=${text.length}&mode=${mode}&phases`;
      const start = () => cdp.send("Tracing.start", { transferMode: "ReturnAsStream", traceConfig: { includedCategories: PROFILER, recordMode: "recordAsMuchAsPossible" } });
      let events;
      if (mode === "cold") {
        await start();
        await coldAnswer(page, url);
        events = await endTrace(cdp);
      } else {
        await page.goto(url);
        await page.waitForFunction(() => window.__ready);
        await page.evaluate(() => window.__warm());
        await start();
        await page.evaluate(() => window.__warm());
        events = await endTrace(cdp);
      }
      await cdp.detach();
      await context.close();
      if (process.argv.includes("--save")) writeFileSync(join(outDir, `${setup}-${workload}-${mode}-${r + 1}.json`), JSON.stringify(events));
      const figures = analyse(events, { from: mode === "cold" ? null : "ui-start" });
      // The run's phases, between the page's marks (boot.js, harness.js).
      const marks = mode === "cold" ? [null, "ui-importing", "ui-imported", "ui-mounted", "ui-first-token", "ui-end"] : ["ui-start", "ui-first-token", "ui-end"];
      figures.phases = marks.slice(1).map((to, i) => {
        const f = analyse(events, { from: marks[i], to });
        return { name: `${marks[i] ?? "navigation"} → ${to}`, wall: f.wall, cpu: f.cpu, js: f.js + f.gc, layout: f.layout + f.paint, other: f.other, worker: f.workerCpu, byName: f.byName };
      });
      all[setup].figures.push(figures);
      const names = new Map();
      for (const e of events) if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args?.name);
      for (const [thread, totals] of selfTimes(events, names, pageProcess(events))) {
        let sum = all[setup].threads.get(thread);
        if (!sum) all[setup].threads.set(thread, (sum = new Map()));
        for (const [k, v] of totals) sum.set(k, (sum.get(k) ?? 0) + v);
      }
      process.stderr.write(`${setup} run ${r + 1}: cpu ${figures.cpu.toFixed(0)} js ${figures.js.toFixed(0)} gc ${figures.gc.toFixed(0)} layout ${figures.layout.toFixed(0)} other ${figures.other.toFixed(0)}\n`);
    }
  }
  for (const setup of setups) {
    const { figures, threads } = all[setup];
    const mean = (k) => (figures.reduce((a, f) => a + f[k], 0) / figures.length).toFixed(1);
    console.log(`\n## ${setup} ${workload} ${mode}: mean of ${runs} runs: cpu ${mean("cpu")} js ${mean("js")} gc ${mean("gc")} layout ${mean("layout")} paint ${mean("paint")} other ${mean("other")} worker ${mean("workerCpu")} ms`);
    console.log("\n### phases, mean ms per run: wall, main-thread CPU (JS+GC, layout+paint, other), worker CPU");
    figures[0].phases.forEach(({ name }, i) => {
      const m = (k) => (figures.reduce((a, f) => a + f.phases[i][k], 0) / figures.length).toFixed(1);
      console.log(`${name}: wall ${m("wall")}, cpu ${m("cpu")} (${m("js")}, ${m("layout")}, ${m("other")}), worker ${m("worker")}`);
      const names = new Map();
      for (const f of figures) for (const [k, v] of Object.entries(f.phases[i].byName)) names.set(k, (names.get(k) ?? 0) + v / figures.length);
      console.log(`    ${[...names].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")}`);
    });
    const names = new Map();
    for (const f of figures) for (const [k, v] of Object.entries(f.byName)) names.set(k, (names.get(k) ?? 0) + v / runs);
    console.log("\n### main thread, self time by trace event, ms per run");
    for (const [k, v] of [...names].sort((a, b) => b[1] - a[1]).slice(0, top)) if (v >= 0.1) console.log(`${v.toFixed(2).padStart(8)}  ${k}`);
    for (const [thread, totals] of threads) {
      const sum = [...totals.values()].reduce((a, b) => a + b, 0);
      if (sum < 1000 * runs) continue;
      console.log(`\n### ${thread}: ${(sum / 1000 / runs).toFixed(1)} ms sampled per run; self time per run, ms`);
      for (const [k, v] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(v / 1000 / runs).toFixed(2).padStart(8)}  ${k}`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
