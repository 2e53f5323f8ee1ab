// The real pi coding agent as a consumer: pi-coding-agent 1.4.0's CLI (dist/cli.js, on Node 20 through
// node22.mjs) runs the same scripted conversations with its own pi-agent-core 1.4.0 and with ours (see
// harness.mjs), and everything it does must be identical: stdout (text, JSON events, RPC records),
// stderr, exit codes, the requests its provider sends, the files its tools write and its session files.
import test from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { conversation, prepareInstalls } from "./harness.mjs";

const resolved = prepareInstalls();

test("the two installs run 1.4.0's pi-agent-core and ours", () => {
	assert.deepEqual(resolved, { reference: "@earendil-works/pi-agent-core@1.4.0", ours: "pi-agent-wasm@0.1.0" });
});

/** Runs `spec` with both installs and requires the same record; returns ours. */
async function same(spec, { expectOurs } = {}) {
	const reference = await conversation("reference", spec);
	const ours = await conversation("ours", spec);
	assert.deepEqual(ours, expectOurs ? expectOurs(reference) : reference);
	return ours;
}

const call = (id, name, args) => ({ id, name, arguments: args });
const isEvent = (type) => (r) => r.type === type;

test("print mode: write, read and bash in one parallel batch, then an edit", { timeout: 120_000 }, async () => {
	const ours = await same({
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

test("print mode: a tool call with bad arguments and a length cut", { timeout: 120_000 }, async () => {
	const ours = await same({
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

test("JSON mode, then --continue on the same session", { timeout: 120_000 }, async () => {
	const ours = await same({
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

test("RPC mode: steering while a tool runs, a follow-up, then abort mid-answer", { timeout: 120_000 }, async () => {
	// The tool runs until the driver has seen the agent take the steer and the follow-up, so both
	// arrive while it runs, however loaded the machine is (a fixed sleep raced with them).
	const gate = join(mkdtempSync(join(tmpdir(), "pi-ca-gate-")), "go");
	const script = [
		{ toolCalls: [call("call_s", "bash", { command: `while [ ! -e ${gate} ]; do sleep 0.02; done; echo slept` })] },
		{ text: "After the steer." },
		{ text: "After the follow-up." },
		// One text chunk (the server splits text every 8 characters), then held open: the abort comes
		// after exactly one text_delta with both packages.
		{ text: "Partial ", hold: true },
	];
	await same({
		script,
		steps: [
			{
				args: ["--mode", "rpc"],
				async drive(child, records) {
					records.send({ id: "p1", type: "prompt", message: "run a slow command" });
					await records.waitFor((r) => r.type === "tool_execution_start");
					records.send({ id: "s1", type: "steer", message: "also say hi" });
					records.send({ id: "f1", type: "follow_up", message: "and then summarise" });
					await records.waitFor((r) => r.type === "response" && r.id === "f1");
					writeFileSync(gate, "");
					await records.waitFor((r) => r.type === "agent_settled");
					rmSync(gate);
					records.send({ id: "p2", type: "prompt", message: "now a long one" });
					await records.waitFor((r) => r.type === "message_update" && r.assistantMessageEvent?.type === "text_delta");
					records.send({ id: "a1", type: "abort" });
					await records.waitFor((r) => r.type === "agent_settled" && records.indexOf(r) > records.findIndex((x) => x.id === "p2"));
				},
			},
		],
	});
});

test("RPC mode: abort while a tool runs", { timeout: 120_000 }, async () => {
	const script = [{ toolCalls: [call("call_s", "bash", { command: "sleep 20" })] }, { text: "never" }];
	const reference = await conversation("reference", spec(script));
	const ours = await conversation("ours", spec(script));
	// 1.4.0 then calls the model once more with the aborted signal (pi #8658); ours ends the run after
	// the batch (docs/deviations.md). Everything up to that point is identical.
	assert.deepEqual(ours, withoutDeadRequest(reference));

	function spec(s) {
		return {
			script: s,
			steps: [
				{
					args: ["--mode", "rpc"],
					async drive(child, records) {
						records.send({ id: "p1", type: "prompt", message: "sleep" });
						await records.waitFor((r) => r.type === "tool_execution_start");
						records.send({ id: "a1", type: "abort" });
						await records.waitFor((r) => r.type === "agent_settled");
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
