// The real pi coding agent as a consumer: pi-coding-agent 1.4.0's CLI (dist/cli.js, on Node 20 through
// node22.mjs) runs the same scripted conversations with its own pi-agent-core 1.4.0 and with ours (see
// harness.mjs), and everything it does must be identical: stdout (text, JSON events, RPC records),
// stderr, exit codes, the requests its provider sends, the files its tools write and its session files.
// Both installs run each conversation at once, each on a route of its own of one scripted server. The
// differences accounted for are named: no request after an aborted tool batch (withoutDeadRequest,
// docs/deviations.md), and which usage a message_update shows while pi-ai runs ahead of the loop
// (updateUsage: it varies from run to run with either package).
import test, { after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { OUTPUT, conversation, prepareInstalls } from "./harness.mjs";
import { startOpenAIServer } from "./openai-server.mjs";

const resolved = prepareInstalls();
const server = await startOpenAIServer();
after(() => server.close());

test("the two installs run 1.4.0's pi-agent-core and ours", () => {
	assert.deepEqual(resolved, { reference: "@earendil-works/pi-agent-core@1.4.0", ours: "pi-agent-wasm@0.1.0" });
});

/** Runs `spec` with both installs at once (each on a route of its own) and returns both records. */
async function both(spec) {
	const [reference, ours] = await Promise.all([conversation(server, "reference", spec), conversation(server, "ours", spec)]);
	return { reference, ours };
}

/**
 * Requires `ours` to equal `expected`, each with updateUsage applied. When they differ, the failure names the first place they do,
 * and both records are written to test-output/coding-agent/differences/<test name>.{expected,ours}.json
 * for a diff (the records are too long for the assertion's own diff to be read).
 */
function assertSame(t, oursRecord, expectedRecord) {
	const ours = updateUsage(oursRecord);
	const expected = updateUsage(expectedRecord);
	if (isDeepStrictEqual(ours, expected)) return;
	const dir = join(OUTPUT, "differences");
	mkdirSync(dir, { recursive: true });
	const base = join(dir, t.name.replace(/[^\w]+/g, "-"));
	writeFileSync(`${base}.expected.json`, `${JSON.stringify(expected, null, 1)}\n`);
	writeFileSync(`${base}.ours.json`, `${JSON.stringify(ours, null, 1)}\n`);
	const [path, a, b] = firstDifference(ours, expected);
	const show = (v) => (v === undefined ? "(missing)" : JSON.stringify(v).slice(0, 300));
	assert.fail(`ours differs from 1.4.0 at ${path || "the top"}:\n  ours:  ${show(a)}\n  1.4.0: ${show(b)}\nboth records: ${base}.{ours,expected}.json`);
}

/** The path of the first place `a` and `b` differ, with their values there. */
function firstDifference(a, b, path = "") {
	if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
		for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
			if (!isDeepStrictEqual(a[key], b[key])) return firstDifference(a[key], b[key], Array.isArray(a) ? `${path}[${key}]` : `${path}.${key}`);
		}
	}
	return [path, a, b];
}

/** Runs `spec` with both installs and requires the same record; returns ours. */
async function same(t, spec) {
	const { reference, ours } = await both(spec);
	assertSame(t, ours, reference);
	return ours;
}

/**
 * `record` with the usage of its `message_update` events accounted for. JSON and RPC modes print each
 * update's `usage`, read from the loop's copy of pi-ai's streaming message, which pi-ai writes into
 * as it parses the answer's chunks. When chunks arrive faster than the loop reads events, pi-ai runs
 * ahead, and an update read after it parsed the usage chunk already shows the answer's final usage;
 * one read before, the usage the answer started with. Which updates fall after depends on how the
 * answer's bytes were split into reads, so it varies from run to run with either package, and it
 * also differs between the two by design: 1.4.0 awaits each listener before reading the next queued
 * event, ours reads queued events at once (docs/deviations.md, "When a copy of the streaming message
 * is taken"). So an update's usage is replaced by a marker when it is the answer's starting usage (its
 * `message_start`'s) or its final one (its `message_end`'s) and no update before it in the answer
 * showed the final one; any other usage is kept, to fail the comparison.
 */
