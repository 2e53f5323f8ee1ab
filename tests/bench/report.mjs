// Markdown for the results of run.mjs.

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function scaleFor(job) {
  if (job.unit === "delta") return { factor: 1e6, unit: "µs / delta" };
  return { factor: 1e3, unit: `ms / ${job.unit}` };
}

function fmt(x) {
  if (!Number.isFinite(x)) return "–";
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString("en-US");
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

function ratio(a, b) {
  const r = a / b;
  if (!Number.isFinite(r)) return "–";
  if (r >= 0.1) return r.toFixed(2);
  return `${r.toPrecision(2)} (${Math.round(1 / r)}× faster)`;
}

function perUnit(job, samples) {
  return samples.map((s) => s.total / job.divisor);
}

function stat(job, samples) {
  const { factor } = scaleFor(job);
  const xs = perUnit(job, samples).map((x) => x * factor);
  return { med: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
const MB = (n) => `${(n / 1e6).toFixed(2)} MB`;
const signedMB = (n) => `${n < 0 ? "−" : ""}${(Math.abs(n) / 1e6).toFixed(2)} MB`;

export function renderReport({ meta, envs, s5, notes, ui }) {
  const L = [];
  L.push(`# pi-agent-wasm benchmark — ${meta.date}`);
  L.push("");
  L.push(`- ours: pi-agent-wasm ${meta.pkg.version} from \`${meta.pkg.source}\` (snapshot; wasm ${meta.pkg.wasmBytes.toLocaleString("en-US")} B, sha256 ${meta.pkg.wasmSha}…, built ${meta.pkg.builtAt}${meta.pkg.nameSection ? ", **has a name section: a `--dev` build, not the release**" : ", release build"})${meta.pkgNote ? ` — ${meta.pkgNote}` : ""}`);
  if (meta.git) L.push(`- repository HEAD at bench time: ${meta.git} (pkg/ is whatever was last built; see its build time)`);
  L.push(`- reference: @earendil-works/pi-agent-core ${meta.ref.core} + @earendil-works/pi-ai ${meta.ref.ai} (Node: from node_modules; Chromium: esbuild browser bundle)`);
  L.push(`- Node ${meta.node}; Chromium ${meta.chromium ?? "not run"}; ${meta.cpus}; load average at start ${meta.loadStart}, at end ${meta.loadEnd}`);
  L.push(`- run time ${meta.runTime}`);
  L.push("");
  L.push("CPU clocks: **Node** `process.cpuUsage()` user+system of the benchmark process (all of its threads, so V8's concurrent GC and compiler helper threads count; the SSE server is a separate process). " +
    "**Node main thread**: the same runs, read at the same marks from `/proc/thread-self/schedstat` (the main thread's own CPU time, comparable with Chromium's). " +
    "**Chromium** DevTools `Performance.getMetrics` `TaskDuration` with `Performance.enable({ timeDomain: \"threadTicks\" })`: CPU time of the renderer's main thread only (helper threads not counted), read at marks inside the page through an exposed binding while the page awaits it. " +
    "Ours and the reference run interleaved in one process / one page (order alternating per round), after warm-up. Values: median (min–max) over the measured runs; ratio = median ours / median reference. Wall time is not reported (the machine is shared).");
  L.push("");
  for (const n of notes) L.push(`- ${n}`);
  L.push("");

  // ---- the UI path (tests/bench/ui/run.mjs), first: what a user of a chat app feels
  if (ui) {
    L.push("## The UI path: one prompt answered into a chat transcript (tests/bench/ui/)", "", ui, "");
  }

  // ---- main table
  L.push("## Main-thread CPU time");
  L.push("");
  L.push("| scenario | env | unit | ours | reference | runs ours / ref | ours / ref |");
  L.push("|---|---|---|---:|---:|:-:|---:|");
  const ids = [];
  for (const env of envs) for (const r of env.results) if (!ids.includes(r.job.id)) ids.push(r.job.id);
  for (const id of ids) {
    for (const env of envs) {
      const r = env.results.find((x) => x.job.id === id);
      if (!r) continue;
      const o = stat(r.job, r.samples.ours);
      const f = stat(r.job, r.samples.reference);
      L.push(`| ${r.job.label} | ${env.name} | ${scaleFor(r.job).unit} | ${fmt(o.med)} (${fmt(o.min)}–${fmt(o.max)}) | ${fmt(f.med)} (${fmt(f.min)}–${fmt(f.max)}) | ${o.n} / ${f.n} | ${ratio(o.med, f.med)} |`);
    }
  }
  L.push("");

  // ---- quarters
  L.push("## Per-quarter cost (growth check)");
  L.push("");
  L.push("Median over the measured runs of each quarter's CPU time divided by its deltas (S1: 5,000 text deltas per quarter, marked in the listener, in runs of their own: S1's per-delta figure above comes from runs without those marks, each of which costs a DevTools round trip in Chromium; S4b: 1,000 tool-call deltas per quarter, marked in the consumer). " +
    "S4b's server sends each quarter only after the consumer has marked the previous one (a gate per quarter), so the stream's reader cannot parse ahead of the marks; in Chromium the scripted S1 producer is held while a mark is read. A cost flat across quarters is linear in the stream's length; Q4 / Q1 ≈ 7 (i.e. growing by Q1's cost every quarter) is quadratic.");
  L.push("");
  L.push("| scenario | env | impl | Q1 µs/delta | Q2 | Q3 | Q4 | Q4 / Q1 |");
  L.push("|---|---|---|---:|---:|---:|---:|---:|");
  for (const id of ids) {
    for (const env of envs) {
      const r = env.results.find((x) => x.job.id === id);
      if (!r || !r.job.quarters) continue;
      for (const impl of ["ours", "reference"]) {
        const qs = [0, 1, 2, 3].map((q) => median(r.samples[impl].map((s) => s.quarters[q])) / r.job.quarters * 1e6);
        L.push(`| ${r.job.id} | ${env.name} | ${impl} | ${qs.map(fmt).join(" | ")} | ${(qs[3] / qs[0]).toFixed(2)} |`);
      }
    }
  }
  L.push("");

  // ---- S3
  L.push("## S3: per-prompt cost against transcript size");
  L.push("");
  L.push("| env | impl | 500 msgs | 5,000 | 50,000 | 50,000 / 500 |");
  L.push("|---|---|---:|---:|---:|---:|");
  for (const env of envs) {
    const rows = [500, 5000, 50000].map((n) => env.results.find((x) => x.job.id === `S3-${n}`));
    if (rows.some((r) => !r)) continue;
    for (const impl of ["ours", "reference"]) {
      const v = rows.map((r) => stat(r.job, r.samples[impl]).med);
      L.push(`| ${env.name} | ${impl} (ms / prompt) | ${v.map(fmt).join(" | ")} | ${(v[2] / v[0]).toFixed(1)} |`);
    }
    const o = rows.map((r) => stat(r.job, r.samples.ours).med);
    const f = rows.map((r) => stat(r.job, r.samples.reference).med);
    L.push(`| ${env.name} | ours / reference | ${o.map((x, i) => ratio(x, f[i])).join(" | ")} | |`);
  }
  L.push("");

  // ---- memory
  L.push("## Memory after S1 and S3 (50,000 messages)");
  L.push("");
  L.push("After one more run of the scenario with its Agent kept alive: **JS heap retained** = used heap with the Agent alive minus used heap once it is released (both after a full GC; Node `process.memoryUsage().heapUsed` with `--expose-gc`, Chromium `HeapProfiler.collectGarbage` + `Runtime.getHeapUsage().usedSize`). " +
    "**wasm** = ours' `WebAssembly.Memory` size at that point (linear memory never shrinks: this is the high-water mark of the whole run so far; growth = during this probe run). The package does not export its memory; it is read through wasm-bindgen's `initSync()`, which returns the live instance's exports.");
  L.push("");
  L.push("| scenario | env | ours JS heap retained | ours wasm memory (growth) | ours heap + wasm | reference JS heap retained | ours / ref |");
  L.push("|---|---|---:|---:|---:|---:|---:|");
  for (const env of envs) {
    for (const r of env.results) {
      if (!r.memory) continue;
      const o = r.memory.ours;
      const f = r.memory.reference;
      L.push(`| ${r.job.id} | ${env.name} | ${signedMB(o.heap)} | ${MB(o.wasm)} (+${MB(o.wasmGrowth)}) | ${MB(o.heap + o.wasm)} | ${signedMB(f.heap)} | ${ratio(o.heap + o.wasm, f.heap)} |`);
    }
  }
  L.push("");

  // ---- S5
  if (s5) {
    L.push("## S5: bundle size of a minimal browser app");
    L.push("");
    L.push("`import { Agent, streamProxy }` and one `new Agent({ streamFn: … streamProxy … })`, esbuild bundle + minify (ESM, browser, es2022); gzip -9 and brotli q11 per file, summed; wasm included for ours. React itself is external (not counted) in the adapter row.");
    L.push("");
    L.push("| app | JS min | wasm | raw total | gzip | brotli |");
    L.push("|---|---:|---:|---:|---:|---:|");
    for (const row of s5) {
      L.push(`| ${row.name} | ${kB(row.js.raw)} | ${row.wasm ? kB(row.wasm.raw) : "–"} | ${kB(row.total.raw)} | ${kB(row.total.gzip)} | ${kB(row.total.brotli)} |`);
    }
    const ours = s5.find((r) => r.id === "ours");
    const ref = s5.find((r) => r.id === "reference");
    if (ours && ref) L.push("", `gzip ours / reference: ${(ours.total.gzip / ref.total.gzip).toFixed(2)}; wasm alone gzip ${kB(ours.wasm.gzip)}, JS alone gzip ${kB(ours.js.gzip)}.`);
    L.push("");
  }

  // ---- checks
  const mismatches = [];
  for (const env of envs) {
    for (const r of env.results) {
      const a = JSON.stringify(r.checks.ours);
      const b = JSON.stringify(r.checks.reference);
      if (a !== b) mismatches.push(`${r.job.id} (${env.name}): ours ${a} vs reference ${b}`);
    }
  }
  L.push("## Same work on both sides");
  L.push("");
  if (mismatches.length === 0) L.push("Every scenario's end state (delta counts, final text / argument sizes, message counts, tool results, stop reasons) is identical for ours and the reference.");
  else for (const m of mismatches) L.push(`- **differs**: ${m}`);
  L.push("");
  return L.join("\n");
}
