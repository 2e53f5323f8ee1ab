// The benchmark's HTTP server on 127.0.0.1, run as its own process so that its CPU time never lands in
// the measured process (Node's process.cpuUsage() counts the whole process).
//
//   node tests/bench/server.mjs <dir-of-pkg-snapshot> <dir-of-reference-bundle>
//   prints "READY <port>" on stdout
//
//   GET  /bench/<file>              tests/bench/<file> (the page and the shared modules)
//   GET  /pkg/<file>                the pkg/ snapshot under test
//   GET  /ref/<file>                the browser bundle of the reference
//   POST /<variant>/api/stream      a streamProxy server: the SSE body of PROXY_VARIANTS[variant],
//                                   written in 16 KB writes as fast as the socket takes them, then
//                                   the connection is closed
//   POST /<variant>/gate/<id>/api/stream   the same body in six parts (head up to toolcall_start, the
//                                   four quarters of the tool-call deltas, tail); part k+1 waits for
//                                   POST /gate/<id>/<k> (k = 0…4)
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import http from "node:http";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { PROXY_VARIANTS, sseBody, ssePartsByQuarter } from "./data.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [pkgDir, refDir] = process.argv.slice(2);
const roots = { bench: here, pkg: pkgDir, ref: refDir };
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json", ".map": "application/json" };
const CHUNK = 16 * 1024;

const bodies = new Map();
function body(variant) {
  if (!bodies.has(variant)) bodies.set(variant, Buffer.from(sseBody(PROXY_VARIANTS[variant]())));
  return bodies.get(variant);
}
const partsCache = new Map();
function parts(variant) {
  if (!partsCache.has(variant)) partsCache.set(variant, ssePartsByQuarter(PROXY_VARIANTS[variant]()).map((p) => Buffer.from(p)));
  return partsCache.get(variant);
}

// Gates of gated streams: id -> { opened: Set<k>, waiters: Map<k, resolve> }
const gates = new Map();
function gate(id) {
  if (!gates.has(id)) gates.set(id, { opened: new Set(), waiters: new Map() });
  return gates.get(id);
}
function waitGate(id, k) {
  const g = gate(id);
  if (g.opened.has(k)) return Promise.resolve();
  return new Promise((resolve) => g.waiters.set(k, resolve));
}
function openGate(id, k) {
  const g = gate(id);
  g.opened.add(k);
  g.waiters.get(k)?.();
  g.waiters.delete(k);
}

async function write(res, data) {
  for (let i = 0; i < data.length; i += CHUNK) {
    if (res.destroyed) return;
    if (!res.write(data.subarray(i, i + CHUNK))) await once(res, "drain");
  }
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://x");
    res.setHeader("cache-control", "no-store");
    if (req.method === "POST") {
      for await (const _ of req); // read the request body
      const g = /^\/gate\/(\w+)\/(\d)$/.exec(url.pathname);
      if (g) {
        openGate(g[1], Number(g[2]));
        res.writeHead(204).end();
        return;
      }
      const m = /^\/([\w-]+)(?:\/gate\/(\w+))?\/api\/stream$/.exec(url.pathname);
      if (!m || !(m[1] in PROXY_VARIANTS)) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: `no route ${url.pathname}` }));
        return;
      }
      // A fresh connection per stream: a client that takes longer than keepAliveTimeout to consume the
      // body (the reference on S4b) would otherwise find its pooled socket closed on the next request.
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
      const id = m[2];
      if (id === undefined) await write(res, body(m[1]));
      else {
        const list = parts(m[1]);
        for (let k = 0; k < list.length; k++) {
          if (k > 0) await waitGate(id, k - 1);
          await write(res, list[k]);
        }
        gates.delete(id);
      }
      res.end();
      return;
    }
    const [, top, ...rest] = url.pathname.split("/");
    const root = roots[top];
    const rel = normalize(rest.join("/"));
    if (!root || rel.startsWith("..")) {
      res.writeHead(404).end();
      return;
    }
    const file = join(root, rel);
    const content = await readFile(file);
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(content);
  } catch (error) {
    if (!res.headersSent) res.writeHead(error.code === "ENOENT" ? 404 : 500);
    res.end();
  }
});
server.keepAliveTimeout = 600_000;
server.listen(0, "127.0.0.1", () => {
  // Build the big bodies now, before anyone measures.
  for (const variant of Object.keys(PROXY_VARIANTS)) body(variant);
  process.stdout.write(`READY ${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
process.stdin.on("end", () => process.exit(0)); // parent gone
process.stdin.resume();
