#!/usr/bin/env node
// The UI benchmark: one prompt answered into a chat transcript in Chromium, the whole path a user feels
// (the stream from a local server, the agent, the framework binding, the framework, the browser's style
// and layout), for each setup side by side: the AI SDK's useChat, 1.4.0's Agent + streamProxy with a hook
// set per event and with one set per animation frame, ours in the page (Agent + streamProxy + useAgent)
// and in a Worker (WorkerAgent + useAgent), with the answer as one text node and through TextBlocks,
// in React and in Svelte (app/; bundled by build.mjs).
//
//   node tests/bench/ui/run.mjs [--runs N (5)] [--only react-ours,react-ref-frame,…] [--workloads fast,paced]
//                               [--modes cold,warm] [--pkg DIR (default pkg/)]
//
// A cold run is a fresh browser context and page: the trace starts before the navigation and ends when
// the finished answer is on screen (the page's load, module evaluation, the wasm and the Worker's start
// are in it). A warm run is a fresh page that answers once first, then again inside the trace
// ("ui-start" to "ui-end"). Setups are interleaved, each run in another order. Per cell: the medians of
// the main thread's CPU time and its parts from the trace (trace.mjs), long tasks, the longest gap between
// two animation frames, renders of the streaming row, the JS heap's peak. Reports numbers; asserts only
// that every setup showed the whole answer.
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startServerProcess } from "../setup.mjs";
import { SETUPS, buildSetups, here } from "./build.mjs";
import { analyse, endTrace, startTrace } from "./trace.mjs";
import { WORKLOADS, workloadDeltas } from "./workloads.mjs";

/** What each setup is, in the report's words. */
export const LABELS = {
  "react-aisdk": "AI SDK 7 `useChat` (React)",
  "react-ref-update": "1.4.0 + a `useState` hook per event (React)",
  "react-ref-frame": "1.4.0 + a hook per animation frame (React)",
  "react-ours": "ours: `Agent` + `streamProxy` + `useAgent` (React)",
  "react-worker": "ours: `WorkerAgent` + `useAgent` (React)",
  "react-ours-blocks": "ours in the page + `TextBlocks` (React)",
  "react-worker-blocks": "ours in a Worker + `TextBlocks` (React)",
  "svelte-ref-update": "1.4.0 + a store set per event (Svelte)",
  "svelte-ref-frame": "1.4.0 + a store set per animation frame (Svelte)",
  "svelte-ours": "ours: `Agent` + `streamProxy` + `agentStore` (Svelte)",
  "svelte-worker": "ours: `WorkerAgent` + `agentStore` (Svelte)",
  "svelte-ours-blocks": "ours in the page + `textBlocks` (Svelte)",
};
/** Each setup's baseline: 1.4.0 with the per-frame hook, in the same framework. */
const baselineOf = (setup) => (setup.startsWith("svelte") ? "svelte-ref-frame" : "react-ref-frame");

const fnv = (text) => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
};

/** One measured answer of `setup`; returns the trace's figures and the page's counters. */
async function measure(browser, base, setup, workload, mode) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const tracing = await browser.newBrowserCDPSession();
    const { text } = workloadDeltas(workload);
    const url = `${base}/app/page.html?setup=${setup}&workload=${workload}&length=${text.length}&mode=${mode}`;
    let counters;
    let events;
    if (mode === "cold") {
      await startTrace(tracing);
      await page.goto(url);
      counters = await page.waitForFunction(() => window.__answer, undefined, { timeout: 120_000 }).then((h) => h.jsonValue());
      events = await endTrace(tracing);
    } else {
      await page.goto(url);
      await page.waitForFunction(() => window.__ready, undefined, { timeout: 60_000 });
      await page.evaluate(() => window.__warm());
      await startTrace(tracing);
      counters = await page.evaluate(() => window.__warm());
      events = await endTrace(tracing);
    }
    await tracing.detach();
    if (counters.error) throw new Error(`${setup}: ${counters.error}`);
    if (errors.length) throw new Error(`${setup}: page errors: ${errors.join("; ")}`);
    const shown = await page.evaluate(() => window.__hash());
    if (shown.length !== text.length || shown.hash !== fnv(text)) throw new Error(`${setup} ${workload} ${mode}: the answer on screen is not the streamed text (${shown.length} characters of ${text.length})`);
    const figures = analyse(events, { from: mode === "cold" ? null : "ui-start" });
    return {
      ...figures,
      renders: counters.renders,
      maxGap: counters.maxGap,
      // First token on screen, from the start of the page's script (cold) or from the prompt (warm), and
      // from the agent's construction (cold).
      firstToken: mode === "cold" ? counters.firstToken - counters.started : undefined,
      firstTokenFromAgent: mode === "cold" ? counters.firstToken - counters.agentCreated : undefined,
    };
  } finally {
    await context.close();
  }
}

