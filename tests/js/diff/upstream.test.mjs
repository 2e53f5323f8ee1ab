// Three bugs that pi-agent-core 1.6.0 still has (reported upstream as earendil-works/pi #9306, #8658
// and #7053), each run against ours, 1.4.0 and 1.6.0: ours must behave as a user wants, and each
// test also shows that 1.4.0 and 1.6.0 do not (so the test can fail, and fails on them).
//
// - #9306: an answer that streamed tool calls and then failed (an `error` event, or an abort) left
//   those calls without results, so the next request was invalid for a strict provider. Ours sends
//   the failed answer without its tool calls (none of them ran) and leaves out results that answer
//   no call just before them, so every context is valid as the stream function gets it and after
//   pi-ai's own conversion (which drops a failed answer but keeps results after it); a call of a
//   completed answer left without a result gets "No result provided" in the request (what pi-ai's
//   conversion sends); results out of order are put in order.
// - #8658: after a tool batch the abort cut short, the loop made one more model call with the
//   aborted signal (and took the queued steering message for it). Ours ends the run after the
//   batch's `turn_end`; queued messages stay queued.
// - #7053: in a parallel batch, a sibling that stalls (and ignores the abort) held the results that
//   had already finished: they reached no transcript. Ours keeps them: the stalled call is
//   abandoned a second after the abort with "Operation aborted" and the run ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { transformMessages } from "../../../node_modules/@earendil-works/pi-ai/dist/api/transform-messages.js";
import { assertStrictContext, strictProblems } from "../../support/strict-transcript.mjs";
import { loadOurs, reference, v16 } from "../support/impls.mjs";
import { MODEL, assistant, call, makeTool, scripted, system, text, toolResultMsg, user, withTimeout } from "../support/scripted.mjs";

const ours = await loadOurs();
if (!ours) throw new Error("pkg/ is not built (node scripts/build.mjs)");
const OLD = [reference, v16];

const roles = (messages) =>
	messages.map((m) => {
		const calls = Array.isArray(m.content) ? m.content.filter((c) => c?.type === "toolCall").map((c) => c.id) : [];
		if (m.role === "assistant") return `assistant(${m.stopReason}${calls.length ? ` ${calls.join(" ")}` : ""})`;
		if (m.role === "toolResult") return `toolResult(${m.toolCallId}${m.isError ? " error" : ""})`;
		return m.role;
	});

/** Both views of a request a strict provider would see: as the stream function got it, and after pi-ai's conversion. */
function strictBothWays(context) {
	return { received: strictProblems(context.messages), afterPiAi: strictProblems(transformMessages(context.messages, MODEL)) };
}

/** A stream function playing `responses` (scripted) that keeps every context it gets; no check of its own. */
function recording(impl, responses) {
	const contexts = [];
	const fn = scripted(impl, responses, { strict: false });
	const streamFn = (model, context, options) => {
		contexts.push(context);
		return fn(model, context, options);
	};
	return { streamFn, contexts, calls: fn.calls };
}

const okTool = () => makeTool(undefined, "t");

// The three ways a request is built: an Agent with no context hook (ours keeps an incremental LLM view
// of the transcript), an Agent with `transformContext` (the transcript converted per request), and
// the stateless `runAgentLoop` on the caller's context.
const PATHS = {
	"Agent (default path)": (impl, streamFn, messages) => {
		const agent = new impl.Agent({ initialState: { model: MODEL, tools: [okTool()], messages }, streamFn });
		return { prompt: (p) => agent.prompt(p), agent };
	},
	"Agent with transformContext": (impl, streamFn, messages) => {
		const agent = new impl.Agent({ initialState: { model: MODEL, tools: [okTool()], messages }, streamFn, transformContext: async (m) => m });
		return { prompt: (p) => agent.prompt(p), agent };
	},
	runAgentLoop: (impl, streamFn, messages) => {
		const context = { messages: [...messages], tools: [okTool()] };
		const config = { model: MODEL, convertToLlm: (m) => m.filter((x) => ["system", "user", "assistant", "toolResult"].includes(x.role)) };
		return {
			async prompt(p) {
				const added = await impl.runAgentLoop([user(p)], context, config, async () => {}, undefined, streamFn);
				context.messages.push(...added);
			},
		};
	},
};

