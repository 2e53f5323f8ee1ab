#!/usr/bin/env node
// The server half (pi-agent-wasm/server), in `npm run bench`, or alone:
//   node tests/bench/server-side.mjs [--runs N (11)] [--tokens N (20000)] [--streams N (200)] [--no-postgres]
//
// 1. Server CPU per streamed token: createProxyHandler (through toNodeHandler on Node's http) against the
//    least a relay costs, pi-ai's stream written to SSE by hand in the same server process (one `res.write`
//    of `data: <event without partial>` per event, as a hand-written endpoint does; and the same with the
//    writes of each macrotask corked into one socket write). All relay the same
//    pi-ai stream (createAssistantMessageEventStream, a text delta of 6 characters per token, 16 events per
//    macrotask as a provider's network chunks bring them, the partial message grown in place as pi-ai's
//    providers do). The server is a child process that measures its own CPU (process.cpuUsage) from a
//    request's arrival to its response's end; the client, this process, reads every byte. Runs interleaved.
// 2. 200 concurrent streams from 127.0.0.1 (each 200 tokens, one event every 5 ms): time to the first
//    byte of each, the time for all, and errors (a non-200, a stream without its `done`), ours and the relay.
// 3. The session store: append (2 kB records, each naming the length it extends) and restore (a 1 MB log
//    of 500 appends) on PGlite (in the server's process) and on a Postgres server (Debian's, on 127.0.0.1),
//    through sessionDatabase directly and through createStoreHandler + httpStore over HTTP.
import { fork } from "node:child_process";
import http from "node:http";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const TOKEN_TEXT = " token";

// ---- the server process -----------------------------------------------------------------------
if (process.argv[2] === "--serve") {
	const pkgDir = process.argv[3];
	const { createAssistantMessageEventStream } = await import("@earendil-works/pi-ai");
	const { createProxyHandler, toNodeHandler } = await import(`${pkgDir}/server/index.js`);
	const usage = { input: 10, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	/** pi-ai's stream of `n` text deltas, `batch` per macrotask (or one every `everyMs`). */
	const source = (model, n, { batch = 16, everyMs = 0 } = {}) => {
		const stream = createAssistantMessageEventStream();
		const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: { ...usage }, stopReason: "stop", timestamp: Date.now() };
		let i = 0;
		const step = () => {
			for (let k = 0; k < batch && i < n; k++, i++) {
				partial.content[0].text += TOKEN_TEXT;
				stream.push({ type: "text_delta", contentIndex: 0, delta: TOKEN_TEXT, partial });
			}
			if (i < n) return everyMs > 0 ? setTimeout(step, everyMs) : setImmediate(step);
			stream.push({ type: "text_end", contentIndex: 0, content: partial.content[0].text, partial });
			partial.usage = { ...usage, output: n, totalTokens: 10 + n };
			stream.push({ type: "done", reason: "stop", message: partial });
			stream.end();
		};
		setImmediate(() => {
			stream.push({ type: "start", partial });
			partial.content.push({ type: "text", text: "" });
			stream.push({ type: "text_start", contentIndex: 0, partial });
			step();
		});
		return stream;
	};
	const model = { id: "bench", name: "bench", api: "bench-api", provider: "bench", baseUrl: "", reasoning: false, input: ["text"], cost: {}, contextWindow: 1e6, maxTokens: 1e9 };
	const shape = (req) => ({ n: Number(req.headers["x-tokens"]), batch: Number(req.headers["x-batch"] ?? 16), everyMs: Number(req.headers["x-every-ms"] ?? 0) });
	let current;
	const proxy = toNodeHandler(
		createProxyHandler({
			authorize: (request) => request.headers.get("x-user") ?? null,
			models: [model],
			stream: (m) => source(m, current.n, current),
			limits: { streamsPerUser: 1000 },
		}),
	);
	/**
	 * The hand-written relay: the body read and parsed, then one write per event (with `corked`, the
	 * writes of one macrotask corked into one, the least a relay can do).
	 */
	const relay = (req, res, corked = false) => {
		let raw = "";
		req.setEncoding("utf8");
		req.on("data", (d) => (raw += d));
		req.on("end", async () => {
			JSON.parse(raw);
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
			let uncork = false;
			for await (const e of source(model, current.n, current)) {
				if (corked && !uncork) {
					res.cork();
					uncork = true;
					setImmediate(() => {
						uncork = false;
						res.uncork();
					});
				}
				if (e.type === "done") res.write(`data: ${JSON.stringify({ type: "done", reason: e.reason, usage: e.message.usage })}\n\n`);
				else {
					const { partial, content, ...rest } = e;
					res.write(`data: ${JSON.stringify(rest)}\n\n`);
				}
			}
			res.end();
		});
	};
	const cpu = [];
	const server = http.createServer((req, res) => {
		if (req.url === "/stats") {
			res.end(JSON.stringify(cpu.splice(0)));
			return;
		}
		const measure = req.headers["x-measure"] === "1";
		const start = measure ? process.cpuUsage() : undefined;
		if (measure) res.on("finish", () => {
			const d = process.cpuUsage(start);
			cpu.push(d.user + d.system);
		});
		current = shape(req);
		if (req.url === "/relay") relay(req, res);
		else if (req.url === "/relay-corked") relay(req, res, true);
		else proxy(req, res);
	});
	server.keepAliveTimeout = 60_000;
	server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
	process.on("message", (m) => m === "stop" && process.exit(0));
	await new Promise(() => {});
}