const median = (xs) => {
  const s = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!s.length) return undefined;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * The cells: every setup in the fast and paced workloads, cold and warm; the long workload (a 1 MB answer
 * at a screen's pace) warm, for ours with one text node and with the block renderers (its frames late in
 * the answer beside its early ones).
 */
export const CELLS = [
  { workload: "fast", mode: "cold" },
  { workload: "fast", mode: "warm" },
  { workload: "paced", mode: "cold" },
  { workload: "paced", mode: "warm" },
  { workload: "long", mode: "warm", setups: ["react-ours", "react-ours-blocks", "react-worker-blocks", "svelte-ours", "svelte-ours-blocks"] },
];

export async function uiBench({ pkgDir = resolve(here, "../../../pkg"), runs = 5, only, workloads, modes, log = () => {} } = {}) {
  const setups = only ?? Object.keys(SETUPS);
  const cellList = CELLS.filter((c) => (!workloads || workloads.includes(c.workload)) && (!modes || modes.includes(c.mode)));
  const outDir = join(here, "../../../test-output/bench/ui");
  mkdirSync(outDir, { recursive: true });
  await buildSetups(pkgDir, join(outDir, "build"), setups);
  const server = await startServerProcess(join(here, "server.mjs"), [JSON.stringify({ "/app/": join(here, "app"), "/build/": join(outDir, "build") })]);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const load = [loadavg()[0]];
  const cells = [];
  try {
    for (const { workload, mode, setups: subset } of cellList) {
      const active = subset ? setups.filter((s) => subset.includes(s)) : setups;
      if (active.length === 0) continue;
      const samples = Object.fromEntries(active.map((s) => [s, []]));
      for (let r = 0; r < runs; r++) {
        // Interleaved: every setup once per round, each round in a rotated order.
        const order = active.map((_, i) => active[(i + r) % active.length]);
        for (const setup of order) samples[setup].push(await measure(browser, server.base, setup, workload, mode));
        load.push(loadavg()[0]);
        log(`ui ${workload} ${mode}: round ${r + 1}/${runs} (load ${loadavg()[0].toFixed(2)})`);
      }
      const medians = {};
      for (const setup of active) {
        medians[setup] = {};
        for (const key of Object.keys(samples[setup][0])) medians[setup][key] = median(samples[setup].map((x) => x[key]));
      }
      cells.push({ workload, mode, setups: active, samples, medians });
      log(`ui ${workload} ${mode}: ${active.map((s) => `${s} ${medians[s].cpu.toFixed(0)} ms`).join(", ")}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
  const result = { setups, runs, cells, load: { min: Math.min(...load), max: Math.max(...load) } };
  writeFileSync(join(outDir, "results.json"), JSON.stringify(result, null, 1));
  const markdown = renderUi(result);
  writeFileSync(join(outDir, "results.md"), markdown);
  return { ...result, markdown };
}

const f0 = (x) => (x === undefined ? "" : x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1));
const ratio = (a, b) => (a === undefined || !b ? "" : (a / b).toFixed(2));

/**
 * The report: a headline table (main-thread CPU of every setup in every cell, worst first), the ratios
 * the targets are about, then one table per cell (workload × mode) with every figure.
 */
export function renderUi({ runs, cells, load }) {
  const L = [
    `Medians of ${runs} interleaved runs per setup and cell; load average ${load.min.toFixed(2)}–${load.max.toFixed(2)} during the runs.`,
    "",
  ];
  const main = cells.filter((c) => c.workload !== "long");
  const all = [...new Set(main.flatMap((c) => c.setups))];
  const worst = (s) => Math.max(...main.map((c) => c.medians[s]?.cpu ?? 0));
  L.push(`| main-thread CPU, ms | ${main.map((c) => `${c.workload}, ${c.mode}`).join(" | ")} |`, `|---|${main.map(() => "---:").join("|")}|`);
  for (const s of all.sort((a, b) => worst(b) - worst(a))) L.push(`| ${LABELS[s] ?? s} | ${main.map((c) => f0(c.medians[s]?.cpu)).join(" | ")} |`);
  L.push("");
  // The ratios of the issue's targets, per cell.
  const pairs = [
    ["react-ours-blocks", "react-ref-frame"], ["svelte-ours-blocks", "svelte-ref-frame"], ["react-ours", "react-ref-frame"], ["svelte-ours", "svelte-ref-frame"],
    ["react-worker-blocks", "react-ref-frame"], ["react-worker", "react-ref-frame"], ["svelte-worker", "svelte-ref-frame"],
  ];
  L.push(`| ours / 1.4.0 with the per-frame hook: main-thread CPU (JS+GC) | ${main.map((c) => `${c.workload}, ${c.mode}`).join(" | ")} |`, `|---|${main.map(() => "---:").join("|")}|`);
  for (const [a, b] of pairs) {
    if (!main.some((c) => c.medians[a] && c.medians[b])) continue;
    L.push(`| ${LABELS[a]} | ${main.map((c) => {
      const x = c.medians[a];
      const y = c.medians[b];
      return x && y ? `${ratio(x.cpu, y.cpu)} (${ratio(x.js + x.gc, y.js + y.gc)})` : "";
    }).join(" | ")} |`);
  }
  L.push("");
  const layoutPairs = [["react-ours-blocks", "react-ours"], ["react-worker-blocks", "react-worker"], ["svelte-ours-blocks", "svelte-ours"]];
  const fast = cells.filter((c) => c.workload === "fast");
  const lines = [];
  for (const [a, b] of layoutPairs) {
    const r = fast.filter((c) => c.medians[a] && c.medians[b]).map((c) => `${c.mode} ${ratio(c.medians[a].layout, c.medians[b].layout)}`);
    if (r.length) lines.push(`${LABELS[a]}: ${r.join(", ")}`);
  }
  if (lines.length) L.push(`Layout time of the fast workload, blocks / one text node: ${lines.join("; ")}.`, "");
  const long = cells.find((c) => c.workload === "long");
  if (long) {
    L.push(`A frame late in a 1 MB answer (the long workload) over one early in it (main-thread CPU of a rendering frame, last quarter / first quarter): ${long.setups.map((s) => `${LABELS[s]} ${ratio(long.medians[s].lateFrame, long.medians[s].earlyFrame)} (${f0(long.medians[s].earlyFrame)} → ${f0(long.medians[s].lateFrame)} ms)`).join("; ")}.`, "");
  }
  L.push("Every figure, per cell. CPU, JS+GC, layout (style and layout), paint: the page's main thread, from the trace, ms. Ratios are against 1.4.0 with the per-frame hook in the same framework.", "");
  for (const { workload, mode, setups, medians } of cells) {
    const w = WORKLOADS[workload];
    L.push(`#### ${workload} (${w.deltas.toLocaleString("en-US")} deltas of ${w.size} characters${w.perTick ? `, ${w.perTick} per ${w.tickMs} ms` : ", as fast as the server sends"}), ${mode}`, "");
    L.push("| setup | main-thread CPU | × per-frame 1.4.0 | JS+GC | × | layout | paint | worker CPU | long tasks | longest frame gap | renders | first token | late/early frame | heap peak |");
    L.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    const order = [...setups].sort((a, b) => medians[b].cpu - medians[a].cpu);
    for (const s of order) {
      const m = medians[s];
      const base = medians[baselineOf(s)];
      L.push(
        `| ${LABELS[s] ?? s} | ${f0(m.cpu)} | ${ratio(m.cpu, base?.cpu)} | ${f0(m.js + m.gc)} | ${ratio(m.js + m.gc, base ? base.js + base.gc : undefined)} | ${f0(m.layout)} | ${f0(m.paint)} | ${f0(m.workerCpu)} | ${m.longTasks} | ${f0(m.maxGap)} | ${m.renders} | ${mode === "cold" ? `${f0(m.firstToken)} (${f0(m.firstTokenFromAgent)})` : ""} | ${ratio(m.lateFrame, m.earlyFrame)} | ${(m.heapPeak / 1e6).toFixed(1)} MB |`,
      );
    }
    L.push("");
  }
  L.push("First token: ms from the page's script start to the first text of the answer on screen (in brackets: from the agent's construction). Late/early frame: the median CPU time of a rendering frame in the last quarter of the answer over one in the first.");
  return L.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const list = (name) => arg(name)?.split(",");
  const out = await uiBench({
    pkgDir: arg("--pkg") ? resolve(arg("--pkg")) : undefined,
    runs: arg("--runs") ? Number(arg("--runs")) : undefined,
    only: list("--only"),
    workloads: list("--workloads"),
    modes: list("--modes"),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${out.markdown}\n`);
}
