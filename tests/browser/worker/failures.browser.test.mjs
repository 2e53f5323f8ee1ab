// WorkerAgent failures in headless Chromium: a worker that cannot load, one that throws during a run, one
// terminated mid-run, a setup that fails, and messages from a foreign or stale source. Each run must end as a
// failed run does in the page (an assistant error message, turn_end, agent_end, prompt() settled, isStreaming
// false), and the next run must work in a fresh worker.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "worker/index.js"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");

// Runs in the page: one failing prompt, then (with a factory) one that must succeed in a fresh worker.
async function failThenRecover({ url, mode, action, recoverMode }) {
	const { WorkerAgent } = await import("/pkg/worker/index.js");
	const workers = [];
	let n = 0;
	const agent = new WorkerAgent({
		initialState: { model: { id: "m", name: "m", api: "a", provider: "p", baseUrl: "", reasoning: false, input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 } },
		worker: () => {
			const w = new Worker(n++ === 0 ? url : "/t/failing-worker.mjs", { type: "module" });
			workers.push(w);
			return w;
		},
		workerOptions: { mode },
	});
	// After the first worker, the factory's workers get the recovering mode.
	const events = [];
	agent.subscribe((ev) => {
		const text = ev.message?.content?.[0]?.text;
		events.push({ type: ev.type, role: ev.message?.role, stopReason: ev.message?.stopReason, errorMessage: ev.message?.errorMessage, text });
		if (action === "terminate" && ev.type === "message_update") agent.terminate();
	});
	const timeout = new Promise((resolve) => setTimeout(() => resolve("hung"), 10000));
	const first = await Promise.race([agent.prompt("go").then(() => "resolved", (e) => `rejected: ${e.message}`), timeout]);
	const afterFirst = { isStreaming: agent.state.isStreaming, errorMessage: agent.state.errorMessage, idle: await Promise.race([agent.waitForIdle().then(() => true), timeout]) };
	const firstEvents = events.splice(0);
	let second;
	if (recoverMode) {
		// The fresh worker is told its mode through the same workerOptions object given at construction.
		second = await Promise.race([agent.prompt("again").then(() => "resolved", (e) => `rejected: ${e.message}`), timeout]);
	}
	return {
		first,
		afterFirst,
		firstEvents,
		second,
		secondEvents: events,
		roles: agent.state.messages.map((m) => m.role),
		workers: workers.length,
	};
}