// ---- #9306 -----------------------------------------------------------------------------------------

/** An answer that streams text and two tool calls, then ends with an `error` event. */
const FAILED_ANSWER = () => ({ content: [text("let me"), call("c1", "t", { a: 1 }), call("c2", "t", { b: 2 })], stopReason: "error", errorMessage: "upstream failed" });

for (const [pathName, open] of Object.entries(PATHS)) {
	test(`#9306: after an answer with tool calls ends with an error, the next request is valid (${pathName}); 1.4.0 and 1.6.0 send the calls unanswered`, async () => {
		for (const impl of [ours, ...OLD]) {
			const { streamFn, contexts } = recording(impl, [FAILED_ANSWER(), { content: [text("fine")] }]);
			const run = open(impl, streamFn, []);
			await run.prompt("first");
			await run.prompt("again");
			assert.equal(contexts.length, 2, impl.name);
			const second = contexts[1];
			const problems = strictBothWays(second);
			if (impl === ours) {
				assert.deepEqual(problems, { received: [], afterPiAi: [] }, roles(second.messages).join(", "));
				// The failed answer is sent without its calls; its text stays.
				const failed = second.messages.find((m) => m.role === "assistant");
				assert.equal(failed.stopReason, "error");
				assert.deepEqual(failed.content, [{ type: "text", text: "let me" }]);
				if (run.agent) {
					// The transcript keeps the answer as it came.
					const kept = run.agent.state.messages.find((m) => m.role === "assistant");
					assert.deepEqual(roles([kept]), ["assistant(error c1 c2)"]);
				}
			} else {
				assert.match(problems.received[0] ?? "", /tool call "c1" \(t\) is followed by user/, `${impl.name}: ${roles(second.messages)}`);
			}
		}
	});
}

test("#9306: after an answer aborted while its tool calls streamed, the next prompt's request is valid; 1.4.0 and 1.6.0 send the calls unanswered", async () => {
	for (const impl of [ours, ...OLD]) {
		for (const transformContext of [undefined, async (m) => m]) {
			const { streamFn, contexts } = recording(impl, [
				// A macrotask between events: the abort lands before the stream goes on, with every implementation.
				{ content: [call("c1", "t", { a: 1 }), call("c2", "t", { b: 2 }), text("never")], timing: "timer" },
				{ content: [text("fine")] },
			]);
			const agent = new impl.Agent({ initialState: { model: MODEL, tools: [okTool()] }, streamFn, transformContext });
			agent.subscribe((ev) => {
				if (ev.type === "message_update" && ev.assistantMessageEvent.type === "toolcall_end" && ev.assistantMessageEvent.toolCall.id === "c2") agent.abort();
			});
			await agent.prompt("first");
			assert.deepEqual(roles(agent.state.messages), ["system", "user", "assistant(aborted c1 c2)"], impl.name);
			await agent.prompt("again");
			const problems = strictBothWays(contexts[1]);
			if (impl === ours) assert.deepEqual(problems, { received: [], afterPiAi: [] }, roles(contexts[1].messages).join(", "));
			else assert.notDeepEqual(problems.received, [], impl.name);
		}
	}
});

test("#9306: continue() after a failed answer with tool calls (steering queued) sends a valid request; 1.4.0 and 1.6.0 do not", async () => {
	for (const impl of [ours, ...OLD]) {
		const { streamFn, contexts } = recording(impl, [FAILED_ANSWER(), { content: [text("fine")] }]);
		const agent = new impl.Agent({ initialState: { model: MODEL, tools: [okTool()] }, streamFn });
		await agent.prompt("first");
		agent.steer(user("try again"));
		await agent.continue();
		const problems = strictBothWays(contexts[1]);
		if (impl === ours) assert.deepEqual(problems, { received: [], afterPiAi: [] });
		else assert.notDeepEqual(problems.received, [], impl.name);
	}
});

