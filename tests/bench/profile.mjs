#!/usr/bin/env node
// Where does ours spend its time per event? (issue 7: profile before optimising)
//
//   node tests/bench/profile.mjs [--pkg DIR] [--scenarios S1,S4b,S2,S3-50000,S4a (default)] [--runs N]
//   (also S4b-string)
//
// 1. Chromium CPU profile (DevTools protocol Profiler.start/stop, 100 µs sampling) of ours on each
//    scenario, after warm-up, in the bench page: the top 15 functions by self time, with µs per event,
//    and self time by category (wasm, our JS glue, bench harness, GC, V8/program).
//    pkg/ is a release build without names (name section stripped, wasm import/export names
//    shortened, JS minified), so by default the profile runs a "named twin" built from the same
//    sources by `scripts/build.mjs --profiling` (same wasm code, names kept, JS unminified). With
//    --pkg DIR, that package is profiled as it is.
// 2. Boundary crossings per event (Node): a copy of the package whose wasm imports (wasm → JS calls)
//    and exports (JS → wasm calls) are wrapped with counters; counts per delta by name.
// 3. Promises per event (Node, async_hooks PROMISE inits), ours and the reference.
// Output: printed, and written to test-output/bench/profile.md.
import { execFileSync } from "node:child_process";
import { createHook } from "node:async_hooks";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { openBenchPage } from "./chromium.mjs";
import { bundleReference, outDir, root, snapshotPkg, startServer } from "./setup.mjs";
import { prepare, SCENARIOS } from "./scenarios.mjs";

const argv = process.argv.slice(2);
const value = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const started = Date.now();
const log = (line) => process.stderr.write(`[profile +${((Date.now() - started) / 1000).toFixed(0)}s] ${line}\n`);

const SCENARIO_DEFS = {
  S1: { scenario: "s1", params: { deltas: 20_000, size: 50 }, events: 20_000, per: "text delta", runs: 5 },
  "S1-piai": { scenario: "s1", params: { deltas: 20_000, size: 50, kind: "piai" }, events: 20_000, per: "text delta", runs: 5 },
  "S1-pull": { scenario: "s1", params: { deltas: 20_000, size: 50, kind: "pull" }, events: 20_000, per: "text delta", runs: 5 },
  S4b: { scenario: "s4", params: { variant: "s4b-edits", kind: "toolcall", deltas: 4_000 }, events: 4_000, per: "tool-call delta", runs: 3 },
  "S4b-string": { scenario: "s4", params: { variant: "s4b-string", kind: "toolcall", deltas: 4_000 }, events: 4_000, per: "tool-call delta", runs: 3 },
  S4a: { scenario: "s4", params: { variant: "s4a", kind: "text", deltas: 20_000 }, events: 20_000, per: "text delta", runs: 5 },
  S2: { scenario: "s2", params: { turns: 200, tools: 8 }, events: 200, per: "turn", runs: 3 },
  "S2-hooks": { scenario: "s2", params: { turns: 200, tools: 8, hooks: true }, events: 200, per: "turn", runs: 3 },
  "S3-50000": { scenario: "s3", params: { size: 50_000, prompts: 100 }, events: 100, per: "prompt", runs: 1 },
  "S3-500": { scenario: "s3", params: { size: 500, prompts: 100 }, events: 100, per: "prompt", runs: 5 },
};
const chosen = (value("--scenarios") ?? "S1,S4b,S2,S3-50000,S4a").split(",");
for (const id of chosen) if (!SCENARIO_DEFS[id]) throw new Error(`unknown scenario ${id}; one of ${Object.keys(SCENARIO_DEFS)}`);
const runsOverride = value("--runs") ? Number(value("--runs")) : undefined;
/** Which implementation the Chromium profile samples: ours, or with PROFILE_IMPL=reference the reference (to compare, say, its GC share). */
const PROFILED = process.env.PROFILE_IMPL === "reference" ? "reference" : "ours";

