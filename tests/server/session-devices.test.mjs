// Two devices on one session through the server store (httpStore against createStoreHandler on
// PGlite), while a run goes on: the device running it holds the session's lease; a device that
// opens the session meanwhile follows that run instead of cutting it, refuses runs of its own, and
// runs the session once the run is over. A device that dies mid-run stops renewing its lease: once
// it expires, the other restores the run as interrupted. A device can take the session over: the
// run shows as interrupted there and stops on the device that ran it. Every context a stream
// function receives is checked with the strict-provider rules. Leases last 2 s here (the option:
// long enough that a device loaded by the other tests still renews its lease in time, short enough
// that a dead device's expires soon), and every wait is for a state.
import test from "node:test";
import assert from "node:assert/strict";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
import { assertStrictContext } from "../support/strict-transcript.mjs";
import { serve, server, usage, waitFor } from "./support.mjs";

const { Agent } = await import("../../pkg/index.js");
const { attachSession, httpStore, INTERRUPTED_TOOL } = await import("../../pkg/session/index.js");

const MODEL = { id: "m1", name: "m1", api: "test-api", provider: "test", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e5, maxTokens: 1e3 };
const LEASE_MS = 2000;
const textOf = (m) =>
	typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? (b.type === "toolCall" ? `[${b.name}]` : "")).join("");

/**
 * A provider: "hold" streams "re: hold" and then waits for `finish()` (or the abort); "tool" calls
 * the tool `wait`, whose run waits for `finish()`, and answers "done" after its result; anything
 * else is answered "re: <text>" at once. Records the contexts and the aborts.
 */
function provider() {
	const seen = { aborted: 0, contexts: [] };
	let finish;
	let held = new Promise((r) => (finish = r));
	const streamFn = (model, context, options) => {
		assertStrictContext(context);
		seen.contexts.push(context.messages);
		const last = context.messages.at(-1);
		const stream = createAssistantMessageEventStream();
		const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(1), stopReason: "stop", timestamp: Date.now() };
		const text = (t) => {
			partial.content.push({ type: "text", text: "" });
			const i = partial.content.length - 1;
			stream.push({ type: "text_start", contentIndex: i, partial });
			partial.content[i].text = t;
			stream.push({ type: "text_delta", contentIndex: i, delta: t, partial });
			return i;
		};
		(async () => {
			await new Promise((r) => setImmediate(r));
			stream.push({ type: "start", partial });
			if (last.role === "toolResult") {
				const i = text("done");
				stream.push({ type: "text_end", contentIndex: i, content: "done", partial });
			} else if (textOf(last) === "tool") {
				const call = { type: "toolCall", id: `call-${seen.contexts.length}`, name: "wait", arguments: {} };
				partial.content.push(call);
				stream.push({ type: "toolcall_start", contentIndex: 0, partial });
				stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial });
				partial.stopReason = "toolUse";
			} else {
				const reply = `re: ${textOf(last)}`;
				const i = text(reply);
				if (textOf(last) === "hold") {
					const aborted = new Promise((r) => (options.signal.aborted ? r() : options.signal.addEventListener("abort", r)));
					if ((await Promise.race([held.then(() => "done"), aborted.then(() => "aborted")])) === "aborted") {
						seen.aborted++;
						partial.stopReason = "aborted";
						partial.errorMessage = "Request aborted";
						stream.push({ type: "error", reason: "aborted", error: partial });
						return stream.end();
					}
				}
				stream.push({ type: "text_end", contentIndex: i, content: reply, partial });
			}
			stream.push({ type: "done", reason: partial.stopReason, message: partial });
			stream.end();
		})();
		return stream;
	};
	const wait = {
		name: "wait",
		label: "Wait",
		description: "Waits",
		parameters: { type: "object", properties: {} },
		execute: async () => {
			await held;
			return { content: [{ type: "text", text: "waited" }], details: {} };
		},
	};
	return {
		streamFn,
		wait,
		seen,
		finish() {
			finish();
			held = new Promise((r) => (finish = r));
		},
	};
}