// Transcripts an app assigns (or a session restores) that no strict provider takes as they are. Each
// lists what ours sends for them; 1.4.0 and 1.6.0 send the transcript as it is.
const ASSIGNED = {
	"a completed answer's call without a result": {
		messages: () => [user("q"), assistant("", { content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }, { type: "toolCall", id: "c2", name: "t", arguments: {} }], stopReason: "toolUse" }), toolResultMsg("c2", "t", "two")],
		sent: ["user", "assistant(toolUse c1 c2)", "toolResult(c1 error)", "toolResult(c2)", "user"],
	},
	"a result without its call": {
		messages: () => [user("q"), assistant("a"), toolResultMsg("c9", "t", "stray")],
		sent: ["user", "assistant(stop)", "user"],
	},
	"results out of order, and one twice": {
		messages: () => [user("q"), assistant("", { content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }, { type: "toolCall", id: "c2", name: "t", arguments: {} }], stopReason: "toolUse" }), toolResultMsg("c2", "t", "two"), toolResultMsg("c1", "t", "one"), toolResultMsg("c2", "t", "again")],
		sent: ["user", "assistant(toolUse c1 c2)", "toolResult(c1)", "toolResult(c2)", "user"],
	},
	"a system message between the calls and their results": {
		messages: () => [user("q"), assistant("", { content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }], stopReason: "toolUse" }), system("note"), toolResultMsg("c1", "t", "one")],
		sent: ["user", "assistant(toolUse c1)", "toolResult(c1)", "system", "user"],
	},
	"a failed answer followed by results for its calls": {
		messages: () => [user("q"), assistant("", { content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }], stopReason: "aborted", errorMessage: "Request was aborted" }), toolResultMsg("c1", "t", "one")],
		sent: ["user", "assistant(aborted)", "user"],
	},
};

for (const [name, { messages, sent }] of Object.entries(ASSIGNED)) {
	test(`an assigned transcript with ${name}: every path sends a valid request (${sent.join(", ")})`, async () => {
		for (const [pathName, open] of Object.entries(PATHS)) {
			const { streamFn, contexts } = recording(ours, [{ content: [text("fine")] }, { content: [text("fine")] }]);
			const run = open(ours, streamFn, messages());
			await run.prompt("next");
			await run.prompt("and next");
			for (const context of contexts) assert.deepEqual(strictBothWays(context), { received: [], afterPiAi: [] }, `${pathName}: ${roles(context.messages)}`);
			const first = contexts[0].messages.filter((m) => m.role !== "system" || m.content === "note");
			assert.deepEqual(roles(first), sent, pathName);
		}
		// 1.6.0 sends it as it is: invalid as the stream function gets it, or after pi-ai's conversion.
		const { streamFn, contexts } = recording(v16, [{ content: [text("fine")] }]);
		await new v16.Agent({ initialState: { model: MODEL, tools: [okTool()], messages: messages() }, streamFn }).prompt("next");
		const problems = strictBothWays(contexts[0]);
		assert.notDeepEqual([...problems.received, ...problems.afterPiAi], [], "1.6.0's request is invalid");
	});
}

test("agentLoopContinue on a context whose last result answers no call sends a valid request", async () => {
	const { streamFn, contexts } = recording(ours, [{ content: [text("fine")] }]);
	const context = { messages: [user("q"), assistant("a"), toolResultMsg("c9", "t", "stray")], tools: [] };
	const stream = ours.agentLoopContinue(context, { model: MODEL, convertToLlm: (m) => m }, undefined, streamFn);
	for await (const _ of stream);
	assert.deepEqual(roles(contexts[0].messages), ["user", "assistant(stop)"]);
	assertStrictContext(contexts[0]);
});

// ---- #8658 -----------------------------------------------------------------------------------------

test("#8658: after a tool batch the abort cut short, no request follows and a queued steer stays queued; 1.4.0 and 1.6.0 call the model again with the aborted signal", async () => {
	for (const impl of [ours, ...OLD]) {
		let agent;
		const tool = makeTool(undefined, "t", {
			execute: async (id, params, signal) => {
				agent.steer(user("queued while the tool ran"));
				agent.abort();
				return { content: [{ type: "text", text: `aborted=${signal.aborted}` }], details: {} };
			},
		});
		const { streamFn, calls } = recording(impl, [{ content: [call("c1", "t")] }, { content: [text("after")] }]);
		agent = new impl.Agent({ initialState: { model: MODEL, tools: [tool] }, streamFn });
		const events = [];
		agent.subscribe((ev) => void events.push(ev.type));
		await agent.prompt("go");
		if (impl === ours) {
			assert.equal(calls.length, 1, "one request");
			assert.deepEqual(roles(agent.state.messages), ["system", "user", "assistant(toolUse c1)", "toolResult(c1)"]);
			assert.deepEqual(events.slice(-2), ["turn_end", "agent_end"]);
			assert.equal(agent.peekQueuedMessages()[0]?.content, "queued while the tool ran", "the steer is still queued");
			assert.equal(agent.state.errorMessage, undefined);
		} else {
			assert.equal(calls.length, 2, impl.name);
			assert.equal(calls[1].signal, "aborted", impl.name);
			assert.deepEqual(roles(agent.state.messages).slice(-2), ["user", "assistant(aborted)"], impl.name);
		}
	}
});