// ---- the client (this process) ----------------------------------------------------------------
const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x, d = 2) => x.toFixed(d);
const load = () => loadavg().map((x) => x.toFixed(2)).join(" / ");
const BODY = JSON.stringify({
	model: { provider: "bench", id: "bench", api: "bench-api" },
	context: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 }] },
	options: {},
});

/** One streaming request; resolves { status, firstByteMs, totalMs, done }. */
function stream(port, path, headers) {
	return new Promise((resolve) => {
		const t0 = performance.now();
		let firstByteMs;
		let tail = "";
		const req = http.request({ host: "127.0.0.1", port, path, method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(BODY), ...headers } }, (res) => {
			res.on("data", (chunk) => {
				firstByteMs ??= performance.now() - t0;
				tail = (tail + chunk.toString("latin1")).slice(-400);
			});
			res.on("end", () => resolve({ status: res.statusCode, firstByteMs, totalMs: performance.now() - t0, done: tail.includes('"type":"done"') }));
			res.on("error", () => resolve({ status: res.statusCode, firstByteMs, totalMs: performance.now() - t0, done: false }));
		});
		req.on("error", (e) => resolve({ status: 0, error: e.message, done: false }));
		req.end(BODY);
	});
}

async function startBenchServer(pkgDir) {
	const child = fork(fileURLToPath(import.meta.url), ["--serve", pkgDir], { stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv: [] });
	const { port } = await new Promise((resolve, reject) => {
		child.once("message", resolve);
		child.once("exit", (code) => reject(new Error(`bench server exited (${code})`)));
	});
	const stats = () =>
		new Promise((resolve) => http.get({ host: "127.0.0.1", port, path: "/stats", agent: false }, (res) => {
			let d = "";
			res.on("data", (c) => (d += c));
			res.on("end", () => resolve(JSON.parse(d)));
		}));
	return { port, stats, stop: () => child.send("stop") };
}

