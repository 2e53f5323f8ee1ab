// The session store on the server (createStoreHandler + sessionDatabase of pi-agent-wasm/server,
// httpStore of pi-agent-wasm/session), against PGlite and against a Postgres server from Debian's
// packages (started here on 127.0.0.1 and stopped at the end): the HTTP protocol, each user's own
// sessions, two writers racing on one session, a writer that dies mid-append (its body cut on the
// way, or its process killed while it appends), and a restore with attachSession after either.
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { startPostgres } from "../support/postgres.mjs";
import { assertStrictContext } from "../support/strict-transcript.mjs";
import { exchange, exchangeTags, header } from "./fixtures/records.mjs";
import { request, serve, server, waitFor } from "./support.mjs";

const { Agent } = await import("../../pkg/index.js");
const { attachSession, httpStore } = await import("../../pkg/session/index.js");
const { readLog } = await import("../../pkg/session/log.js");
const { createStoreHandler, sessionDatabase } = server;

const TOKENS = { "token-ada": "ada", "token-bob": "bob" };
const authorize = (req) => TOKENS[(req.headers.get("authorization") ?? "").replace(/^Bearer /, "")] ?? null;
const FIXTURE = new URL("./fixtures/append-loop.mjs", import.meta.url).pathname;

const postgres = await startPostgres();
process.on("exit", () => postgres.stop());
test.after(() => postgres.stop());
let tables = 0;

const DATABASES = {
	PGlite: {
		async open() {
			const client = new PGlite();
			return { db: sessionDatabase(client), close: () => client.close() };
		},
		/** A data directory a child process writes and this process opens after it died. */
		async place() {
			const dir = mkdtempSync(join(tmpdir(), "pi-pglite-"));
			return { where: `pglite:${dir}`, table: "pi_agent_sessions", reopen: () => new PGlite(dir), remove: () => rmSync(dir, { recursive: true, force: true }) };
		},
	},
	Postgres: {
		async open() {
			const pool = new pg.Pool({ connectionString: postgres.url, max: 20 });
			return { db: sessionDatabase(pool, { table: `t${++tables}` }), close: () => pool.end() };
		},
		async place() {
			const table = `t${++tables}`;
			return { where: postgres.url, table, reopen: () => new pg.Pool({ connectionString: postgres.url }), remove() {} };
		},
	},
};

/** A restore as an app makes it: an Agent with a session on `store`; the transcript must suit a strict provider. */
async function restore(store, id) {
	const agent = new Agent({ initialState: { systemPrompt: "test" }, streamFn: () => Promise.reject(new Error("no run here")) });
	const session = await attachSession(agent, { id, store, tabs: false });
	assert.equal(session.error, undefined, session.error?.message);
	const messages = agent.state.messages.filter((m) => m.role !== "system");
	assertStrictContext({ messages });
	await session.detach();
	return { session, messages };
}