function updateUsage(record) {
	const out = structuredClone(record);
	for (const run of out.runs) {
		const events = run.stdout.events;
		if (!Array.isArray(events)) continue;
		let started;
		let final;
		let finalSeen = false;
		events.forEach((event, i) => {
			if (event.type === "message_start") {
				started = event.message?.usage;
				final = events.find((e, j) => j > i && e.type === "message_end")?.message?.usage;
				finalSeen = false;
			}
			if (event.type !== "message_update" || !event.usage) return;
			if (isDeepStrictEqual(event.usage, final)) finalSeen = true;
			else if (finalSeen || !isDeepStrictEqual(event.usage, started)) return;
			event.usage = "<the answer's starting or final usage>";
		});
	}
	return out;
}

const call = (id, name, args) => ({ id, name, arguments: args });
const isEvent = (type) => (r) => r.type === type;

test("print mode: write, read and bash in one parallel batch, then an edit", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		setup: (home) => writeFileSync(join(home.work, "notes.md"), "# Notes\nold line\n"),
		script: [
			{ text: "Looking around.", toolCalls: [call("call_r", "read", { path: "notes.md" }), call("call_b", "bash", { command: "printf 'two\\nlines\\n' | wc -l" }), call("call_w", "write", { path: "src/hello.txt", content: "hello\n" })] },
			{ toolCalls: [call("call_e", "edit", { path: "notes.md", edits: [{ oldText: "old line", newText: "new line" }] })] },
			{ text: "Done: notes.md edited and src/hello.txt written." },
		],
		steps: [{ args: ["-p", "tidy the notes"] }],
	});
	assert.equal(ours.runs[0].code, 0);
	assert.equal(ours.files["notes.md"], "# Notes\nnew line\n");
	assert.equal(ours.files["src/hello.txt"], "hello\n");
	assert.equal(ours.requests.length, 3);
});

test("print mode: a tool call with bad arguments and a length cut", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		script: [
			{ toolCalls: [call("call_1", "write", { path: "x.txt" })] },
			{ text: "Trying again", toolCalls: [call("call_2", "write", { path: "y.txt", content: "cut" })], finish: "length" },
			{ text: "Gave up." },
		],
		steps: [{ args: ["-p", "write files"] }],
	});
	assert.equal(ours.files["x.txt"], undefined);
	assert.equal(ours.files["y.txt"], undefined, "a call from a cut answer never runs");
});

test("JSON mode, then --continue on the same session", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		script: [
			{ text: "Writing.", toolCalls: [call("call_1", "write", { path: "a.txt", content: "A" })] },
			{ text: "First answer." },
			{ text: "Second answer, with the first in context." },
		],
		steps: [{ args: ["--mode", "json", "-p", "first"] }, { args: ["--mode", "json", "-c", "-p", "second"] }],
	});
	assert.ok(ours.runs[0].stdout.events.some(isEvent("message_start")));
	assert.equal(Object.keys(ours.sessions).length, 1, "--continue appended to the same session file");
	assert.ok(ours.requests[2].body.messages.some((m) => m.role === "tool"), "the second run sends the first one's tool result");
});

test("RPC mode: steering while a tool runs, a follow-up, then abort mid-answer", { timeout: 120_000 }, async (t) => {
	// The tool runs until the driver has seen the agent take the steer and the follow-up (a file in
	// $HOME, the home's root), so both arrive while it runs, however loaded the machine is.
	const script = [
		{ toolCalls: [call("call_s", "bash", { command: 'while [ ! -e "$HOME/go" ]; do sleep 0.02; done; echo slept' })] },
		{ text: "After the steer." },
		{ text: "After the follow-up." },
		// One text chunk (the server splits text every 8 characters), then held open: the abort comes
		// after exactly one text_delta with both packages.
		{ text: "Partial ", hold: true },
	];
	await same(t, {
		script,
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records, { home }) {
					records.send({ id: "p1", type: "prompt", message: "run a slow command" });
					await records.waitFor((r) => r.type === "tool_execution_start");
					records.send({ id: "s1", type: "steer", message: "also say hi" });
					records.send({ id: "f1", type: "follow_up", message: "and then summarise" });
					await records.waitFor((r) => r.type === "response" && r.id === "f1");
					writeFileSync(join(home.root, "go"), "");
					await records.waitFor((r) => r.type === "agent_settled");
					const settled = records.next((r) => r.type === "agent_settled");
					const delta = records.next((r) => r.type === "message_update" && r.assistantMessageEvent?.type === "text_delta");
					records.send({ id: "p2", type: "prompt", message: "now a long one" });
					await delta;
					// The abort's response follows agent_settled: stdin closed before it would end the run without it.
					await records.ask({ id: "a1", type: "abort" });
					await settled;
				},
			},
		],
	});
});