/** A store handler on PGlite behind a Node server, and a way to make the devices' stores. */
async function storeServer(t) {
	const handler = server.createStoreHandler({ authorize: (req) => (req.headers.get("authorization") === "Bearer u" ? "u" : null) });
	const srv = await serve(handler);
	t.after(() => srv.close());
	return {
		/**
		 * A device's store; `kill()` makes every later request of the device fail (it died, or lost its
		 * network), `drop(n)` its next `n` reads of the log (a network that drops a few).
		 */
		store() {
			let dead = false;
			let dropping = 0;
			const store = httpStore(`${srv.url}/api/sessions`, {
				headers: { authorization: "Bearer u" },
				fetch: (...args) => {
					if (dead) return Promise.reject(new TypeError("fetch failed: the device is gone"));
					if (dropping > 0 && !String(args[0]).includes("?lease") && (args[1]?.method ?? "GET") === "GET") {
						dropping--;
						return Promise.reject(new TypeError("fetch failed: dropped"));
					}
					return fetch(...args);
				},
			});
			return { store, kill: () => (dead = true), drop: (n) => (dropping = n) };
		},
		peek: (id) => httpStore(`${srv.url}/api/sessions`, { headers: { authorization: "Bearer u" } }).lease(id),
	};
}

async function device(servers, id, p, { dropReads = 0, ...options } = {}) {
	const { store, kill, drop } = servers.store();
	drop(dropReads);
	const agent = new Agent({ initialState: { systemPrompt: "Be brief.", model: MODEL, tools: [p.wait] }, streamFn: p.streamFn });
	const errors = [];
	const session = await attachSession(agent, { id, store, tabs: false, flushMs: 5, leaseMs: LEASE_MS, followMs: 10, onError: (e) => errors.push(e), ...options });
	return {
		agent,
		session,
		errors,
		kill,
		drop,
		transcript: () => agent.state.messages.filter((m) => m.role !== "system").map((m) => `${m.role}:${textOf(m)}`),
	};
}

const strict = (d) => assertStrictContext({ messages: d.agent.state.messages });

test("a device opening a session mid-run follows the run, and runs the session once it is over", { timeout: 120_000 }, async (t) => {
	const servers = await storeServer(t);
	const p = provider();
	const laptop = await device(servers, "follow", p);
	const run = laptop.agent.prompt("hold");
	await waitFor(() => laptop.agent.state.streamingMessage && textOf(laptop.agent.state.streamingMessage) === "re: hold", "the laptop to stream");
	assert.equal((await servers.peek("follow")).ms > 0, true, "the laptop holds the lease while it runs");
	await laptop.session.flush();

	// The phone's network drops its first read of the log: it reads it again at its next look.
	const phone = await device(servers, "follow", p, { dropReads: 1 });
	t.after(() => phone.session.detach());
	assert.equal(phone.session.isLeader, false);
	assert.equal(phone.session.runningElsewhere, "device");
	await waitFor(() => phone.transcript().length === 1, "the phone to show the conversation");
	assert.deepEqual(phone.transcript(), ["user:hold"], "the phone shows the conversation as the laptop wrote it");
	await waitFor(() => phone.session.remoteStreamingMessage && textOf(phone.session.remoteStreamingMessage) === "re: hold", "the phone to show the laptop's streaming answer");
	await assert.rejects(phone.agent.prompt("from the phone"), /session "follow" is running on another device/);
	await assert.rejects(phone.session.resume(), /running on another device/);

	// The laptop renews its lease while its run goes on (seen as its time left growing again), and the phone keeps following.
	let renewals = 0;
	let left = Infinity;
	await waitFor(async () => {
		const { ms } = await servers.peek("follow");
		if (ms > left) renewals++;
		left = ms;
		return renewals >= 2;
	}, "two renewals of the laptop's lease");
	assert.equal(phone.session.runningElsewhere, "device");
	assert.equal(laptop.agent.state.isStreaming, true);

	p.finish();
	await run;
	await waitFor(() => phone.session.isLeader, "the phone to run the session once the laptop's run is over");
	assert.equal(phone.session.runningElsewhere, undefined);
	assert.equal(p.seen.aborted, 0, "the laptop's run was not cut");
	assert.equal(phone.session.interrupted, false);
	assert.deepEqual(phone.transcript(), ["user:hold", "assistant:re: hold"]);
	assert.deepEqual(laptop.transcript(), phone.transcript());
	assert.equal(phone.session.error, undefined);

	// The phone runs the session now; the laptop, asked to run meanwhile, follows the phone instead.
	const phoneRun = phone.agent.prompt("hold");
	await waitFor(() => phone.agent.state.isStreaming && phone.agent.state.streamingMessage, "the phone to stream");
	await assert.rejects(laptop.agent.prompt("from the laptop"), /running on another device/);
	assert.equal(laptop.session.runningElsewhere, "device");
	await waitFor(() => laptop.transcript().includes("user:hold") && laptop.transcript().length === 3, "the laptop to follow the phone's run");
	p.finish();
	await phoneRun;
	await waitFor(() => laptop.session.isLeader, "the laptop to lead again");
	await laptop.agent.prompt("from the laptop");
	await laptop.session.flush();
	assert.deepEqual(laptop.transcript(), ["user:hold", "assistant:re: hold", "user:hold", "assistant:re: hold", "user:from the laptop", "assistant:re: from the laptop"]);
	assert.equal(p.seen.aborted, 0);
	assert.deepEqual([...laptop.errors, ...phone.errors], []);
	strict(laptop);
	await laptop.session.detach();
	assert.equal((await servers.peek("follow")).holder, undefined, "no lease is left held");
});

