// Self-test of tests/support/sse-server.mjs: the scripted server must deliver exactly what the scenarios
// think it delivers, or the differential results mean nothing.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startSseServer, scriptChunks, dataLine, closedPortUrl } from "../../support/sse-server.mjs";

const LINES = [{ type: "start" }, ": comment", { type: "text_delta", contentIndex: 0, delta: "🦀日本" }, { type: "done", reason: "stop" }, { type: "text_start", contentIndex: 1 }];
const WHOLE = Buffer.concat(scriptChunks({ lines: LINES }).map((c) => c.data));

test("scriptChunks: every chunking reassembles to the same bytes", () => {
	assert.equal(
		WHOLE.toString(),
		`${dataLine(LINES[0])}\n\n: comment\n${dataLine(LINES[2])}\n\n${dataLine(LINES[3])}\n\n${dataLine(LINES[4])}\n\n`,
	);
	for (const chunking of ["whole", "item", 1, 7, { random: 1 }, { random: 99, max: 3 }]) {
		const chunks = scriptChunks({ lines: LINES, chunking });
		assert.deepEqual(Buffer.concat(chunks.map((c) => c.data)), WHOLE, JSON.stringify(chunking));
		if (typeof chunking === "number") assert.ok(chunks.every((c, i) => c.data.length === chunking || i === chunks.length - 1));
	}
	assert.equal(scriptChunks({ lines: LINES, chunking: "item" }).length, LINES.length);
	// 1-byte chunks split the 4-byte crab into four writes.
	const one = scriptChunks({ lines: LINES, chunking: 1 });
	assert.equal(one.length, WHOLE.length);
	// Seeded random chunking is deterministic and depends on the seed.
	const sizes = (seed) => scriptChunks({ lines: LINES, chunking: { random: seed } }).map((c) => c.data.length);
	assert.deepEqual(sizes(5), sizes(5));
	assert.notDeepEqual(sizes(5), sizes(6));
});

test("scriptChunks: cutBefore, finalNewline, eol, explicit chunks", () => {
	const cut = Buffer.concat(scriptChunks({ lines: LINES, cutBefore: "terminal" }).map((c) => c.data)).toString();
	assert.ok(!cut.includes('"done"') && !cut.includes("text_start"));
	assert.ok(cut.endsWith(`${dataLine(LINES[2])}\n\n`));
	const bytes = Buffer.concat(scriptChunks({ lines: LINES, cutBefore: 10 }).map((c) => c.data));
	assert.equal(bytes.length, 10);
	const noNl = Buffer.concat(scriptChunks({ lines: LINES, finalNewline: false, eol: "\r\n" }).map((c) => c.data)).toString();
	assert.ok(noNl.endsWith(dataLine(LINES[4])));
	assert.ok(noNl.includes(`${dataLine(LINES[0])}\r\n\r\n`));
	const explicit = scriptChunks({ chunks: ["ab", { data: Buffer.from([0xf0, 0x9f]), delayMs: 5 }], delayMs: 1 });
	assert.deepEqual(explicit.map((c) => [c.data.length, c.delayMs]), [[2, 1], [2, 5]]);
});

test("server: records the request, streams the script, answers CORS preflight", { timeout: 10000 }, async () => {
	const srv = await startSseServer({ "/api/stream": { status: 200, lines: LINES, chunking: 3, delayMs: 0 } });
	try {
		assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+$/);
		assert.ok(srv.port > 0);
		const pre = await fetch(`${srv.url}/api/stream`, { method: "OPTIONS", headers: { origin: "http://127.0.0.1:1", "access-control-request-method": "POST" } });
		assert.equal(pre.status, 204);
		assert.equal(pre.headers.get("access-control-allow-origin"), "*");
		assert.match(pre.headers.get("access-control-allow-headers"), /content-type/);
		assert.match(pre.headers.get("access-control-allow-headers"), /authorization/);
		assert.match(pre.headers.get("access-control-allow-methods"), /POST/);
		const res = await fetch(`${srv.url}/api/stream?x=1`, {
			method: "POST",
			headers: { Authorization: "Bearer t", "Content-Type": "application/json" },
			body: JSON.stringify({ a: [1, "ü"] }),
		});
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("content-type"), "text/event-stream");
		assert.equal(res.headers.get("access-control-allow-origin"), "*");
		assert.deepEqual(Buffer.from(await res.arrayBuffer()), WHOLE);
		await srv.settled();
		const post = srv.requests.find((r) => r.method === "POST");
		assert.equal(post.path, "/api/stream");
		assert.equal(post.headers.authorization, "Bearer t");
		assert.deepEqual(post.body, { a: [1, "ü"] });
		assert.equal(post.finished, true);
		assert.equal(post.clientClosed, false);
		const missing = await fetch(`${srv.url}/nope`, { method: "POST", body: "x" });
		assert.equal(missing.status, 404);
		assert.deepEqual(await missing.json(), { error: "no route for /nope" });
	} finally {
		await srv.close();
	}
});