test("RPC mode: abort while a tool runs", { timeout: 120_000 }, async (t) => {
	const script = [{ toolCalls: [call("call_s", "bash", { command: "sleep 20" })] }, { text: "never" }];
	const { reference, ours } = await both(spec(script));
	// 1.4.0 then calls the model once more with the aborted signal (pi #8658); ours ends the run after
	// the batch (docs/deviations.md). Everything up to that point is identical.
	assertSame(t, ours, withoutDeadRequest(reference));

	function spec(s) {
		return {
			script: s,
			steps: [
				{
					args: ["--mode", "rpc"],
					async drive(child, records) {
						records.send({ id: "p1", type: "prompt", message: "sleep" });
						await records.waitFor((r) => r.type === "tool_execution_start");
						const settled = records.next((r) => r.type === "agent_settled");
						await records.ask({ id: "a1", type: "abort" });
						await settled;
					},
				},
			],
		};
	}
});

/**
 * 1.4.0's record without what its request after the aborted tool batch added: that request's turn
 * (`turn_start` to `turn_end`, an assistant message that failed with "This operation was aborted"
 * before any HTTP request left), the message in `agent_end`, and its session entry.
 */
function withoutDeadRequest(reference) {
	const dead = (m) => m?.role === "assistant" && m.errorMessage === "This operation was aborted" && m.content.length === 0;
	const out = structuredClone(reference);
	for (const run of out.runs) {
		const records = run.stdout.events;
		const start = records.findIndex((r, i) => r.type === "turn_start" && dead(records[i + 1]?.message));
		assert.ok(start > 0, "1.4.0 made its request after the aborted batch");
		const end = records.findIndex((r, i) => i > start && r.type === "turn_end");
		records.splice(start, end - start + 1);
		for (const r of records) if (r.type === "agent_end") r.messages = r.messages.filter((m) => !dead(m));
	}
	for (const [name, entries] of Object.entries(out.sessions)) out.sessions[name] = entries.filter((e) => !dead(e.message));
	return out;
}

/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");

test("JSON mode: thinking, with a tool call between two reasoning answers", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { model: { reasoning: true } },
		script: [
			{ reasoning: "The user wants a file; write it first.", text: "Writing it.", toolCalls: [call("call_t", "write", { path: "t.txt", content: "thought\n" })] },
			{ reasoning: "Written. Now say so.", text: "t.txt is written." },
		],
		steps: [{ args: ["--mode", "json", "--thinking", "high", "-p", "think, then write t.txt"] }],
	});
	assert.equal(ours.files["t.txt"], "thought\n");
	assert.ok(ours.runs[0].stdout.events.some((r) => r.assistantMessageEvent?.type === "thinking_delta"));
});

test("JSON mode: tool errors (an unknown tool beside a missing file, an edit that misses, a failing command)", { timeout: 120_000 }, async (t) => {
	// One failure per batch, except the unknown tool, which fails while its batch is prepared: the end
	// events of calls that run together come in the order they finish, which is the machine's.
	const ours = await same(t, {
		setup: (home) => writeFileSync(join(home.work, "a.txt"), "alpha\n"),
		script: [
			{ toolCalls: [call("call_1", "no_such_tool", { x: 1 }), call("call_2", "read", { path: "missing.txt" })] },
			{ toolCalls: [call("call_3", "edit", { path: "a.txt", edits: [{ oldText: "beta", newText: "gamma" }] })] },
			{ toolCalls: [call("call_4", "bash", { command: "echo out; echo err >&2; exit 3" })] },
			{ text: "All four failed." },
		],
		steps: [{ args: ["--mode", "json", "-p", "break things"] }],
	});
	const results = ours.requests[3].body.messages.filter((m) => m.role === "tool");
	assert.equal(results.length, 4);
	assert.equal(ours.files["a.txt"], "alpha\n");
});

