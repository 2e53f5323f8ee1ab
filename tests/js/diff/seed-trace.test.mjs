// The 25-event trace of seed 000 ("Trace: một prompt, hai lời gọi tool và một tin nhắn steer"):
// an Agent with default configuration (parallel tools, one-at-a-time queues, no hooks) and one `read` tool.
// The model calls read twice in one answer; b.txt finishes before a.txt; while the tools run the user
// steers. Plus the two variants the seed describes (followUp instead of steer; sequential mode).
import { Type } from "typebox";
import { assert, scenario } from "../support/harness.mjs";
import { call, deferred, makeTool, text, ts } from "../support/scripted.mjs";
import { finalState, makeAgent, recordAgent } from "../support/agent.mjs";
import { Trace } from "../support/trace.mjs";

const PROMPT = "Đọc a.txt và b.txt rồi tóm tắt";
const STEER = "Chỉ tóm tắt a.txt thôi";

async function seedRun(impl, { queue = "steer", toolExecution } = {}) {
	const tr = new Trace();
	const bEnded = deferred();
	const sequential = toolExecution === "sequential";
	let agent;
	const read = makeTool(tr, "read", {
		parameters: Type.Object({ path: Type.String() }),
		execute: async (id, params) => {
			if (params.path === "b.txt") {
				// the user types while the tools run
				const msg = { role: "user", content: STEER, timestamp: ts() };
				if (queue === "steer") agent.steer(msg);
				else agent.followUp(msg);
			}
			if (params.path === "a.txt" && !sequential) await bEnded.promise;
			return { content: [{ type: "text", text: `contents of ${params.path}` }], details: { path: params.path } };
		},
	});
	({ agent } = makeAgent(
		impl,
		tr,
		[
			{ content: [call("call_1", "read", { path: "a.txt" }), call("call_2", "read", { path: "b.txt" })], timing: "micro" },
			{ content: [text("Tóm tắt a.txt", ["Tóm tắt ", "a.txt"])], timing: "micro" },
			{ content: [text("Tóm tắt b.txt")] },
		],
		{ initialState: { tools: [read] }, ...(toolExecution ? { toolExecution } : {}) },
	));
	recordAgent(agent, tr, (ev) => {
		if (ev.type === "tool_execution_end" && ev.toolCallId === "call_2") bEnded.resolve();
	});
	const run = agent.prompt(PROMPT);
	await run;
	tr.note("final", finalState(agent, tr));
	return tr;
}

/** Collapse consecutive message_update events into one row, as the seed table does. */
function rows(t) {
	const out = [];
	for (const e of t.events) {
		let label = e.type;
		if (e.type.startsWith("message_")) label += ` ${e.message.role}`;
		if (e.type.startsWith("tool_execution_")) label += ` ${e.toolCallId}`;
		if (e.type === "message_update") label += ` #${e.ame.contentIndex}`;
		if (out.at(-1) === label && e.type === "message_update") continue;
		out.push(label);
	}
	return out;
}

scenario(
	"seed 000: 25-event trace — parallel read x2, b.txt first, steer during the tools",
	async (impl) => (await seedRun(impl)).result(),
	{
		check(t) {
			assert.deepEqual(rows(t), [
				"agent_start",
				"turn_start",
				"message_start user",
				"message_end user",
				"message_start assistant",
				"message_update assistant #0",
				"message_update assistant #1",
				"message_end assistant",
				"tool_execution_start call_1",
				"tool_execution_start call_2",
				"tool_execution_end call_2",
				"tool_execution_end call_1",
				"message_start toolResult",
				"message_end toolResult",
				"message_start toolResult",
				"message_end toolResult",
				"turn_end",
				"turn_start",
				"message_start user",
				"message_end user",
				"message_start assistant",
				"message_update assistant #0",
				"message_end assistant",
				"turn_end",
				"agent_end",
			]);
			const ev = t.events;
			const at = (type, id) => ev.find((e) => e.type === type && e.toolCallId === id);
			assert.deepEqual(at("tool_execution_start", "call_1").st.pending, ["call_1"]);
			assert.deepEqual(at("tool_execution_start", "call_2").st.pending, ["call_1", "call_2"]);
			assert.deepEqual(at("tool_execution_end", "call_2").st.pending, ["call_1"]);
			assert.deepEqual(at("tool_execution_end", "call_1").st.pending, []);
			// when event 9 is handled, state.messages already holds the assistant message of event 8
			// (1.4.0: the initial system message declaring `read`, the prompt, the assistant message)
			assert.equal(at("tool_execution_start", "call_1").st.messages, 3);
			assert.ok(ev.every((e) => e.st.isStreaming === true));
			const results = ev.filter((e) => e.type === "message_end" && e.message.role === "toolResult").map((e) => e.message.toolCallId);
			assert.deepEqual(results, ["call_1", "call_2"]);
			const end = ev.at(-1);
			assert.deepEqual(end.roles, ["user", "assistant", "toolResult", "toolResult", "user", "assistant"]);
			const steer = ev.filter((e) => e.type === "message_end" && e.message.role === "user")[1];
			assert.equal(steer.message.content, STEER);
			assert.equal(t.notes.final.isStreaming, false);
			assert.equal(t.calls, undefined);
		},
	},
);

scenario(
	"seed 000 variant: followUp instead of steer waits until after event 24 and creates a third turn",
	async (impl) => (await seedRun(impl, { queue: "followUp" })).result(),
	{
		check(t) {
			const turnEnds = t.events.filter((e) => e.type === "turn_end").length;
			assert.equal(turnEnds, 3);
			const users = t.events.filter((e) => e.type === "message_end" && e.message.role === "user");
			const idx = t.events.indexOf(users[1]);
			assert.equal(t.events.filter((e, i) => i < idx && e.type === "turn_end").length, 2, "the follow-up comes after the second turn_end");
		},
	},
);

scenario(
	"seed 000 variant: sequential mode — start 1, end 1, result 1, start 2, end 2, result 2",
	async (impl) => (await seedRun(impl, { toolExecution: "sequential" })).result(),
	{
		check(t) {
			const r = rows(t);
			assert.deepEqual(r.slice(8, 16), [
				"tool_execution_start call_1",
				"tool_execution_end call_1",
				"message_start toolResult",
				"message_end toolResult",
				"tool_execution_start call_2",
				"tool_execution_end call_2",
				"message_start toolResult",
				"message_end toolResult",
			]);
			assert.equal(r.length, 25);
		},
	},
);
