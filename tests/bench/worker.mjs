// The worker benchmark, run by run.mjs after the Chromium scenarios (or alone:
// `node tests/bench/worker.mjs [--pkg DIR] [--runs N]` with a built pkg/; BENCH_SAMPLES=1 also prints every
// run's µs per delta): main-thread CPU per text delta for S1 and S4a through
// an Agent, with ours in the page, the reference in the page and ours in a Worker, interleaved in one
// page. The main thread's CPU time is Chromium's TaskDuration (threadTicks) between two marks around
// `prompt()`: the worker's thread is not counted; the main thread's message handling, event rebuilding
// and listeners are. The WorkerAgent is made and its worker started once per scenario, then reused (reset).
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../support/chromium.mjs";

// "session": ours in a Worker with pi-agent-wasm/session attached (IndexedDB, its writer in the worker),
// the main thread's CPU until the session's writes landed (S1 only).
export const WORKER_JOBS = [
  { id: "S1", impls: ["worker", "session", "ours", "reference"], params: { deltas: 20_000, size: 50 }, divisor: 20_000, label: "S1 through an Agent: 20,000 text deltas × 50 chars, listener reads event.message" },
  { id: "S4a", impls: ["worker", "ours", "reference"], params: { variant: "s4a" }, warmParams: { variant: "s4a-warm" }, divisor: 20_000, label: "S4a through an Agent: streamProxy, 20,000 text deltas from 127.0.0.1, listener reads event.message" },
];

export async function workerBench(base, { runs = 7, warm = 3, log = () => {} } = {}) {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
    let marks = {};
    await page.exposeBinding("__benchMark", async (_source, label) => {
      const { metrics } = await cdp.send("Performance.getMetrics");
      marks[label] = metrics.find((m) => m.name === "TaskDuration").value;
    });
    const errors = [];
    page.on("pageerror", (e) => errors.push(e));
    await page.goto(`${base}/bench/worker-page.html`);
    await page.waitForFunction(() => window.benchReady === true, undefined, { timeout: 60_000 });
    const rows = [];
    for (const job of WORKER_JOBS) {
      await page.evaluate((p) => window.bench.prepare(p), job.params);
      const once = async (impl, params) => {
        marks = {};
        const check = await page.evaluate(([i, s, p]) => window.bench.run(i, s, p), [impl, job.id, params]);
        return { cpu: marks.end - marks.start, check };
      };
      const IMPLS = job.impls;
      for (let w = 0; w < warm; w++) for (const impl of IMPLS) await once(impl, job.warmParams ?? job.params);
      const samples = Object.fromEntries(IMPLS.map((i) => [i, []]));
      const checks = {};
      for (let r = 0; r < runs; r++) {
        const order = r % 2 === 0 ? IMPLS : [...IMPLS].reverse();
        for (const impl of order) {
          const { cpu, check } = await once(impl, job.params);
          samples[impl].push(cpu);
          checks[impl] = check;
        }
      }
      // The marks' own cost, measured in the same page between the runs, is taken off every column:
      // it is the instrument's, not the agent's, and it weighs most on the smallest figure.
      const empties = [];
      for (let r = 0; r < runs; r++) {
        marks = {};
        await page.evaluate(() => window.bench.empty());
        empties.push(marks.end - marks.start);
      }
      const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
      const markCost = med(empties);
      const raw = Object.fromEntries(IMPLS.map((i) => [i, (med(samples[i]) / job.divisor) * 1e6]));
      const perDelta = Object.fromEntries(IMPLS.map((i) => [i, ((med(samples[i]) - markCost) / job.divisor) * 1e6]));
      rows.push({ job, samples, checks, perDelta, raw, markCost });
      const session = perDelta.session === undefined ? "" : `, worker with a session ${perDelta.session.toFixed(3)} (/reference ${(perDelta.session / perDelta.reference).toFixed(3)}; with the marks ${(raw.session / raw.reference).toFixed(3)})`;
      log(`worker ${job.id}: µs of main-thread CPU per delta, marks (${(markCost * 1e3).toFixed(2)} ms a run) taken off: worker ${perDelta.worker.toFixed(3)}, ours in page ${perDelta.ours.toFixed(3)}, reference ${perDelta.reference.toFixed(3)} (worker/reference ${(perDelta.worker / perDelta.reference).toFixed(3)}; with the marks ${(raw.worker / raw.reference).toFixed(3)})${session}`);
    }
    if (errors.length) throw errors[0];
    return { rows, version: browser.version(), markdown: render(rows) };
  } finally {
    await browser.close();
  }
}

function render(rows) {
  const L = [
    "| scenario (Chromium, main thread only; the marks' own cost taken off) | ours in a Worker | ours in a Worker with a session | ours in the page | reference in the page | Worker / reference | Worker with a session / reference | page / reference | Worker / reference with the marks |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const { job, perDelta: p, raw } of rows) {
    const session = p.session === undefined ? ["–", "–"] : [`${p.session.toFixed(3)} µs`, `${(p.session / p.reference).toFixed(3)} (with the marks ${(raw.session / raw.reference).toFixed(3)})`];
    L.push(`| ${job.label} | ${p.worker.toFixed(3)} µs | ${session[0]} | ${p.ours.toFixed(3)} µs | ${p.reference.toFixed(3)} µs | ${(p.worker / p.reference).toFixed(3)} | ${session[1]} | ${(p.ours / p.reference).toFixed(2)} | ${(raw.worker / raw.reference).toFixed(3)} |`);
  }
  L.push("", "With a session: pi-agent-wasm/session attached to the WorkerAgent with `indexedDBStore()` (its writer runs in the worker), the main thread's CPU from `prompt()` until `session.flush()` resolved (the writes landed).");
  L.push("", `The marks (two CDP round trips, measured alone between the runs: ${rows.map(({ job, markCost }) => `${job.id} ${(markCost * 1e3).toFixed(2)} ms`).join(", ")} a run) are taken off every column.`);
  return L.join("\n");
}

// Alone: snapshot pkg/, bundle the reference, start the bench server, run, print.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { bundleReference, snapshotPkg, startServer } = await import("./setup.mjs");
  const { resolve } = await import("node:path");
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const pkg = snapshotPkg("pkg-worker", arg("--pkg") ? resolve(arg("--pkg")) : undefined);
  const server = await startServer(pkg.dir, await bundleReference());
  try {
    const runs = arg("--runs") ? Number(arg("--runs")) : undefined;
    const out = await workerBench(server.base, { runs, log: (l) => process.stderr.write(l + "\n") });
    console.log(out.markdown);
    for (const { job, checks } of out.rows) console.log(job.id, JSON.stringify(checks));
    if (process.env.BENCH_SAMPLES) for (const { job, samples } of out.rows) for (const k in samples) console.log(job.id, k, samples[k].map((x) => (x * 1e6 / job.divisor).toFixed(3)).join(" "));
  } finally {
    server.close();
  }
}