test("JSON mode: long outputs (a truncated command, a long file read, a long answer)", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		setup: (home) => {
			writeFileSync(join(home.work, "long.txt"), Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n"));
			writeFileSync(join(home.work, "numbers.txt"), Array.from({ length: 6000 }, (_, i) => `${i + 1}\n`).join(""));
		},
		script: [
			// The command prints its 6,000 lines in one write (less than a pipe holds, so it arrives in one
			// read): the bash tool's progress updates are throttled by the clock, so output spread over time
			// would make their number vary. The read comes in a turn of its own: in one batch, where its end
			// falls among the command's updates is the machine's scheduling.
			{ toolCalls: [call("call_b", "bash", { command: "cat numbers.txt" })] },
			{ toolCalls: [call("call_r", "read", { path: "long.txt" })] },
			{ text: "x".repeat(3000) },
		],
		steps: [{ args: ["--mode", "json", "-p", "print a lot"] }],
	});
	const results = ours.requests[2].body.messages.filter((m) => m.role === "tool");
	assert.match(results[0].content, /\[Showing lines 4001-6000 of 6000\. Full output: .*pi-bash-<random>\.log\]$/);
	assert.match(results[1].content, /\[Showing lines 1-2000 of 3000\. Use offset=2001 to continue\.\]$/);
});

test("print mode: retries after HTTP errors, then a request that fails", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 1, provider: { maxRetries: 0 } } } },
		script: [
			{ status: 429, message: "Rate limit reached, slow down" },
			{ status: 503, message: "The server is overloaded" },
			{ text: "Third time lucky." },
			{ status: 400, message: "Invalid request: bad things" },
		],
		steps: [{ args: ["--mode", "json", "-p", "hello"] }, { args: ["-c", "-p", "again"] }],
	});
	assert.equal(ours.requests.length, 4);
	assert.notEqual(ours.runs[1].code, 0);
});

test("print mode: an image attached and an image read by the tool", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { model: { input: ["text", "image"] } },
		setup: (home) => {
			writeFileSync(join(home.work, "dot.png"), PNG);
			writeFileSync(join(home.work, "other.png"), PNG);
		},
		script: [{ toolCalls: [call("call_i", "read", { path: "other.png" })] }, { text: "Two red dots." }],
		steps: [{ args: ["--mode", "json", "-p", "@dot.png", "what is this and other.png?"] }],
	});
	assert.match(JSON.stringify(ours.requests[0].body.messages), /image_url/);
	assert.match(JSON.stringify(ours.requests[1].body.messages.at(-1)), /image_url|image/);
});

test("RPC mode: manual compaction, then auto-compaction after an answer near the context window", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		// Keeping almost no recent tokens makes these short sessions worth compacting.
		home: { settings: { compaction: { keepRecentTokens: 10 } } },
		script: [
			{ text: "First answer." },
			{ text: "Second answer." },
			{ text: "Summary: the user said hi and hello." },
			// 95,000 prompt tokens in a 100,000-token window: over the threshold, so the coding agent
			// compacts after the run (two summaries: the history, then the split turn's prefix).
			{ text: "Third answer.", usage: { prompt_tokens: 95000 } },
			{ text: "Summary of the history." },
			{ text: "Summary of the turn." },
		],
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records) {
					records.send({ id: "p1", type: "prompt", message: "hi" });
					await records.settled(1);
					records.send({ id: "p2", type: "prompt", message: "hello" });
					await records.settled(2);
					await records.ask({ id: "c1", type: "compact", customInstructions: "keep it short" });
					const compacted = records.next((r) => r.type === "compaction_end" && r.reason === "threshold");
					records.send({ id: "p3", type: "prompt", message: "hello again" });
					await compacted;
					await records.settled(3);
				},
			},
		],
	});
	const compactions = Object.values(ours.sessions)[0].filter((e) => e.type === "compaction");
	assert.equal(compactions.length, 2);
	assert.equal(ours.requests.length, 6);
});

test("RPC mode: a user command, then model and thinking-level switches between prompts", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { models: [{ id: "scripted-thinker", name: "Thinker", reasoning: true, contextWindow: 50000, maxTokens: 2048 }] },
		script: [{ text: "From the first model." }, { reasoning: "Deep thought.", text: "From the thinker." }, { text: "Back again." }],
		steps: [
			{
				args: ["--mode", "rpc", "--models", "scripted/*"],
				async drive(child, records) {
					// A command the user runs: its output joins the context of the next request.
					await records.ask({ id: "b1", type: "bash", command: "echo from the user" });
					records.send({ id: "p1", type: "prompt", message: "one" });
					await records.settled(1);
					await records.ask({ id: "m1", type: "set_model", provider: "scripted", modelId: "scripted-thinker" });
					await records.ask({ id: "t1", type: "set_thinking_level", level: "medium" });
					records.send({ id: "p2", type: "prompt", message: "two" });
					await records.settled(2);
					await records.ask({ id: "m2", type: "cycle_model" });
					records.send({ id: "p3", type: "prompt", message: "three" });
					await records.settled(3);
					await records.ask({ id: "s1", type: "get_state" });
				},
			},
		],
	});
	assert.deepEqual(
		ours.requests.map((r) => r.body.model),
		["scripted-model", "scripted-thinker", "scripted-model"],
	);
});

