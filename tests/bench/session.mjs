// `npm run bench`, sessions: S1 (one prompt, 20,000 text deltas × 50 chars) with and without
// pi-agent-wasm/session attached: Node with memoryStore(), Chromium with the real IndexedDB.
// Runs interleaved (without, with, …) after warm-ups; reports medians and ratios of the run's
// CPU time (Chromium: main-thread TaskDuration over CDP, as the other Chromium scenarios), of the
// CPU time until the session's writes landed (the cost of persisting, wherever it falls), and of
// the run's wall time, and what was written. Standalone: node tests/bench/session.mjs [--runs N]
// (21). run.mjs calls sessionBench() with 3× its --runs.
import http from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../support/chromium.mjs";
import { MODEL, textDeltas, usage } from "./data.mjs";
import { s1Session } from "./session-scenario.mjs";

const HERE = fileURLToPath(new URL("./", import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

const FIELDS = ["run", "runCpu", "flushed", "flushedCpu"];

async function measure(runOnce, runs, warm) {
  for (let i = 0; i < warm; i++) {
    await runOnce(false);
    await runOnce(true);
  }
  const series = () => Object.fromEntries(FIELDS.map((f) => [f, []]));
  const without = series();
  const withS = series();
  const alone = series();
  // Per interleaved triple, the session's CPU until its writes landed over the app's own write's.
  const overFloor = [];
  let last;
  for (let i = 0; i < runs; i++) {
    const a = await runOnce(false);
    last = await runOnce(true);
    const b = await runOnce("alone");
    for (const f of FIELDS) {
      without[f].push(a[f]);
      withS[f].push(last[f]);
      alone[f].push(b[f]);
    }
    overFloor.push(last.flushedCpu / b.flushedCpu);
  }
  const med = (o) => Object.fromEntries(FIELDS.map((f) => [f, median(o[f])]));
  return { without: med(without), with: med(withS), alone: med(alone), overFloor: median(overFloor), written: last.written, writes: last.writes };
}

const ratio = (r, f) => `${ms(r.with[f])} vs ${ms(r.without[f])}, ${(r.with[f] / r.without[f]).toFixed(2)}×`;

function line(env, r, store, cpuName) {
  return `S1 with a session (${store}), ${env}, with vs without (medians): ${cpuName} of the run ${ratio(r, "runCpu")}; ` +
    `${cpuName} until the session's writes landed ${ratio(r, "flushedCpu")}; wall time of the run ${ratio(r, "run")}; ` +
    `${r.writes} writes, ${(r.written / 1e6).toFixed(2)} MB written for a 1.00 MB answer. ` +
    `Without a session, the app appending the answer's text to the same store once the run is over: ${cpuName} until it landed ` +
    `${ms(r.alone.flushedCpu)}, ${(r.alone.flushedCpu / r.without.flushedCpu).toFixed(2)}× (the least that keeping the answer costs). ` +
    `The session over that floor, ${cpuName} until the writes landed: ${r.overFloor.toFixed(2)}× (median of the interleaved runs' ratios).`;
}

export async function sessionBench({ pkgDir = join(HERE, "../../pkg"), runs = 21, log = () => {}, chromium: withChromium = true } = {}) {
  const out = [];
  if (!existsSync(join(pkgDir, "session/index.js"))) return ["S1 with a session: skipped (pkg/ has no session.js)."];
  const deltas = textDeltas(20_000, 50);
  // ---- Node, memoryStore()
  const { Agent, createAssistantMessageEventStream } = await import(pathToFileURL(join(pkgDir, "index.js")));
  const { attachSession, memoryStore } = await import(pathToFileURL(join(pkgDir, "session/index.js")));
  const store = memoryStore();
  const env = { Agent, createAssistantMessageEventStream, attachSession, store, tick: setImmediate, deltas, MODEL, usage,
    now: () => performance.now(), cpu: () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } };
  log("S1 with a session: Node");
  const node = await measure((w) => s1Session(env, w), runs, 3);
  out.push(line("Node", node, "memoryStore()", "CPU time"));
  if (!withChromium) return out;

  // ---- Chromium, indexedDBStore()
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(req.url.split("?")[0]);
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end(`<!doctype html><script type="module">
import { Agent, createAssistantMessageEventStream } from "/pkg/index.js";
import { attachSession, indexedDBStore } from "/pkg/session/index.js";
import { MODEL, textDeltas, usage } from "/bench/data.mjs";
import { s1Session } from "/bench/session-scenario.mjs";
const deltas = textDeltas(20000, 50);
const channel = new MessageChannel();
const queue = [];
channel.port1.onmessage = () => queue.shift()();
const tick = (f) => { queue.push(f); channel.port2.postMessage(0); };
const env = { Agent, createAssistantMessageEventStream, attachSession, store: indexedDBStore({ name: "bench" }), tick, deltas, MODEL, usage,
  now: () => performance.now(), cpu: () => window.__cpu() };
window.runOnce = (w, o) => s1Session({ ...env, sessionOptions: o }, w);
window.ready = true;
</script>`);
    }
    const [root, rest] = path.startsWith("/pkg/") ? [pkgDir, path.slice(5)] : path.startsWith("/bench/") ? [HERE, path.slice(7)] : [];
    const file = root && resolve(root, rest);
    if (!file || !file.startsWith(resolve(root) + sep) || !existsSync(file)) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": { ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript" }[extname(file)] ?? "text/plain" });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    // Main-thread CPU time as the other Chromium scenarios measure it (TaskDuration in thread ticks).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
    await page.exposeBinding("__cpu", async () => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "TaskDuration").value * 1000);
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => window.ready === true);
    log("S1 with a session: Chromium");
    const chrome = await measure((w) => page.evaluate((x) => window.runOnce(x), w), runs, 3);
    out.push(line("Chromium", chrome, "indexedDBStore()", "main-thread CPU time"));
  } finally {
    await browser.close();
    server.close();
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf("--runs");
  for (const l of await sessionBench({ runs: i > 0 ? Number(process.argv[i + 1]) : 21, log: (m) => process.stderr.write(m + "\n") })) console.log(l);
}