/** Server CPU per token, ours and the relay interleaved. */
export async function cpuPerToken({ pkgDir, runs = 11, tokens = 20_000, log = () => {} }) {
	const server = await startBenchServer(pkgDir);
	try {
		const per = { ours: [], relay: [], corked: [] };
		const headers = { "x-tokens": String(tokens), "x-user": "u", "x-measure": "1" };
		const order = [["ours", "/api/stream"], ["relay", "/relay"], ["corked", "/relay-corked"]];
		for (let i = 0; i < runs + 2; i++) {
			for (const [name, path] of [...order.slice(i % 3), ...order.slice(0, i % 3)]) {
				const r = await stream(server.port, path, headers);
				if (r.status !== 200 || !r.done) throw new Error(`${name}: status ${r.status}, done ${r.done}`);
				const [us] = await server.stats();
				if (i >= 2) per[name].push(us / tokens); // two warm-up rounds
			}
		}
		const range = (xs) => [Math.min(...xs), Math.max(...xs)];
		const ratio = (base) => median(per.ours.map((x, i) => x / base[i]));
		const out = { ours: median(per.ours), relay: median(per.relay), corked: median(per.corked), ratio: ratio(per.relay), corkedRatio: ratio(per.corked) };
		Object.assign(out, { oursRange: range(per.ours), relayRange: range(per.relay), corkedRange: range(per.corked) });
		log(`CPU per token: ours ${fmt(out.ours, 3)} µs, relay ${fmt(out.relay, 3)} µs, corked relay ${fmt(out.corked, 3)} µs`);
		return out;
	} finally {
		server.stop();
	}
}

/** `count` concurrent streams to each endpoint (ours, then the relay): first-byte latency, total time, errors. */
export async function concurrentStreams({ pkgDir, count = 200, tokens = 200, log = () => {} }) {
	const server = await startBenchServer(pkgDir);
	try {
		const out = {};
		for (const [name, path] of [["ours", "/api/stream"], ["relay", "/relay"]]) {
			const t0 = performance.now();
			const results = await Promise.all(Array.from({ length: count }, (_, i) => stream(server.port, path, { "x-tokens": String(tokens), "x-batch": "1", "x-every-ms": "5", "x-user": `user-${i % 50}` })));
			const wall = performance.now() - t0;
			const firsts = results.map((r) => r.firstByteMs ?? Infinity);
			const errors = results.filter((r) => r.status !== 200 || !r.done).length;
			out[name] = { errors, wall, firstMedian: median(firsts), firstMax: Math.max(...firsts), firstP95: [...firsts].sort((a, b) => a - b)[Math.floor(count * 0.95)] };
			log(`${count} streams, ${name}: ${errors} errors, first byte median ${fmt(out[name].firstMedian, 1)} ms, max ${fmt(out[name].firstMax, 1)} ms, all done in ${fmt(wall, 0)} ms`);
			await server.stats();
		}
		return out;
	} finally {
		server.stop();
	}
}

/** Append and restore times of the session store, on PGlite and on Postgres, directly and over HTTP. */
export async function storeTimes({ pkgDir, postgres = true, log = () => {} }) {
	const { sessionDatabase, createStoreHandler, toNodeHandler } = await import(`${pkgDir}/server/index.js`);
	const { httpStore } = await import(`${pkgDir}/session/index.js`);
	const { PGlite } = await import("@electric-sql/pglite");
	const record = (i) => `${JSON.stringify({ t: "m", m: { role: "user", content: [{ type: "text", text: `message ${i} `.padEnd(2000, "lorem ipsum ") }], timestamp: i } })}\n`;
	const APPENDS = 500;
	const rows = [];
	const kinds = [["PGlite", async () => ({ client: new PGlite(), close: (c) => c.close() })]];
	let cluster;
	if (postgres) {
		const { startPostgres } = await import("../support/postgres.mjs");
		cluster = await startPostgres();
		const pg = (await import("pg")).default;
		kinds.push(["Postgres", async () => ({ client: new pg.Pool({ connectionString: cluster.url }), close: (c) => c.end() })]);
	}
	try {
		for (const [name, open] of kinds) {
			const { client, close } = await open();
			const db = sessionDatabase(client, { table: `bench_${Date.now()}` });
			await db.ready();
			const direct = db.forOwner("bench");
			const srv = http.createServer(toNodeHandler(createStoreHandler({ authorize: () => "bench", database: db })));
			await new Promise((r) => srv.listen(0, "127.0.0.1", r));
			const overHttp = httpStore(`http://127.0.0.1:${srv.address().port}/s`);
			for (const [via, store] of [["direct", direct], ["HTTP", overHttp]]) {
				const id = `log-${via}`;
				let length = 0;
				const appends = [];
				for (let i = 0; i < APPENDS; i++) {
					const text = record(i);
					const t0 = performance.now();
					await store.append(id, text, { length });
					appends.push(performance.now() - t0);
					length += text.length;
				}
				const loads = [];
				for (let i = 0; i < 7; i++) {
					const t0 = performance.now();
					const text = await store.load(id);
					loads.push(performance.now() - t0);
					if (text.length !== length) throw new Error(`${name} ${via}: restored ${text.length} of ${length} characters`);
				}
				const row = { name, via, appendMedian: median(appends.slice(20)), appendP95: [...appends.slice(20)].sort((a, b) => a - b)[Math.floor((APPENDS - 20) * 0.95)], restore: median(loads), size: length };
				rows.push(row);
				log(`store ${name} ${via}: append ${fmt(row.appendMedian)} ms (p95 ${fmt(row.appendP95)}), restore of ${(length / 1e6).toFixed(2)} M chars in ${APPENDS} appends ${fmt(row.restore)} ms`);
			}
			await new Promise((r) => srv.close(r));
			await close(client);
		}
	} finally {
		cluster?.stop();
	}
	return rows;
}