test("server: status text, non-JSON error body, route arrays and functions", { timeout: 10000 }, async () => {
	const srv = await startSseServer({
		"/a": { status: 502, body: "<html>bad</html>", statusText: "Very Bad Gateway" },
		"/b": [{ status: 200, body: "first" }, { status: 201, body: "then" }],
		"/c": (rec) => ({ status: 200, json: { echo: rec.body } }),
	});
	try {
		const a = await fetch(`${srv.url}/a`, { method: "POST" });
		assert.equal(a.status, 502);
		assert.equal(a.statusText, "Very Bad Gateway");
		assert.equal(await a.text(), "<html>bad</html>");
		const b = [];
		for (let i = 0; i < 3; i++) b.push(await (await fetch(`${srv.url}/b`, { method: "POST" })).text());
		assert.deepEqual(b, ["first", "then", "then"]);
		const c = await fetch(`${srv.url}/c`, { method: "POST", body: '{"q":1}' });
		assert.deepEqual(await c.json(), { echo: { q: 1 } });
	} finally {
		await srv.close();
	}
});

test("server: a hang ends when the client aborts (res close), and is bounded otherwise", { timeout: 10000 }, async () => {
	const srv = await startSseServer({ "/h": { status: 200, lines: [{ type: "start" }], end: "hang", hangMs: 400 } });
	try {
		const ac = new AbortController();
		const res = await fetch(`${srv.url}/h`, { method: "POST", signal: ac.signal });
		const reader = res.body.getReader();
		await reader.read();
		ac.abort();
		await srv.settled();
		assert.equal(srv.requests[0].clientClosed, true);
		// Without a client abort the hang stops by itself after hangMs and the body ends normally
		// (after a timer shorter than the hang: order, not duration).
		let shortTimer = false;
		setTimeout(() => (shortTimer = true), 50);
		const text = await (await fetch(`${srv.url}/h`, { method: "POST" })).text();
		assert.equal(text, `${dataLine({ type: "start" })}\n\n`);
		assert.equal(shortTimer, true, "the body ended after the hang, not at once");
		assert.equal(srv.requests[1].finished, true);
	} finally {
		await srv.close();
	}
});

test("server: close() ends hanging responses and pending delays at once", { timeout: 10000 }, async () => {
	const srv = await startSseServer({ "/h": { status: 200, lines: [{ type: "start" }, { type: "start" }], chunking: "item", delayMs: 5000, end: "hang", hangMs: 10000 } });
	const res = await fetch(`${srv.url}/h`, { method: "POST" });
	const body = res.text().catch((e) => e);
	// close() ends the 10 s hang and the 5 s delay: it settles (within the test's timeout) and cuts the body
	await srv.close();
	const out = await body;
	assert.ok(out instanceof Error, "the open response is cut");
	await srv.close(); // idempotent
});

test("server: destroy mode cuts the body mid-stream (client sees an error)", { timeout: 10000 }, async () => {
	const srv = await startSseServer({ "/d": { status: 200, lines: [{ type: "start" }], end: "destroy" } });
	try {
		const res = await fetch(`${srv.url}/d`, { method: "POST" });
		await assert.rejects(res.text(), /terminated/);
	} finally {
		await srv.close();
	}
});

test("server: headersDelayMs delays the response head", { timeout: 10000 }, async () => {
	const srv = await startSseServer({ "/s": { status: 200, body: "x", headersDelayMs: 200 } });
	try {
		let shortTimer = false;
		setTimeout(() => (shortTimer = true), 20);
		await fetch(`${srv.url}/s`, { method: "POST" });
		assert.equal(shortTimer, true, "the head came after a timer shorter than the delay");
	} finally {
		await srv.close();
	}
});

test("closedPortUrl: nothing listens there", { timeout: 10000 }, async () => {
	const url = await closedPortUrl();
	await assert.rejects(
		new Promise((resolve, reject) => http.get(url, resolve).on("error", reject)),
		/ECONNREFUSED/,
	);
});

test("a context a strict provider rejects gets HTTP 400 naming the problem, unless strict: false", async () => {
	const orphan = { messages: [{ role: "user", content: "a", timestamp: 1 }, { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }], stopReason: "toolUse" }, { role: "user", content: "b", timestamp: 2 }] };
	const post = (srv, context) => fetch(`${srv.url}/api/stream`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ context }) });
	const strict = await startSseServer({ "/api/stream": { lines: LINES } });
	try {
		const res = await post(strict, orphan);
		assert.equal(res.status, 400);
		assert.match((await res.json()).error, /^invalid context for a strict provider: messages\[1\]: tool call "c1" \(t\) is followed by user/);
		assert.equal(strict.requests[0].strictProblems.length, 1);
		assert.equal((await post(strict, { messages: orphan.messages.slice(0, 1) })).status, 200);
	} finally {
		await strict.close();
	}
	const lax = await startSseServer({ "/api/stream": { lines: LINES } }, { strict: false });
	try {
		assert.equal((await post(lax, orphan)).status, 200);
	} finally {
		await lax.close();
	}
});
