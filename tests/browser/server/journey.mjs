// What the server end-to-end tests share: the packed package installed into an app directory,
// app servers started as child processes on 127.0.0.1 (their requests to Anthropic's API sent to
// the stand-in of fake-anthropic.mjs), and the journey each server must carry in headless Chromium
// (client.mjs in the page): a prompt with a tool, an abort that reaches the provider, a reload that
// restores from the server store, a second browser context that continues the session, the first
// one catching up, a browser opening the session mid-run that follows the run instead of cutting
// it, a take-over, and a closed page that aborts its provider request, whose run the other browser
// restores as interrupted once the closed page's lease has expired.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
export { launchChromium } from "../../support/chromium.mjs";
import { stopProcess } from "../../support/process.mjs";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const HERE = fileURLToPath(new URL(".", import.meta.url));
export const PRELOAD = join(REPO, "tests/support/redirect-anthropic.mjs");
export const KEY = "sk-ant-e2e-server-key-0123456789";

export const freePort = () =>
	new Promise((resolve, reject) => {
		const s = net.createServer().once("error", reject);
		s.listen(0, "127.0.0.1", () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});

/** `npm pack` of pkg/ into `dir` (the tarball's path). */
export function packPkg(dir) {
	if (!existsSync(join(REPO, "pkg/package.json"))) throw new Error("pkg/ is not built: run node scripts/build.mjs");
	mkdirSync(dir, { recursive: true });
	const name = execFileSync("npm", ["pack", join(REPO, "pkg"), "--pack-destination", dir, "--silent"], { encoding: "utf8" }).trim().split("\n").at(-1);
	return join(dir, name);
}

/**
 * An app directory inside the repository (so its servers find hono, pi-ai and PGlite in the
 * repository's node_modules) with the packed package installed and the test app's files.
 */
export function packedApp(name) {
	const dir = join(REPO, "test-output", "server-e2e", `${name}-${process.pid}`);
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	const tarball = packPkg(dir);
	writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "server-e2e-app", private: true, type: "module" }));
	execFileSync("npm", ["install", "--no-save", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: dir, stdio: "pipe" });
	for (const f of ["client.mjs", "page.html"]) cpSync(join(HERE, f), join(dir, f));
	for (const f of ["static.mjs", "endpoints.mjs", "node-server.mjs", "hono-server.mjs"]) cpSync(join(HERE, "apps", f), join(dir, f));
	return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts `args` (a node script or a CLI) in `cwd` with the Anthropic redirect; resolves once `ready`
 * matches its output, or once `readyCheck` (a URL) answers.
 */