const out = [];
const say = (line = "") => {
  out.push(line);
  process.stdout.write(`${line}\n`);
};

// ---- the package under test, with names if we can prove they belong to it ------------------------
const pkg = snapshotPkg("pkg-profile", value("--pkg") ? resolve(value("--pkg")) : undefined);
let twinNote = "";
if (pkg.nameSection) twinNote = "the package already has a name section (a `--dev` or `--profiling` build): profiled as is.";
else twinNote = namedTwin();
log(twinNote);

// The shipped package has no names (stripped, and wasm import/export names shortened). Its twin is
// built from the same sources by `scripts/build.mjs --profiling`: the same release wasm and wasm-opt
// passes, with the name section kept and the JS glue left unminified (so JS frames are named too).
function namedTwin() {
  if (value("--pkg")) return "a package without names was given (--pkg): wasm frames are anonymous (wasm-function[N]).";
  const dir = join(outDir, "pkg-named");
  try {
    execFileSync(process.execPath, [join(root, "scripts/build.mjs"), "--profiling", "--out", dir], { stdio: ["ignore", "ignore", "inherit"] });
  } catch (error) {
    return `the named twin build failed (${error.message.split("\n")[0]}): wasm frames are anonymous.`;
  }
  for (const f of readdirSync(pkg.dir)) rmSync(join(pkg.dir, f), { recursive: true, force: true });
  cpSync(dir, pkg.dir, { recursive: true });
  return `profiled a twin of pkg/ built by \`scripts/build.mjs --profiling\` from the same sources (same wasm code; names kept, JS unminified), ${readFileSync(join(dir, "pi_agent_wasm_bg.wasm")).length} B of wasm with names vs ${pkg.wasmBytes} B.`;
}

const refDir = await bundleReference();
const server = await startServer(pkg.dir, refDir);

// ---- 1. Chromium CPU profiles ---------------------------------------------------------------------
say(`# Profile of ours — ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`);
say();
say(`Package: \`${pkg.source}\` (wasm ${pkg.wasmBytes} B, sha256 ${pkg.wasmSha}…). ${twinNote}`);
say();

function category(frame) {
  const { functionName: f, url } = frame;
  if (f === "(garbage collector)") return "GC";
  if (f === "(program)" || f === "(root)") return "V8 / program";
  if (f === "wasm-to-js" || f === "js-to-wasm" || f.startsWith("js-to-wasm:") || f.startsWith("wasm-to-js:")) return "wasm ↔ JS transition stubs";
  if (url.startsWith("wasm://") || url.endsWith(".wasm") || /^\$?(wasm-function|func)\[?\d+/.test(f)) return "wasm (Rust)";
  if (url.includes("/pkg/")) return url.includes("/snippets/") ? "glue.js / proxy.js" : "wasm-bindgen JS shims";
  if (url.includes("/bench/")) return "bench harness (scripted stream, listener)";
  if (url === "") return "V8 builtins / native";
  return "other JS";
}

function where(frame) {
  if (!frame.url) return "";
  const name = frame.url.startsWith("wasm://") ? "wasm" : basename(new URL(frame.url).pathname);
  if (name.endsWith(".wasm")) return name;
  return `${name}:${frame.lineNumber + 1}`;
}

function analyseProfile(profile, events) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]);
    if (node.callFrame.functionName === "(idle)") continue;
    const key = `${node.callFrame.functionName || "(anonymous)"}\u0000${where(node.callFrame)}`;
    const entry = self.get(key) ?? { frame: node.callFrame, us: 0 };
    entry.us += dt;
    self.set(key, entry);
    total += dt;
  }
  const rows = [...self.values()].sort((a, b) => b.us - a.us);
  const cats = new Map();
  for (const r of rows) cats.set(category(r.frame), (cats.get(category(r.frame)) ?? 0) + r.us);
  return { rows, cats: [...cats].sort((a, b) => b[1] - a[1]), total, events };
}