for (const [name, kind] of Object.entries(DATABASES)) {
	test(`the store over HTTP on ${name}`, { timeout: 120_000 }, async (t) => {
		const { db, close } = await kind.open();
		t.after(close);
		const handled = [];
		const handler = createStoreHandler({ authorize, database: db, limits: { logChars: 1_000_000, bodyMs: 2_000 } });
		const srv = await serve(async (req) => {
			const res = await handler(req);
			handled.push(`${req.method} ${res.status}`);
			return res;
		});
		t.after(() => srv.close());
		const ada = httpStore(`${srv.url}/api/sessions`, { headers: { authorization: "Bearer token-ada" } });
		const ada2 = httpStore(`${srv.url}/api/sessions/`, { headers: async () => ({ authorization: "Bearer token-ada" }) });
		const bob = httpStore(`${srv.url}/api/sessions`, { headers: { authorization: "Bearer token-bob" } });

		await t.test("append, load, loadFrom, replace, clear; a stale length is a SessionConflictError", async () => {
			assert.equal(await ada.load("s/1"), "");
			await ada.append("s/1", "hello\n", { length: 0 });
			await ada.append("s/1", "world\n", { length: 6 });
			await assert.rejects(ada.append("s/1", "stale\n", { length: 6 }), { name: "SessionConflictError", length: 12 });
			await assert.rejects(ada2.append("s/1", "stale\n", { length: 0 }), { name: "SessionConflictError", length: 12 });
			assert.equal(await ada2.load("s/1"), "hello\nworld\n");
			assert.equal(await ada.loadFrom("s/1", 8), "rld\n");
			assert.equal(await ada.loadFrom("s/1", 12), "");
			await ada.append("s/1", "free\n"); // no length: appended whatever the log holds
			await assert.rejects(ada.replace("s/1", "new\n", { length: 3 }), { name: "SessionConflictError", length: 17 });
			await ada.replace("s/1", "new\n", { length: 17 });
			assert.equal(await ada.load("s/1"), "new\n");
			await ada.append("s/1", "more\n", { length: 4 });
			await ada.clear("s/1");
			assert.equal(await ada.load("s/1"), "");
			await ada.append("s/1", "again\n", { length: 0 });
			assert.equal(await ada.load("s/1"), "again\n");
		});

		await t.test("a user reads and writes only their own sessions; 401 without credentials", async () => {
			assert.equal(await bob.load("s/1"), "", "bob's s/1 is not ada's");
			await bob.append("s/1", "bob\n", { length: 0 });
			assert.equal(await ada.load("s/1"), "again\n");
			assert.equal(await bob.load("s/1"), "bob\n");
			const anonymous = httpStore(`${srv.url}/api/sessions`);
			await assert.rejects(anonymous.load("s/1"), /401|unauthorized/);
			const res = await request(srv.port, { method: "PATCH", path: "/api/sessions/x", headers: { authorization: "Bearer token-ada" } });
			assert.equal(res.status, 405);
		});

		await t.test("the text comes back as it was given: NUL, lone surrogates, astral characters", async () => {
			const text = `a\0b \ud800 c \udfff d 😀 e\n`;
			await ada.append("odd", text, { length: 0 });
			await ada.append("odd", "\ud83d", { length: text.length });
			await ada.append("odd", "\ude00\n", { length: text.length + 1 });
			assert.equal(await ada.load("odd"), `${text}😀\n`);
			assert.equal(await ada.loadFrom("odd", text.length), "😀\n");
		});

		await t.test("a body that does not match its x-text-length, a log over its limit: refused, nothing written", async () => {
			const res = await request(srv.port, {
				method: "POST",
				path: "/api/sessions/check",
				headers: { authorization: "Bearer token-ada", "content-type": "text/plain", "x-text-length": "10", "x-log-length": "0" },
				body: "short\n",
			});
			assert.equal(res.status, 400);
			assert.match(JSON.parse(res.body).error, /6 characters received, x-text-length says 10/);
			assert.equal(await ada.load("check"), "");
			await assert.rejects(ada.append("check", "x".repeat(1_000_001), { length: 0 }), /session log too large \(limit 1000000 characters\)/);
			assert.equal(await ada.load("check"), "");
		});

		await t.test("two writers racing on one session: one wins each length, no record is torn or interleaved", async () => {
			const id = "race";
			await ada.append(id, header(), { length: 0 });
			const start = header().length;
			// Both extend the same length at once: whatever the order, exactly one of them lands.
			const first = await Promise.allSettled([ada.append(id, exchange("A", 0), { length: start }), ada2.append(id, exchange("B", 0), { length: start })]);
			const lost = first.filter((r) => r.status === "rejected");
			assert.equal(lost.length, 1, JSON.stringify(first.map((r) => r.status)));
			assert.equal(lost[0].reason.name, "SessionConflictError");
			const winner = first[0].status === "fulfilled" ? "A" : "B";
			assert.equal(lost[0].reason.length, start + exchange(winner, 0).length);
			// Then each goes on from what it learns, rounds racing freely.
			const wins = { A: [], B: [] };
			wins[winner].push(0);
			const write = async (store, name, rounds) => {
				let known = lost[0].reason.length;
				for (let round = wins[name].length === 1 ? 1 : 0; round < rounds; round++) {
					for (;;) {
						const text = exchange(name, round);
						try {
							await store.append(id, text, { length: known });
							known += text.length;
							wins[name].push(round);
							break;
						} catch (err) {
							if (err.name !== "SessionConflictError") throw err;
							known = err.length;
						}
					}
				}
			};
			await Promise.all([write(ada, "A", 15), write(ada2, "B", 15)]);
			const log = await ada.load(id);
			const read = readLog(log);
			assert.equal(read.dropped, 0);
			const tags = exchangeTags((await restore(ada, id)).messages);
			assert.equal(tags.length, 30);
			for (const w of ["A", "B"]) assert.deepEqual(tags.filter((tag) => tag.startsWith(`${w}#`)), wins[w].map((r) => `${w}#${r}`));
		});

		await t.test("a writer that dies mid-append (its body cut on the way) writes nothing; the log goes on and restores", async () => {
			const id = "cut";
			await ada.append(id, header(), { length: 0 });
			await ada.append(id, exchange("A", 0), { length: header().length });
			const length = (await ada.load(id)).length;
			const text = exchange("dead", 1);
			const child = spawn(
				process.execPath,
				[
					"-e",
					`const s = require("net").connect(${srv.port}, "127.0.0.1", () => {
  s.write("POST /api/sessions/${id} HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\nauthorization: Bearer token-ada\\r\\ncontent-type: text/plain\\r\\n" +
    "x-log-length: ${length}\\r\\nx-text-length: ${text.length}\\r\\ncontent-length: ${text.length}\\r\\n\\r\\n" + ${JSON.stringify(text.slice(0, text.length >> 1))});
  console.log("half sent");
});`,
				],
				{ stdio: ["ignore", "pipe", "inherit"] },
			);
			await new Promise((resolve) => child.stdout.once("data", resolve));
			const before = handled.length;
			child.kill("SIGKILL");
			await waitFor(() => handled.length > before, "the server to finish with the cut request");
			assert.equal(handled.at(-1), "POST 400");
			assert.equal((await ada.load(id)).length, length, "nothing of the cut body was written");
			await ada.append(id, exchange("A", 1), { length });
			assert.deepEqual(exchangeTags((await restore(ada, id)).messages), ["A#0", "A#1"]);
		});
	});

	test(`a writer killed while it appends to ${name}: every append whole or absent, the log restores`, { timeout: 120_000 }, async (t) => {
		const place = await kind.place();
		t.after(() => place.remove());
		const child = spawn(process.execPath, [FIXTURE, place.where, place.table, "ada", "dying"], { stdio: ["ignore", "pipe", "pipe"] });
		let printed = 0;
		let errors = "";
		child.stdout.on("data", (d) => (printed = Number(String(d).trim().split("\n").at(-1))));
		child.stderr.on("data", (d) => (errors += d));
		const exited = new Promise((resolve) => child.once("exit", resolve));
		await waitFor(() => printed >= 10 || child.exitCode !== null, "10 appends", 60_000);
		assert.equal(child.exitCode, null, errors);
		child.kill("SIGKILL");
		await exited;
		const client = place.reopen();
		t.after(() => (client.end ?? client.close).call(client));
		const db = sessionDatabase(client, { table: place.table });
		const { text } = await db.read("ada", "dying");
		assert.equal(readLog(text).dropped, 0, "no torn record");
		const tags = exchangeTags((await restore(db.forOwner("ada"), "dying")).messages);
		// The append in flight at the kill landed whole, or not at all.
		assert.ok(tags.length === printed || tags.length === printed + 1, `${tags.length} exchanges, ${printed} acknowledged`);
		assert.deepEqual(tags, tags.map((_, i) => `dying#${i}`));
		// The log goes on from its length (the restore above wrote to it too).
		const { length } = await db.read("ada", "dying");
		const out = await db.append("ada", "dying", exchange("after", 0), length);
		assert.equal(out.length, length + exchange("after", 0).length);
	});
}

test("sessionDatabase on one pg.Client serializes its statements and transactions", { timeout: 60_000 }, async (t) => {
	const client = new pg.Client({ connectionString: postgres.url });
	await client.connect();
	t.after(() => client.end());
	const db = sessionDatabase(client, { table: `t${++tables}` });
	const results = await Promise.all([db.append("u", "s", "a\n", 0), db.replace("u", "s", "b\n", 0), db.append("u", "s", "c\n", 2)]);
	assert.deepEqual(results, [{ length: 2 }, { conflict: 2 }, { length: 4 }]);
	assert.equal((await db.read("u", "s")).text, "a\nc\n");
});