test("RPC mode: a new session, a switch back, and a fork", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		script: [{ text: "Answer in the first session." }, { text: "Answer in the second session." }, { text: "Answer after the switch." }, { text: "Answer on the fork." }],
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records) {
					const ask = records.ask;
					records.send({ id: "p1", type: "prompt", message: "first" });
					await records.settled(1);
					const first = (await ask({ id: "g1", type: "get_state" })).data.sessionFile;
					await ask({ id: "n1", type: "new_session" });
					records.send({ id: "p2", type: "prompt", message: "second" });
					await records.settled(2);
					await ask({ id: "w1", type: "switch_session", sessionPath: first });
					records.send({ id: "p3", type: "prompt", message: "third" });
					await records.settled(3);
					const forks = (await ask({ id: "g2", type: "get_fork_messages" })).data.messages;
					await ask({ id: "k1", type: "fork", entryId: forks[0].entryId });
					records.send({ id: "p4", type: "prompt", message: "fourth, on the fork" });
					await records.settled(4);
					await ask({ id: "g3", type: "get_messages" });
				},
			},
		],
	});
	assert.equal(Object.keys(ours.sessions).length, 3);
});

test("JSON mode: the connection drops after the answer streamed a tool call, and the retry succeeds", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 1, provider: { maxRetries: 0 } } } },
		script: [
			{ text: "Writing it.", toolCalls: [call("call_c", "write", { path: "cut.txt", content: "never\n" })], cut: true },
			{ text: "Writing it again.", toolCalls: [call("call_d", "write", { path: "kept.txt", content: "kept\n" })] },
			{ text: "Done." },
		],
		steps: [{ args: ["--mode", "json", "-p", "write a file"] }],
	});
	assert.equal(ours.files["cut.txt"], undefined, "a call of a failed answer never runs");
	assert.equal(ours.files["kept.txt"], "kept\n");
	assert.ok(ours.runs[0].stdout.events.some(isEvent("auto_retry_start")));
	for (const request of ours.requests) assert.doesNotMatch(JSON.stringify(request.body.messages), /call_c/, "the failed answer's call never reaches a request");
});

test("RPC mode: abort while one tool of a parallel batch runs and its sibling has finished", { timeout: 120_000 }, async (t) => {
	const script = [{ toolCalls: [call("call_f", "bash", { command: "echo fast" }), call("call_s", "bash", { command: "sleep 20" })] }, { text: "never" }];
	const { reference, ours } = await both({
		script,
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records) {
					records.send({ id: "p1", type: "prompt", message: "two commands" });
					await records.waitFor((r) => r.type === "tool_execution_end" && r.toolCallId === "call_f");
					const settled = records.next((r) => r.type === "agent_settled");
					await records.ask({ id: "a1", type: "abort" });
					await settled;
				},
			},
		],
	});
	// As in "abort while a tool runs": 1.4.0's extra request after the aborted batch is the one difference.
	assertSame(t, ours, withoutDeadRequest(reference));
	const results = Object.values(ours.sessions)[0].filter((e) => e.message?.role === "toolResult");
	assert.deepEqual(results.map((e) => e.message.toolCallId), ["call_f", "call_s"]);
});

test("RPC mode: a steer and a follow-up sent while an answer streams, one at a time", { timeout: 120_000 }, async (t) => {
	await same(t, {
		script: [
			{ text: "A long answer, still streaming", pause: "mid" },
			{ text: "Answering the steer." },
			{ text: "Answering the first follow-up." },
			{ text: "Answering the second follow-up." },
		],
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records, { release }) {
					await records.ask({ id: "m1", type: "set_follow_up_mode", mode: "one-at-a-time" });
					// The answer's last delta before its pause ("eaming": the server sends text 8 characters
					// at a time): the steer then comes after all of them with both packages.
					const delta = records.next((r) => r.assistantMessageEvent?.delta === "eaming");
					records.send({ id: "p1", type: "prompt", message: "go" });
					await delta;
					await records.ask({ id: "s1", type: "steer", message: "steer now" });
					await records.ask({ id: "f1", type: "follow_up", message: "first follow-up" });
					await records.ask({ id: "f2", type: "follow_up", message: "second follow-up" });
					const settled = records.next((r) => r.type === "agent_settled");
					release("mid");
					await settled;
				},
			},
		],
	});
});