test("a device that dies mid-run: its lease expires, and the device following it restores the run as interrupted", { timeout: 120_000 }, async (t) => {
	const servers = await storeServer(t);
	const p = provider();
	const laptop = await device(servers, "crash", p);
	const run = laptop.agent.prompt("tool");
	await waitFor(() => laptop.agent.state.messages.some((m) => m.role === "assistant" && m.stopReason === "toolUse"), "the laptop's tool to run");
	await laptop.session.flush();

	const phone = await device(servers, "crash", p);
	t.after(() => phone.session.detach());
	assert.equal(phone.session.runningElsewhere, "device");
	assert.deepEqual(phone.transcript(), ["user:tool", "assistant:[wait]"], "the call shows, without a result yet");

	laptop.kill();
	await waitFor(() => phone.session.isLeader, "the phone to restore once the laptop's lease has expired");
	assert.equal(phone.session.interrupted, true);
	assert.deepEqual(phone.transcript(), ["user:tool", "assistant:[wait]", `toolResult:${INTERRUPTED_TOOL}`]);
	strict(phone);
	await phone.agent.prompt("still there?");
	assert.deepEqual(phone.transcript().slice(-2), ["user:still there?", "assistant:re: still there?"]);

	// The dead laptop's own run, ended here so that the test ends.
	p.finish();
	await run;
});