const chrome = await openBenchPage(server.base, { log });
const { page, cdp } = chrome;
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
for (const id of chosen) {
  const def = SCENARIO_DEFS[id];
  const runs = runsOverride ?? def.runs;
  await page.evaluate(([s, p]) => window.bench.prepare(s, p), [def.scenario, def.params]);
  log(`Chromium ${id}: warm-up`);
  for (let i = 0; i < 3; i++) await page.evaluate(([s, p, w]) => window.bench.run(w, s, p, false, false), [def.scenario, def.params, PROFILED]);
  log(`Chromium ${id}: profiling ${runs} run(s)`);
  await cdp.send("Profiler.start");
  for (let i = 0; i < runs; i++) await page.evaluate(([s, p, w]) => window.bench.run(w, s, p, false, false), [def.scenario, def.params, PROFILED]);
  const { profile } = await cdp.send("Profiler.stop");
  writeFileSync(join(outDir, `profile-${id}.cpuprofile`), JSON.stringify(profile));
  const events = def.events * runs;
  const a = analyseProfile(profile, events);
  say(`## ${id}: Chromium, ${PROFILED}, ${runs} run(s), ${events.toLocaleString("en-US")} ${def.per}s`);
  say();
  say(`Sampled CPU (idle excluded): ${(a.total / 1000).toFixed(1)} ms = **${(a.total / events).toFixed(2)} µs per ${def.per}** (profiler on; 100 µs sampling).`);
  say();
  say("| category | self ms | % | µs / " + def.per + " |");
  say("|---|---:|---:|---:|");
  for (const [c, us] of a.cats) say(`| ${c} | ${(us / 1000).toFixed(1)} | ${((100 * us) / a.total).toFixed(1)} | ${(us / events).toFixed(3)} |`);
  say();
  say("| # | function | where | category | self ms | % | µs / " + def.per + " |");
  say("|--:|---|---|---|---:|---:|---:|");
  a.rows.slice(0, 15).forEach((r, i) => {
    say(`| ${i + 1} | \`${r.frame.functionName || "(anonymous)"}\` | ${where(r.frame)} | ${category(r.frame)} | ${(r.us / 1000).toFixed(1)} | ${((100 * r.us) / a.total).toFixed(1)} | ${(r.us / events).toFixed(3)} |`);
  });
  say();
}
await chrome.browser.close();

// ---- 2 + 3. Boundary crossings and promises per event (Node) --------------------------------------
const counted = join(outDir, "pkg-counted");
rmSync(counted, { recursive: true, force: true });
cpSync(pkg.dir, counted, { recursive: true });
{
  const file = join(counted, "pi_agent_wasm.js");
  let js = readFileSync(file, "utf8");
  const before = js;
  js = js.replace("function __wbg_get_imports() {", "function __wbg_get_imports() { return __benchCountImports(__wbg_get_imports_plain()); }\nfunction __wbg_get_imports_plain() {");
  js = js.replace("wasm = instance.exports;", "wasm = __benchCountExports(instance.exports);");
  if (js === before || !js.includes("__benchCountExports(instance")) throw new Error("could not instrument pi_agent_wasm.js");
  js += `
function __benchCounts() { return (globalThis.__benchCounts ??= { imports: new Map(), exports: new Map(), on: false }); }
function __benchCountImports(imports) {
  const c = __benchCounts();
  const out = {};
  for (const [modName, mod] of Object.entries(imports)) {
    const copy = {};
    for (const [name, fn] of Object.entries(mod)) {
      copy[name] = typeof fn !== "function" ? fn : function (...args) { if (c.on) c.imports.set(name, (c.imports.get(name) ?? 0) + 1); return fn.apply(this, args); };
    }
    out[modName] = copy;
  }
  return out;
}
function __benchCountExports(exports) {
  const c = __benchCounts();
  const out = {};
  for (const [name, v] of Object.entries(exports)) {
    out[name] = typeof v === "function" ? (...args) => { if (c.on) c.exports.set(name, (c.exports.get(name) ?? 0) + 1); return v(...args); } : v;
  }
  return out;
}
`;
  writeFileSync(file, js);
}
const oursCounted = await import(pathToFileURL(join(counted, "index.js")).href);
const core = await import("@earendil-works/pi-agent-core");
const ai = await import("@earendil-works/pi-ai");
const impls = {
  ours: { Agent: oursCounted.Agent, streamProxy: oursCounted.streamProxy, createAssistantMessageEventStream: oursCounted.createAssistantMessageEventStream },
  reference: { Agent: core.Agent, streamProxy: core.streamProxy, createAssistantMessageEventStream: ai.createAssistantMessageEventStream },
};
const env = { mark: () => undefined, tick: setImmediate, proxyBase: server.base };
const counts = globalThis.__benchCounts;