export async function startProcess(args, { cwd, env, ready, readyCheck, timeoutMs = 90_000 }) {
	const proc = spawn(process.execPath, args, {
		cwd,
		env: { ...process.env, NODE_OPTIONS: `--import=${PRELOAD}`, NO_COLOR: "1", ...env },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let output = "";
	proc.stdout.on("data", (d) => (output += d));
	proc.stderr.on("data", (d) => (output += d));
	const exited = new Promise((r) => proc.once("exit", r));
	await new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not get ready:\n${output}`)), timeoutMs);
		const check = () => {
			if (ready.test(output)) {
				clearTimeout(timer);
				resolve();
			}
		};
		proc.stdout.on("data", check);
		proc.stderr.on("data", check);
		if (readyCheck) {
			const poll = () =>
				fetch(readyCheck).then(
					() => {
						clearTimeout(timer);
						resolve();
					},
					() => proc.exitCode === null && setTimeout(poll, 50),
				);
			poll();
		}
		proc.once("exit", (code) => {
			clearTimeout(timer);
			reject(new Error(`${args.join(" ")} exited (${code}):\n${output}`));
		});
	});
	return {
		output: () => output,
		close: () => stopProcess(proc, exited),
	};
}


const waitFor = async (check, what, ms = 120_000) => {
	const deadline = Date.now() + ms;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 20));
	}
};

/** A page of a fresh browser context (another browser, as far as the session knows), with its errors recorded. */
async function browserPage(browser) {
	const context = await browser.newContext();
	const page = await context.newPage();
	// Waits are for a state; on a loaded machine the first ones (compiling the wasm) can take long.
	page.setDefaultTimeout(120_000);
	const problems = [];
	page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
	page.on("console", (m) => m.type() === "error" && problems.push(`console.error: ${m.text()}`));
	return { context, page, problems };
}

/** The journey every server carries; `pagePath` is where the server serves client.mjs's page. */
export async function journey(t, { url, fake, browser, pagePath = "/", session = "trip" }) {
	const open = async (page) => {
		// Leases of 4 s: a page closed mid-run is followed that long at most.
		await page.goto(`${url}${pagePath}?token=token-ada&session=${session}&leaseMs=4000`);
		await page.waitForFunction(() => document.body.dataset.ready === "1");
	};
	// The store's database starts on its first request (PGlite compiles its WebAssembly, seconds on a
	// loaded machine): one request first, awaited, so that the pages' first waits are for the page alone.
	const warm = await fetch(`${url}/api/sessions/warm-up`, { headers: { authorization: "Bearer token-ada" } });
	assert.equal(warm.status, 200, await warm.text());
	const a = await browserPage(browser);
	t.after(() => a.context.close());
	await open(a.page);
	const evalA = (f, arg) => a.page.evaluate(f, arg);

	await t.test("a prompt with a tool: the tool runs in the page, the key stays on the server", async () => {
		assert.equal(await evalA(() => app.restored), false);
		await evalA(() => app.run("please add 2 and 3"));
		assert.deepEqual(await evalA(() => app.transcript()), ["user:please add 2 and 3", "assistant:[add]", "toolResult:5", "assistant:The result is 5."]);
		assert.ok(fake.requests.length >= 2 && fake.requests.every((r) => r.key === KEY), "every provider request carried the server's key");
	});

	await t.test("an abort in the page aborts the provider request", async () => {
		const before = fake.aborted;
		await evalA(() => app.prompt("slow"));
		await a.page.waitForFunction(() => app.streamedText().length > 30);
		await evalA(() => app.abort());
		await waitFor(() => fake.aborted > before, "the provider to see the abort");
		await a.page.waitForFunction(() => app.idle());
		assert.equal(await evalA(() => app.lastStopReason()), "aborted");
		await evalA(() => app.session.flush());
	});

	let transcript;
	await t.test("a reload restores the conversation from the server store", async () => {
		transcript = await evalA(() => app.transcript());
		await a.page.reload();
		await a.page.waitForFunction(() => document.body.dataset.ready === "1");
		assert.equal(await evalA(() => app.restored), true);
		assert.deepEqual(await evalA(() => app.transcript()), transcript);
	});

	const b = await browserPage(browser);
	t.after(() => b.context.close());
	await t.test("a second browser context continues the session", async () => {
		await open(b.page);
		assert.deepEqual(await b.page.evaluate(() => app.transcript()), transcript);
		await b.page.evaluate(() => app.run("hello from the second browser"));
		transcript = await b.page.evaluate(() => app.transcript());
		assert.deepEqual(transcript.slice(-2), ["user:hello from the second browser", "assistant:Hello! You said: hello from the second browser"]);
	});

	await t.test("the first browser shows what the second wrote when its page is shown again", async () => {
		await a.page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
		await a.page.waitForFunction((want) => JSON.stringify(app.transcript()) === want, JSON.stringify(transcript));
		await b.page.evaluate(() => app.run("more from the second browser"));
		transcript = await b.page.evaluate(() => app.transcript());
	});

	await t.test("the first browser, stale again, catches up when it writes, and its prompt is answered after", async () => {
		await evalA(() => app.prompt("hello again from the first"));
		await a.page.waitForFunction((n) => app.idle() && app.transcript().length === n, transcript.length + 2);
		assert.deepEqual(await evalA(() => app.transcript()), [...transcript, "user:hello again from the first", "assistant:Hello! You said: hello again from the first"]);
		await evalA(() => app.session.flush());
		assert.deepEqual(await evalA(() => app.errors), []);
	});

	const evalB = (f, arg) => b.page.evaluate(f, arg);
	const sameTranscript = async (page, want) => page.waitForFunction((w) => JSON.stringify(app.transcript()) === w, JSON.stringify(want));
	await t.test("a browser opening the session mid-run follows the run, and runs the session once it is over", async () => {
		const before = fake.aborted;
		await evalA(() => app.prompt("slow"));
		await a.page.waitForFunction(() => app.streamedText().length > 30);
		await b.page.reload();
		await b.page.waitForFunction(() => document.body.dataset.ready === "1");
		assert.equal(await evalB(() => app.session.runningElsewhere), "device");
		assert.equal(await evalB(() => app.session.isLeader), false);
		// It shows the answer as it streams in the first browser, whose run goes on.
		const shown = await evalB(() => app.remoteText().length);
		await b.page.waitForFunction((n) => app.remoteText().length > n + 30, shown);
		assert.match(await evalB(() => app.tryPrompt("from the second, too early")), /running on another device/);
		assert.equal(await evalA(() => app.idle()), false);
		assert.equal(fake.aborted, before, "the first browser's run was not cut");
		// The user stops the answer in the first browser: its run is over, and the second runs the session.
		await evalA(() => app.abort());
		await a.page.waitForFunction(() => app.idle());
		await b.page.waitForFunction(() => app.session.isLeader);
		assert.equal(await evalB(() => app.session.interrupted), false);
		transcript = await evalA(() => app.transcript());
		await sameTranscript(b.page, transcript);
		assert.equal(await evalB(() => app.tryPrompt("from the second, after the run")), "ran");
		transcript = await evalB(() => app.transcript());
		assert.deepEqual(transcript.slice(-2), ["user:from the second, after the run", "assistant:Hello! You said: from the second, after the run"]);
	});

	await t.test("take over: the first browser takes over the second's run, which stops there", async () => {
		await evalB(() => app.prompt("slow"));
		await b.page.waitForFunction(() => app.streamedText().length > 30);
		// Asked to run while the second runs the session, the first follows it instead.
		assert.match(await evalA(() => app.tryPrompt("from the first, too early")), /running on another device/);
		assert.equal(await evalA(() => app.session.runningElsewhere), "device");
		await a.page.waitForFunction(() => app.remoteText().length > 30);
		const before = fake.aborted;
		await evalA(() => app.session.takeOver());
		assert.equal(await evalA(() => app.session.isLeader), true);
		assert.equal(await evalA(() => app.session.interrupted), true);
		assert.match(await evalA(() => app.lastError()), /^Interrupted/);
		await waitFor(() => fake.aborted > before, "the second browser's provider request to be aborted");
		await b.page.waitForFunction(() => app.idle());
		assert.equal(await evalA(() => app.tryPrompt("from the first, after taking over")), "ran");
		transcript = await evalA(() => app.transcript());
		// The second shows it: following the first's run, or caught up with its log when its page is shown.
		await b.page.waitForFunction(
			(want) => (document.dispatchEvent(new Event("visibilitychange")), JSON.stringify(app.transcript()) === want),
			JSON.stringify(transcript),
			{ polling: 250 },
		);
	});

	await t.test("closing a page mid-answer aborts its provider request; the other restores its run as interrupted once its lease expires", async () => {
		await b.page.reload();
		await b.page.waitForFunction(() => document.body.dataset.ready === "1");
		await b.page.waitForFunction(() => app.session.isLeader);
		assert.deepEqual((await evalB(() => app.transcript())).slice(-1), ["assistant:Hello! You said: from the first, after taking over"]);
		const before = fake.aborted;
		await evalB(() => app.prompt("slow"));
		await b.page.waitForFunction(() => app.streamedText().length > 30);
		await evalB(() => app.session.flush());
		await b.page.close();
		await waitFor(() => fake.aborted > before, "the provider to see the abort");
		// The closed page held the lease: the first browser, asked to run, follows it until it expires
		// (or, if it has expired already, catches up with the log), then restores the cut run.
		const first = await evalA(() => app.tryPrompt("after the close"));
		if (first !== "ran") {
			assert.match(first, /running on another device/);
			await a.page.waitForFunction(() => app.session.isLeader);
			assert.equal(await evalA(() => app.tryPrompt("after the close")), "ran");
		}
		// (A prompt whose first write met the closed page's writes is asked again after catching up.)
		await a.page.waitForFunction(() => app.idle() && app.transcript().at(-1) === "assistant:Hello! You said: after the close");
		const now = await evalA(() => app.transcript());
		assert.equal(await evalA(() => app.session.interrupted), true);
		assert.deepEqual(now.slice(-2), ["user:after the close", "assistant:Hello! You said: after the close"]);
		assert.match(now.at(-3), /^assistant:word0 word1 /, "the cut answer is kept, as interrupted");
	});

	assert.deepEqual(fake.refused, [], "no request a strict provider would refuse");
	// The conflict the stale browser met is a 409 the browser logs; anything else is a problem.
	const expected = (p) => /status of 409 \(Conflict\)/.test(p);
	assert.deepEqual([...a.problems, ...b.problems].filter((p) => !expected(p)), []);
	assert.ok(a.problems.some(expected), "the stale browser met the conflict");
}
