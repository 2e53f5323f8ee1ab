// A WorkerAgent's worker over its lifetime, in headless Chromium: the worker a run starts after
// terminate() is given the whole transcript (the objects the last worker knew are sent again),
// and reset() or trimming state.messages makes the page forget the objects that crossed the
// channel (nothing the agent no longer holds stays reachable from it). Chromium runs with
// --expose-gc for those.
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

test("WorkerAgent lifecycle", { timeout: 120_000 }, async (t) => {
	const server = await startStaticServer({ "/pkg/": PKG, "/support/": join(REPO, "tests/js/support"), "/t/": fileURLToPath(new URL("./", import.meta.url)), "/": join(REPO, "tests") });
	const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, "--js-flags=--expose-gc"] });
	try {
		const page = await browser.newPage();
		page.on("pageerror", (e) => console.error("page error:", e.message));
		await page.goto(`${server.url}/t/page.html`);
		await page.waitForFunction(() => window.ready === true);
		const setup = () => {
			window.newAgent = async (workerOptions = {}) => {
				const { WorkerAgent } = await import("/pkg/worker/index.js");
				return new WorkerAgent({
					initialState: { model: { id: "m", name: "m", api: "a", provider: "p", baseUrl: "", reasoning: false, input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 } },
					worker: () => new Worker("/t/context-worker.mjs", { type: "module" }),
					workerOptions,
				});
			};
			// Whether every object of `refs` (WeakRefs) is collected within a bounded number of GCs, a
			// macrotask apart (the worker's acknowledgement of a sweep comes in one).
			window.collected = async (...refs) => {
				for (let i = 0; i < 50; i++) {
					await new Promise((resolve) => setTimeout(resolve, 20));
					globalThis.gc();
					if (refs.every((r) => r.deref() === undefined)) return true;
				}
				return false;
			};
			window.summary = (agent) => agent.state.messages.map((m) => [m.role, m.stopReason ?? null, m.errorMessage ?? null, m.content?.[0]?.text ?? m.content]);
		};
		await page.evaluate(setup);

		await t.test("after terminate(), the next run's fresh worker is given the whole transcript", async () => {
			const got = await page.evaluate(async () => {
				const agent = await window.newAgent();
				await agent.prompt("one");
				agent.terminate();
				await agent.prompt("two");
				return window.summary(agent);
			});
			assert.deepEqual(got, [
				["user", null, null, "one"],
				["assistant", "stop", null, '["user"]'],
				["user", null, null, "two"],
				["assistant", "stop", null, '["user","assistant","user"]'],
			]);
		});

		await t.test("after a run its worker failed, the next run's fresh worker is given the whole transcript", async () => {
			const got = await page.evaluate(async () => {
				const agent = await window.newAgent({ hang: true });
				const unsubscribe = agent.subscribe((event) => event.type === "message_update" && agent.terminate());
				await agent.prompt("one");
				unsubscribe();
				await agent.prompt("two");
				return window.summary(agent).map(([role, stopReason, , text]) => [role, stopReason, text]);
			});
			assert.deepEqual(got.slice(0, 3).map(([role, stopReason]) => [role, stopReason]), [["user", null], ["assistant", "error"], ["user", null]]);
			// The failed answer has no text block the model reads; the transcript it is given is the same as in the page.
			assert.deepEqual(got[3], ["assistant", "stop", '["user","assistant","user"]']);
		});

		await t.test("reset() forgets the objects that crossed: a message the agent no longer holds can be collected", async () => {
			const got = await page.evaluate(async () => {
				const agent = await window.newAgent();
				let message = { role: "user", content: [{ type: "text", text: "x".repeat(1000) }], timestamp: 1 };
				const sent = new WeakRef(message);
				await agent.prompt(message);
				const answer = new WeakRef(agent.state.messages[1]);
				message = undefined;
				const heldBefore = sent.deref() !== undefined;
				agent.reset();
				// The worker's acknowledgement ends the page's hold on what it had numbered.
				const collected = await window.collected(sent, answer);
				// And the agent still works, with an empty transcript.
				await agent.prompt("after");
				return { heldBefore, collected, after: window.summary(agent) };
			});
			assert.equal(got.heldBefore, true);
			assert.equal(got.collected, true);
			assert.deepEqual(got.after, [["user", null, null, "after"], ["assistant", "stop", null, '["user"]']]);
		});

		await t.test("trimming state.messages between runs forgets the trimmed messages; the kept ones keep their identity", async () => {
			const got = await page.evaluate(async () => {
				const agent = await window.newAgent();
				let first = { role: "user", content: [{ type: "text", text: "first" }], timestamp: 1 };
				const sent = new WeakRef(first);
				await agent.prompt(first);
				first = undefined;
				const answer = new WeakRef(agent.state.messages[1]);
				await agent.prompt("second");
				const kept = agent.state.messages.slice(2);
				agent.state.messages = kept;
				const collected = await window.collected(sent, answer);
				await agent.prompt("third");
				await agent.prompt("fourth");
				return {
					collected,
					after: window.summary(agent),
					sameObjects: agent.state.messages[0] === kept[0] && agent.state.messages[1] === kept[1],
				};
			});
			assert.equal(got.collected, true);
			assert.equal(got.sameObjects, true);
			assert.deepEqual(got.after.map((r) => r[3]), ["second", '["user","assistant","user"]', "third", '["user","assistant","user"]', "fourth", '["user","assistant","user","assistant","user"]']);
		});
	} finally {
		await browser.close();
		await server.close();
	}
});