say("## Boundary crossings and promises per event (Node, one run each after one warm-up)");
say();
say("Crossings: calls of the wasm module's imports (wasm → JS: wasm-bindgen shims, which call glue.js / proxy.js / JS built-ins) and exports (JS → wasm), counted by wrapping both in a copy of the package. `__wbindgen_malloc` / `__wbindgen_realloc` exports are JS → wasm string or buffer copies. Promises: `async_hooks` PROMISE inits (every promise created, including each `await`'s), for ours and the reference on the same run.");
say();
const countRuns = [];
for (const id of chosen) {
  const def = SCENARIO_DEFS[id];
  // S3: at two transcript sizes, to show what grows with the transcript.
  if (id.startsWith("S3")) for (const size of [500, 5_000]) countRuns.push({ id, label: `${id} at ${size.toLocaleString("en-US")} messages`, def, params: { ...def.params, size } });
  else countRuns.push({ id, label: id, def, params: def.params });
}
for (const { label, def, params } of countRuns) {
  prepare(def.scenario, params);
  const events = def.scenario === "s3" ? params.prompts : def.events;
  await SCENARIOS[def.scenario](impls.ours, env, params); // warm-up
  counts.imports.clear();
  counts.exports.clear();
  counts.on = true;
  await SCENARIOS[def.scenario](impls.ours, env, params);
  counts.on = false;
  const promises = {};
  for (const impl of ["ours", "reference"]) {
    let n = 0;
    const hook = createHook({ init(_id, type) { if (type === "PROMISE") n++; } });
    hook.enable();
    await SCENARIOS[def.scenario](impls[impl], env, params);
    hook.disable();
    promises[impl] = n / events;
  }
  const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  const imports = sum(counts.imports);
  const exports = sum(counts.exports);
  const allocs = (counts.exports.get("__wbindgen_malloc") ?? 0) + (counts.exports.get("__wbindgen_realloc") ?? 0);
  say(`### ${label}: per ${def.per}`);
  say();
  say(`- wasm → JS calls: **${(imports / events).toFixed(2)}**; JS → wasm calls: **${(exports / events).toFixed(2)}** (of which string/buffer copies into wasm: ${(allocs / events).toFixed(2)})`);
  say(`- promises created: ours **${promises.ours.toFixed(2)}**, reference **${promises.reference.toFixed(2)}**`);
  const top = [...counts.imports].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 12));
  say(`- most frequent wasm → JS calls: ${top.map(([n, c]) => `\`${n.replace(/^__wbg_/, "").replace(/_[0-9a-f]{16}$/, "")}\` ${(c / events).toFixed(2)}`).join(", ")}`);
  const topE = [...counts.exports].sort((a, b) => b[1] - a[1]).slice(0, 6);
  say(`- JS → wasm calls: ${topE.map(([n, c]) => `\`${n}\` ${(c / events).toFixed(2)}`).join(", ")}`);
  say();
}
server.close();
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "profile.md"), `${out.join("\n")}\n`);
log(`wrote ${join(outDir, "profile.md")} and profile-*.cpuprofile (open in Chrome DevTools › Performance)`);
process.exit(0);