test("#8658: runAgentLoop after an aborted batch polls no queue and makes no request; 1.4.0 and 1.6.0 do both", async () => {
	for (const impl of [ours, ...OLD]) {
		const controller = new AbortController();
		const tool = makeTool(undefined, "t", {
			execute: async () => {
				controller.abort();
				return { content: [{ type: "text", text: "ran" }], details: {} };
			},
		});
		const polls = [];
		const { streamFn, calls } = recording(impl, [{ content: [call("c1", "t")] }, { content: [text("after")] }]);
		const config = {
			model: MODEL,
			convertToLlm: (m) => m,
			getSteeringMessages: async () => (polls.push("steering"), polls.length > 1 ? [user("steer")] : []),
			getFollowUpMessages: async () => (polls.push("follow-up"), []),
		};
		const added = await impl.runAgentLoop([user("go")], { messages: [], tools: [tool] }, config, async () => {}, controller.signal, streamFn);
		if (impl === ours) {
			assert.equal(calls.length, 1);
			assert.deepEqual(polls, ["steering"], "only the run's first poll");
			assert.deepEqual(roles(added), ["system", "user", "assistant(toolUse c1)", "toolResult(c1)"]);
		} else {
			assert.equal(calls.length, 2, impl.name);
			assert.equal(calls[1].signal, "aborted", impl.name);
		}
	}
});

// ---- #7053 -----------------------------------------------------------------------------------------

test("#7053: a parallel sibling that stalls and ignores the abort does not hold the finished results; 1.4.0 and 1.6.0 never end the run", async () => {
	for (const impl of [ours, ...OLD]) {
		let release;
		const fast = makeTool(undefined, "fast", { execute: async () => ({ content: [{ type: "text", text: "fast result" }], details: { ok: true } }) });
		const stall = makeTool(undefined, "stall", { execute: () => new Promise((resolve) => (release = () => resolve({ content: [{ type: "text", text: "late" }], details: {} }))) });
		const { streamFn } = recording(impl, [{ content: [call("f", "fast"), call("s", "stall")] }, { content: [text("after")] }]);
		const agent = new impl.Agent({ initialState: { model: MODEL, tools: [fast, stall] }, streamFn });
		let fastEnded;
		const ended = new Promise((resolve) => (fastEnded = resolve));
		agent.subscribe((ev) => {
			if (ev.type === "tool_execution_end" && ev.toolCallId === "f") fastEnded();
		});
		const run = agent.prompt("go");
		await ended;
		agent.abort();
		// Ours abandons the stalled call a second after the abort (a tool's grace to clean up); 1.4.0 and
		// 1.6.0 never end the run, so any wait longer than that shows it.
		const outcome = impl === ours ? await withTimeout(run, 10_000, "ours ends").then(() => "ended") : await Promise.race([run.then(() => "ended"), new Promise((resolve) => setTimeout(() => resolve("still running"), 1500))]);
		const results = agent.state.messages.filter((m) => m.role === "toolResult").map((m) => `${m.toolCallId}: ${m.content[0]?.text}`);
		if (impl === ours) {
			assert.equal(outcome, "ended");
			assert.deepEqual(results, ["f: fast result", "s: Operation aborted"]);
		} else {
			assert.equal(outcome, "still running", impl.name);
			assert.deepEqual(results, [], `${impl.name}: the finished result reached no transcript`);
		}
		// Let 1.4.0's and 1.6.0's run end (ours has dropped the late result).
		release();
		await withTimeout(agent.waitForIdle(), 2000, `${impl.name} idle`);
	}
});