/** All three, as the markdown `npm run bench` adds to its report. */
export async function serverBench({ pkgDir, runs = 11, tokens = 20_000, streams = 200, postgres = true, log = () => {} }) {
	const loadStart = load();
	const cpu = await cpuPerToken({ pkgDir, runs, tokens, log });
	const concurrent = await concurrentStreams({ pkgDir, count: streams, log });
	const store = await storeTimes({ pkgDir, postgres, log });
	const range = ([a, b], d = 3) => `${fmt(a, d)}–${fmt(b, d)}`;
	const c = (o) => `${o.errors} | ${fmt(o.firstMedian, 1)} | ${fmt(o.firstP95, 1)} | ${fmt(o.firstMax, 1)} | ${fmt(o.wall, 0)}`;
	return `The server half (tests/bench/server-side.mjs), load average ${loadStart} at its start, ${load()} at its end:

| server CPU per streamed token (Node, ${tokens.toLocaleString("en")} tokens, median of ${runs} interleaved runs) | µs | range |
|---|---:|---:|
| createProxyHandler through toNodeHandler | ${fmt(cpu.ours, 3)} | ${range(cpu.oursRange)} |
| pi-ai's stream written to SSE by hand (one write per event) | ${fmt(cpu.relay, 3)} | ${range(cpu.relayRange)} |
| the same, each macrotask's writes corked into one | ${fmt(cpu.corked, 3)} | ${range(cpu.corkedRange)} |
| ours / hand-written relay (median of the runs' ratios) | ${fmt(cpu.ratio)}× | |
| ours / corked relay | ${fmt(cpu.corkedRatio)}× | |

| ${streams} concurrent streams from 127.0.0.1 (200 tokens each, one every 5 ms) | errors | first byte, median ms | p95 | max | all done, ms |
|---|---:|---:|---:|---:|---:|
| createProxyHandler | ${c(concurrent.ours)} |
| hand-written relay | ${c(concurrent.relay)} |

| session store, 500 appends of 2 kB (each naming the length it extends), then restores of the log | append, median ms | append p95 | restore, median ms |
|---|---:|---:|---:|
${store.map((r) => `| ${r.name}, ${r.via === "direct" ? "sessionDatabase" : "createStoreHandler + httpStore over HTTP"} | ${fmt(r.appendMedian)} | ${fmt(r.appendP95)} | ${fmt(r.restore)} (${(r.size / 1e6).toFixed(2)} M chars) |`).join("\n")}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== "--serve") {
	const arg = (name, fallback) => {
		const i = process.argv.indexOf(name);
		return i >= 0 ? Number(process.argv[i + 1]) : fallback;
	};
	const { resolve } = await import("node:path");
	const markdown = await serverBench({
		pkgDir: resolve(HERE, "../../pkg"),
		runs: arg("--runs", 11),
		tokens: arg("--tokens", 20_000),
		streams: arg("--streams", 200),
		postgres: !process.argv.includes("--no-postgres"),
		log: (line) => process.stderr.write(`[server bench] ${line}\n`),
	});
	process.stdout.write(`${markdown}\n`);
}