test("take over: the run shows as interrupted on the device taking over, and stops on the one that ran it", { timeout: 120_000 }, async (t) => {
	const servers = await storeServer(t);
	const p = provider();
	const laptop = await device(servers, "take", p);
	t.after(() => laptop.session.detach());
	const run = laptop.agent.prompt("hold");
	await waitFor(() => laptop.agent.state.streamingMessage && textOf(laptop.agent.state.streamingMessage) === "re: hold", "the laptop to stream");
	await laptop.session.flush();
	const phone = await device(servers, "take", p);
	t.after(() => phone.session.detach());
	assert.equal(phone.session.runningElsewhere, "device");
	await laptop.session.takeOver(); // the device running the session: nothing to take
	assert.equal(laptop.agent.state.isStreaming, true);

	await phone.session.takeOver();
	assert.equal(phone.session.isLeader, true);
	assert.equal(phone.session.interrupted, true);
	const last = phone.agent.state.messages.at(-1);
	assert.equal(last.role, "assistant");
	assert.equal(last.stopReason, "aborted");
	assert.match(last.errorMessage, /^Interrupted/);
	strict(phone);

	await run;
	assert.equal(p.seen.aborted, 1, "the laptop's run stopped");
	await phone.agent.prompt("from the phone");
	await phone.session.flush();
	const want = ["user:hold", "assistant:re: hold", "user:from the phone", "assistant:re: from the phone"];
	assert.deepEqual(phone.transcript(), want);
	// The laptop shows the log as the phone wrote it (following the phone, or caught up with it).
	await waitFor(() => JSON.stringify(laptop.transcript()) === JSON.stringify(want) && !laptop.agent.state.isStreaming, "the laptop to show the phone's conversation");
	strict(laptop);
	await waitFor(() => laptop.session.isLeader, "the laptop to lead again once the phone is idle");
	await laptop.agent.prompt("from the laptop");
	assert.deepEqual(laptop.transcript().slice(-2), ["user:from the laptop", "assistant:re: from the laptop"]);
	for (const context of p.seen.contexts) assertStrictContext({ messages: context });
	assert.deepEqual([...laptop.errors, ...phone.errors], []);
});

test("createStoreHandler's lease: taken, renewed, refused to another holder, taken over, let go of, expired; checked fields", { timeout: 60_000 }, async (t) => {
	const servers = await storeServer(t);
	const { store } = servers.store();
	assert.deepEqual(await store.lease("l"), { holder: undefined, ms: 0, length: 0 });
	const a = await store.lease("l", { holder: "a", ms: 60_000 });
	assert.equal(a.holder, "a");
	assert.ok(a.ms > 59_000 && a.ms <= 60_000);
	assert.equal((await store.lease("l", { holder: "b", ms: 60_000 })).holder, "a", "another holder is refused");
	assert.equal((await store.lease("l", { holder: "b", ms: 0 })).holder, "a", "another holder cannot let go of it");
	assert.equal((await store.lease("l", { holder: "a", ms: 60_000 })).holder, "a", "renewed");
	await store.append("l", "text", { length: 0 });
	assert.equal((await store.lease("l")).length, 4, "the lease tells the log's length");
	assert.equal(await store.load("l"), "text");
	assert.equal((await store.lease("l", { holder: "b", ms: 60_000, take: true })).holder, "b", "taken over");
	assert.deepEqual(await store.lease("l", { holder: "b", ms: 0 }), { holder: undefined, ms: 0, length: 4 });
	await store.lease("l", { holder: "a", ms: 50 });
	await waitFor(async () => (await store.lease("l")).holder === undefined, "the lease to expire");
	assert.equal((await store.lease("l", { holder: "b", ms: 60_000 })).holder, "b", "an expired lease is free");

	const srv = await serve(server.createStoreHandler({ authorize: () => "u", limits: { leaseMs: 1000 } }));
	t.after(() => srv.close());
	const post = (body) => fetch(`${srv.url}/api/sessions/x?lease`, { method: "POST", headers: { "content-type": "application/json" }, body });
	for (const [body, error] of [
		["{", /lease: malformed JSON/],
		[JSON.stringify({ ms: 10 }), /lease.holder: must be a string/],
		[JSON.stringify({ holder: "a", ms: 1001 }), /lease.ms: must be an integer from 0 to 1000/],
		[JSON.stringify({ holder: "a", ms: 1.5 }), /lease.ms/],
		[JSON.stringify({ holder: "a", ms: 10, take: "yes" }), /lease.take: must be a boolean/],
	]) {
		const res = await post(body);
		assert.equal(res.status, 400, body);
		assert.match((await res.json()).error, error);
	}
	const put = await fetch(`${srv.url}/api/sessions/x?lease`, { method: "PUT", body: "" });
	assert.equal(put.status, 405);
	// The log is untouched by lease requests.
	assert.equal(await (await fetch(`${srv.url}/api/sessions/x`)).text(), "");
});