test("JSON mode: code mode, a script calling write, read and bash through the agent's runToolCall", { timeout: 120_000 }, async (t) => {
	const code = [
		'await tools.write({ path: "from-script.txt", content: "scripted\\n" });',
		'const read = await tools.read({ path: "from-script.txt" });',
		'const run = await tools.bash({ command: "wc -c < from-script.txt" });',
		"text(read.trim());",
		"return run.exit_code;",
	].join("\n");
	const ours = await same(t, {
		home: { settings: { defaultTools: ["+codemode"] } },
		script: [{ toolCalls: [call("call_js", "codemode", { code })] }, { text: "The script wrote and read the file." }],
		steps: [{ args: ["--mode", "json", "-p", "use a script"] }],
	});
	assert.equal(ours.files["from-script.txt"], "scripted\n");
	assert.match(JSON.stringify(ours.requests[1].body.messages.at(-1)), /Script completed/);
});

test("RPC mode: abort while the coding agent waits to retry, then abort mid-thinking", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { model: { reasoning: true }, settings: { retry: { enabled: true, maxRetries: 3, baseDelayMs: 60_000, provider: { maxRetries: 0 } } } },
		script: [{ status: 503, message: "The server is overloaded" }, { reasoning: "Thinking", hold: true }],
		steps: [
			{
				args: ["--mode", "rpc", "--thinking", "low"],
				async drive(child, records) {
					const waiting = records.next((r) => r.type === "auto_retry_start");
					records.send({ id: "p1", type: "prompt", message: "first" });
					await waiting;
					let settled = records.next((r) => r.type === "agent_settled");
					await records.ask({ id: "a1", type: "abort" });
					await settled;
					const thinking = records.next((r) => r.assistantMessageEvent?.type === "thinking_delta");
					settled = records.next((r) => r.type === "agent_settled");
					records.send({ id: "p2", type: "prompt", message: "second" });
					await thinking;
					await records.ask({ id: "a2", type: "abort" });
					await settled;
				},
			},
		],
	});
	const events = ours.runs[0].stdout.events;
	assert.ok(events.some((r) => r.type === "auto_retry_end" && r.success === false), "the retry was cancelled");
	const aborted = events.filter((r) => r.type === "message_end" && r.message.stopReason === "aborted");
	assert.deepEqual(aborted.at(-1)?.message.content, [{ type: "thinking", thinking: "Thinking", thinkingSignature: "reasoning_content" }]);
	assert.equal(ours.requests.length, 2, "no request after either abort");
});

test("RPC mode: a context overflow compacts the session and continues the run", { timeout: 120_000 }, async (t) => {
	const ours = await same(t, {
		home: { settings: { compaction: { keepRecentTokens: 10 } } },
		script: [
			{ text: "First answer." },
			{ status: 400, message: "This model's maximum context length is 100000 tokens. However, your messages resulted in 120000 tokens." },
			// One summary (the kept prompt's turn; nothing before it to summarise), then the run goes on
			// through the agent's continue() from the prompt.
			{ text: "Summary of the turn." },
			{ text: "Answer after the compaction." },
		],
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records) {
					records.send({ id: "p1", type: "prompt", message: "hi" });
					await records.settled(1);
					records.send({ id: "p2", type: "prompt", message: "a prompt too long for the window" });
					await records.settled(2);
				},
			},
		],
	});
	const events = ours.runs[0].stdout.events;
	assert.ok(events.some((r) => r.type === "compaction_end" && r.reason === "overflow" && r.willRetry === true), "compacted, then retried");
	assert.equal(ours.requests.length, 4);
	assert.deepEqual(ours.requests[3].body.messages.at(-1), { role: "user", content: [{ type: "text", text: "a prompt too long for the window" }] });
	assert.equal(events.filter((r) => r.type === "message_end" && r.message.role === "assistant").at(-1).message.content[0].text, "Answer after the compaction.");
});
