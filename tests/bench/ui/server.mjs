// The UI benchmark's HTTP server on 127.0.0.1, in its own process so that its CPU time never lands in the
// measured browser (tests/bench/ui/run.mjs starts it).
//
//   node tests/bench/ui/server.mjs '<JSON: { "/prefix/": "dir", … }>'    prints "READY <port>" on stdout
//
//   GET  /<prefix>/<file>             static files (the pages, their bundles, the pkg/ snapshot)
//   POST /pi/<workload>/api/stream    a streamProxy server's SSE body (pi's proxy events)
//   POST /aisdk/<workload>            the AI SDK's UI message stream, built with its own server helpers
//                                     (`createUIMessageStream`, `createUIMessageStreamResponse`), as
//                                     an app's route handler returns it to `useChat`
// A "fast" body goes out in 16 KB writes as fast as the socket takes them; a "paced" one in parts of
// 100 deltas, 16 ms apart. Each body is built once, before READY.
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import http from "node:http";
import { extname, join, normalize } from "node:path";
import { createUIMessageStream, createUIMessageStreamResponse } from "ai";
import { sseBody } from "../data.mjs";
import { WORKLOADS, pacedParts, piEvents, workloadDeltas } from "./workloads.mjs";

const mounts = JSON.parse(process.argv[2] ?? "{}");
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json", ".css": "text/css" };
const CHUNK = 16 * 1024;

/** The AI SDK's body for one answer: what `streamText(…).toUIMessageStreamResponse()` sends for a text answer. */
async function aiSdkBody(name) {
  const { deltas } = workloadDeltas(name);
  const stream = createUIMessageStream({
    execute({ writer }) {
      writer.write({ type: "start", messageId: "answer-1" });
      writer.write({ type: "start-step" });
      writer.write({ type: "text-start", id: "text-1" });
      for (const delta of deltas) writer.write({ type: "text-delta", id: "text-1", delta });
      writer.write({ type: "text-end", id: "text-1" });
      writer.write({ type: "finish-step" });
      writer.write({ type: "finish", finishReason: "stop" });
    },
  });
  const response = createUIMessageStreamResponse({ stream });
  return { headers: Object.fromEntries(response.headers), text: await response.text() };
}

const bodies = {};
for (const name of Object.keys(WORKLOADS)) {
  const { perTick } = WORKLOADS[name];
  const pi = sseBody(piEvents(name));
  const ai = await aiSdkBody(name);
  const split = (text, isDelta) => (perTick ? pacedParts(text, perTick, isDelta) : [text]).map((p) => Buffer.from(p));
  bodies[`pi/${name}`] = { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" }, parts: split(pi, (b) => b.startsWith('data: {"type":"text_delta"')) };
  bodies[`aisdk/${name}`] = { headers: ai.headers, parts: split(ai.text, (b) => b.startsWith('data: {"type":"text-delta"')) };
}

async function write(res, data) {
  for (let i = 0; i < data.length; i += CHUNK) {
    if (res.destroyed) return;
    if (!res.write(data.subarray(i, i + CHUNK))) await once(res, "drain");
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = http.createServer(async (req, res) => {
  try {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (req.method === "POST") {
      for await (const _ of req); // the request body: the prompt, not needed to answer
      const m = /^\/(pi|aisdk)\/(\w+)(?:\/api\/stream)?$/.exec(path);
      const body = m && bodies[`${m[1]}/${m[2]}`];
      if (!body) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: `no route ${path}` }));
        return;
      }
      res.writeHead(200, { ...body.headers, connection: "close" });
      const { tickMs } = WORKLOADS[m[2]];
      let next = performance.now();
      for (const part of body.parts) {
        if (tickMs && part !== body.parts[0]) {
          next += tickMs;
          await sleep(Math.max(0, next - performance.now()));
        }
        await write(res, part);
      }
      res.end();
      return;
    }
    const prefix = Object.keys(mounts).find((p) => path.startsWith(p));
    const rel = prefix && normalize(path.slice(prefix.length));
    if (!prefix || rel.startsWith("..")) {
      res.writeHead(404).end();
      return;
    }
    const file = join(mounts[prefix], rel);
    const content = await readFile(file);
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    res.end(content);
  } catch (error) {
    if (!res.headersSent) res.writeHead(error.code === "ENOENT" || error.code === "EISDIR" ? 404 : 500);
    res.end();
  }
});
server.keepAliveTimeout = 600_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`READY ${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
process.stdin.on("end", () => process.exit(0)); // parent gone
process.stdin.resume();