test("WorkerAgent failures", { timeout: 120_000 }, async (t) => {
	const server = await startStaticServer({ "/pkg/": PKG, "/support/": join(REPO, "tests/js/support"), "/t/": fileURLToPath(new URL("./", import.meta.url)), "/": join(REPO, "tests") });
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
	try {
		const page = await browser.newPage();
		await page.goto(`${server.url}/t/page.html`);
		await page.waitForFunction(() => window.ready === true);
		const failedRun = (r, message) => {
			assert.equal(r.first, "resolved");
			assert.deepEqual(r.afterFirst.isStreaming, false);
			assert.equal(r.afterFirst.idle, true);
			const tail = r.firstEvents.slice(-3);
			assert.deepEqual(tail.map((e) => e.type), ["message_end", "turn_end", "agent_end"]);
			assert.equal(tail[0].role, "assistant");
			assert.equal(tail[0].stopReason, "error");
			assert.match(tail[0].errorMessage, message);
			assert.match(r.afterFirst.errorMessage, message);
			// As a run in the page: it begins with agent_start and the prompt, and each message that starts ends.
			const types = r.firstEvents.map((e) => e.type);
			assert.deepEqual(types.slice(0, 2), ["agent_start", "turn_start"]);
			// (A worker's own tools are declared by a system message first.)
			assert.deepEqual(r.firstEvents.filter((e) => e.type === "message_end" && e.role !== "system").map((e) => e.role).slice(0, 1), ["user"]);
			assert.equal(types.filter((t) => t === "message_start").length, types.filter((t) => t === "message_end").length);
			assert.equal(types.filter((t) => t === "agent_end").length, 1);
			assert.equal(r.roles.filter((role) => role !== "system")[0], "user", "the prompt is in the transcript");
		};

		await t.test("a worker script that cannot load", async () => {
			const r = await page.evaluate(failThenRecover, { url: "/t/no-such-worker.mjs", mode: "ok", recoverMode: "ok" });
			failedRun(r, /worker failed/);
			// Nothing came from the worker: the page delivers the run's whole beginning.
			assert.deepEqual(r.firstEvents.map((e) => e.type), ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
			assert.equal(r.second, "resolved");
			assert.deepEqual(r.secondEvents.map((e) => e.type).at(-1), "agent_end");
			assert.equal(r.secondEvents.find((e) => e.type === "message_end" && e.role === "assistant").stopReason, "stop");
			assert.equal(r.workers, 2);
		});

		await t.test("a worker that throws during a run (a tool blows up the worker)", async () => {
			const r = await page.evaluate(failThenRecover, { url: "/t/failing-worker.mjs", mode: "crash", recoverMode: "crash" });
			failedRun(r, /the worker blew up/);
			// The call the worker was running gets its end and an error result, before the failure.
			const types = r.firstEvents.map((e) => e.type);
			assert.ok(types.indexOf("tool_execution_end") > types.indexOf("tool_execution_start"));
			const result = r.firstEvents.find((e) => e.type === "message_end" && e.role === "toolResult");
			assert.match(result.text, /^Tool call was not completed: the run ended early \(.*the worker blew up/);
			assert.deepEqual(r.roles.filter((role) => role !== "system").slice(0, 4), ["user", "assistant", "toolResult", "assistant"]);
			assert.equal(r.workers, 2);
		});

		await t.test("a worker terminated mid-stream", async () => {
			const r = await page.evaluate(failThenRecover, { url: "/t/failing-worker.mjs", mode: "hang", action: "terminate" });
			failedRun(r, /terminated/);
			assert.equal(r.workers, 1);
		});

		await t.test("a setup function that throws", async () => {
			const r = await page.evaluate(failThenRecover, { url: "/t/failing-worker.mjs", mode: "throwSetup" });
			failedRun(r, /setup failed/);
		});

		await t.test("messages from a stale worker or of another protocol are ignored", async () => {
			const r = await page.evaluate(async () => {
				const { WorkerAgent } = await import("/pkg/worker/index.js");
				// Fake workers: EventTargets that record what they are sent.
				const fakes = [];
				const make = () => {
					const w = new EventTarget();
					w.sent = [];
					w.postMessage = (m) => w.sent.push(m);
					w.terminate = () => {};
					fakes.push(w);
					return w;
				};
				const agent = new WorkerAgent({ worker: make });
				const events = [];
				agent.subscribe((ev) => events.push(ev.type));
				const say = (w, msg) => w.dispatchEvent(new MessageEvent("message", { data: { "pi-agent-wasm/worker": msg } }));
				say(fakes[0], { op: "hello" });
				const p = agent.prompt("x");
				agent.terminate();
				await p;
				const afterFail = events.length;
				// The old worker speaks after it was replaced: nothing happens.
				say(fakes[0], { op: "ev", events: [["type", [0, "agent_start"]]] });
				const q = agent.prompt("y");
				const fresh = fakes[1];
				say(fresh, { op: "hello" });
				say(fresh, { op: "ev", events: [["type", [0, "agent_start"]]] });
				fresh.dispatchEvent(new MessageEvent("message", { data: { op: "done", id: 2, ok: true } }));
				say(fakes[0], { op: "done", id: 2, ok: true });
				await new Promise((r) => setTimeout(r, 20));
				const stillRunning = agent.state.isStreaming;
				say(fresh, { op: "ev", events: [["type", [0, "agent_end"], "messages", ["a", []]]] });
				say(fresh, { op: "done", id: 2, ok: true });
				await q;
				return { afterFail, events, stillRunning, runs: fresh.sent.filter((m) => m["pi-agent-wasm/worker"].op === "run").length };
			});
			assert.equal(r.afterFail, 8);
			assert.deepEqual(r.events.slice(8), ["agent_start", "agent_end"]);
			assert.equal(r.stillRunning, true);
			assert.equal(r.runs, 1);
		});
	} finally {
		await browser.close();
		await server.close();
	}
});
