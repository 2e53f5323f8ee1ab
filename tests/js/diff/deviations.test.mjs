// Deliberate deviations from 1.4.0 (see DEVIATIONS.md). These run only against ours: the reference
// would hang or lose tool results here.
import { assert, deviation } from "../support/harness.mjs";
import { MODEL, call, deferred, makeTool, scripted, sleep, text, user } from "../support/scripted.mjs";
import { baseConfig, queuePolls, runLoop, toolHooks } from "../support/loop.mjs";
import { finalState, makeAgent, recordAgent, settleRun } from "../support/agent.mjs";
import { Trace, labels } from "../support/trace.mjs";

const NO_DEFAULT = "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().";

/** The Agent-style failure tail: message_start/message_end (assistant, stopReason), turn_end, agent_end. */
function assertFailureTail(tr, { stopReason = "error", errorMessage }) {
	const ev = tr.events;
	assert.ok(ev.length >= 4, `at least the four failure events, got ${labels(tr).join(", ")}`);
	const tail = ev.slice(-4);
	assert.deepEqual(
		tail.map((e) => e.type),
		["message_start", "message_end", "turn_end", "agent_end"],
		`failure tail, got ${labels(tr).join(", ")}`,
	);
	const [ms, me, te, ae] = tail;
	for (const m of [ms.message, me.message]) {
		assert.equal(m.role, "assistant");
		assert.equal(m.stopReason, stopReason);
		assert.equal(m.errorMessage, errorMessage);
		assert.deepEqual(m.content, [{ type: "text", text: "" }]);
	}
	assert.equal(te.messageId, me.messageId, "turn_end carries the failure message");
	assert.deepEqual(te.toolResultIds, []);
	assert.equal(ae.messageIds.at(-1), me.messageId, "agent_end.messages ends with the failure message");
	assert.equal(tr.notes.resultIsAgentEndMessages, true, "result() resolves with agent_end.messages");
	assert.equal(tr.notes.rejected, undefined);
}

async function streamFailure(impl, { kind = "stream", prompts = [user("hi")], context = { messages: [] }, config, streamFn, signal, responses = [{ content: [text("x")] }] }) {
	const tr = new Trace();
	const fn = streamFn === undefined ? scripted(impl, responses, { tr }) : streamFn;
	await runLoop(impl, { tr, kind, prompts, context, config: config(tr), streamFn: fn, signal });
	return tr;
}

const PROMPT_PREFIX = ["agent_start", "turn_start", "message_start:user", "message_end:user"];

deviation("deviation: agentLoop ends with failure events when convertToLlm throws", async (impl) => {
	const tr = await streamFailure(impl, { config: (t) => baseConfig(t, { convertToLlm: () => { throw new Error("convert failed"); } }) });
	assert.deepEqual(labels(tr).slice(0, 4), PROMPT_PREFIX);
	assertFailureTail(tr, { errorMessage: "convert failed" });
	assert.equal(tr.events.length, 8);
});

deviation("deviation: agentLoop ends with failure events when streamFn throws synchronously", async (impl) => {
	const tr = await streamFailure(impl, { config: (t) => baseConfig(t), responses: [{ throwSync: new Error("sync stream failure") }] });
	assert.deepEqual(labels(tr).slice(0, 4), PROMPT_PREFIX);
	assertFailureTail(tr, { errorMessage: "sync stream failure" });
});

deviation("deviation: agentLoop ends with failure events when streamFn rejects", async (impl) => {
	const tr = await streamFailure(impl, { config: (t) => baseConfig(t), responses: [{ reject: new Error("async stream failure") }] });
	assertFailureTail(tr, { errorMessage: "async stream failure" });
});

deviation("deviation: agentLoop ends with failure events when getApiKey throws a non-Error", async (impl) => {
	const tr = await streamFailure(impl, { config: (t) => baseConfig(t, { getApiKey: () => { throw "key failed"; } }) });
	assertFailureTail(tr, { errorMessage: "key failed" });
});

deviation("deviation: agentLoop failure after an abort has stopReason 'aborted'", async (impl) => {
	const ac = new AbortController();
	const tr = await streamFailure(impl, {
		signal: ac.signal,
		config: (t) =>
			baseConfig(t, {
				transformContext: async () => {
					ac.abort();
					throw new Error("transform failed");
				},
			}),
	});
	assertFailureTail(tr, { stopReason: "aborted", errorMessage: "transform failed" });
});

deviation("deviation: agentLoop without stream function ends with failure events after the prompt events", async (impl) => {
	const tr = await streamFailure(impl, { streamFn: null, config: (t) => baseConfig(t) });
	assert.deepEqual(labels(tr).slice(0, 4), PROMPT_PREFIX);
	assertFailureTail(tr, { errorMessage: NO_DEFAULT });
	assert.equal(tr.hooks.length, 0, "nothing ran after the missing stream function");
});

deviation("deviation: agentLoopContinue ends with failure events when prepareRequest throws", async (impl) => {
	const tr = await streamFailure(impl, {
		kind: "streamContinue",
		context: { messages: [user("q")] },
		config: (t) => baseConfig(t, { prepareRequest: () => { throw new Error("prepare failed"); } }),
	});
	assert.deepEqual(labels(tr).slice(0, 2), ["agent_start", "turn_start"]);
	assertFailureTail(tr, { errorMessage: "prepare failed" });
});

deviation("deviation: agentLoop ends with failure events when finishTurn throws after the assistant message", async (impl) => {
	const tr = await streamFailure(impl, { config: (t) => baseConfig(t, { finishTurn: async () => { throw new Error("finish failed"); } }) });
	assert.ok(labels(tr).includes("message_end:assistant"));
	assertFailureTail(tr, { errorMessage: "finish failed" });
	// the failure message is the last message_end; the normal assistant message ended before it
	assert.equal(tr.events.filter((e) => e.type === "message_end" && e.message.role === "assistant").length, 2);
});

deviation("deviation: agentLoop ends with failure events when the initial steering poll rejects", async (impl) => {
	const tr = await streamFailure(impl, { config: (t) => baseConfig(t, { getSteeringMessages: async () => { throw new Error("poll failed"); } }) });
	assertFailureTail(tr, { errorMessage: "poll failed" });
});

deviation("deviation: agentLoop ends (no hang) when a tool declaration cannot be serialised", async (impl) => {
	const bad = makeTool(null, "bad");
	bad.parameters = undefined;
	const tr = await streamFailure(impl, { context: { messages: [], tools: [bad] }, config: (t) => baseConfig(t) });
	const tail = tr.events.slice(-4).map((e) => e.type);
	assert.deepEqual(tail, ["message_start", "message_end", "turn_end", "agent_end"]);
	assert.equal(tr.events.at(-2).message.stopReason, "error");
	assert.equal(tr.notes.resultIsAgentEndMessages, true);
});

// ----------------------------------------------------------------------------------------------- aborted batches

function abortedToolResults(tr) {
	return tr.events.filter((e) => e.type === "message_end" && e.message.role === "toolResult").map((e) => e.message);
}

function assertEveryStartEnded(tr, ids) {
	const starts = tr.events.filter((e) => e.type === "tool_execution_start").map((e) => e.toolCallId);
	const ends = tr.events.filter((e) => e.type === "tool_execution_end").map((e) => e.toolCallId);
	assert.deepEqual([...starts].sort(), [...ids].sort(), "every call started");
	assert.deepEqual([...ends].sort(), [...ids].sort(), "every started call ended exactly once");
}

function assertAbortedEnd(tr, id) {
	const e = tr.events.find((x) => x.type === "tool_execution_end" && x.toolCallId === id);
	assert.ok(e, `tool_execution_end for ${id}`);
	assert.deepEqual(e.result, { content: [{ type: "text", text: "Operation aborted" }], details: {} });
	assert.equal(e.isError, true);
	assert.equal("durationMs" in e, false);
	const m = abortedToolResults(tr).find((x) => x.toolCallId === id);
	assert.ok(m, `toolResult message for ${id}`);
	assert.equal(m.isError, true);
	assert.deepEqual(m.content, [{ type: "text", text: "Operation aborted" }]);
}

deviation("deviation: sequential abort during call 1: calls 2 and 3 still get start/end 'Operation aborted' and results", async (impl) => {
	const tr = new Trace();
	const ac = new AbortController();
	const t1 = makeTool(tr, "t", {
		execute: async (id) => {
			if (id === "c1") ac.abort();
			return { content: [{ type: "text", text: `ran ${id}` }], details: {} };
		},
	});
	const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t"), call("c3", "t")] }, { content: [text("never")] }], { tr });
	await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [t1] }, signal: ac.signal, config: baseConfig(tr, { toolExecution: "sequential", ...queuePolls(tr) }), streamFn });
	assert.equal(tr.notes.rejected, undefined);
	assertEveryStartEnded(tr, ["c1", "c2", "c3"]);
	assert.deepEqual(tr.hooks.filter((h) => h.name === "execute:t").map((h) => h.toolCallId), ["c1"]);
	assertAbortedEnd(tr, "c2");
	assertAbortedEnd(tr, "c3");
	assert.deepEqual(abortedToolResults(tr).map((m) => m.toolCallId), ["c1", "c2", "c3"]);
	// sequential order per call: start, end, result
	const seq = tr.log.filter((l) => /tool_execution|toolResult/.test(l));
	assert.deepEqual(seq, ["c1", "c2", "c3"].flatMap((id) => [`ev:tool_execution_start:${id}`, `ev:tool_execution_end:${id}`, "ev:message_start:toolResult", "ev:message_end:toolResult"]));
	const te = tr.events.find((e) => e.type === "turn_end");
	assert.equal(te.toolResultIds.length, 3);
	assert.equal(tr.events.at(-1).type, "agent_end");
});

deviation("deviation: parallel abort in beforeToolCall of call 1: every call gets 'Operation aborted' and a result", async (impl) => {
	const tr = new Trace();
	const ac = new AbortController();
	const t1 = makeTool(tr, "t");
	const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t"), call("c3", "t")] }, { content: [text("never")] }], { tr });
	await runLoop(impl, {
		tr,
		prompts: [user("go")],
		context: { messages: [], tools: [t1] },
		signal: ac.signal,
		config: baseConfig(tr, toolHooks(tr, { before: async ({ toolCall }) => void (toolCall.id === "c1" && ac.abort()) })),
		streamFn,
	});
	assert.equal(tr.notes.rejected, undefined);
	assertEveryStartEnded(tr, ["c1", "c2", "c3"]);
	for (const id of ["c1", "c2", "c3"]) assertAbortedEnd(tr, id);
	assert.equal(tr.hooks.some((h) => h.name.startsWith("execute")), false);
	assert.deepEqual(abortedToolResults(tr).map((m) => m.toolCallId), ["c1", "c2", "c3"], "results in source order");
	assert.equal(tr.events.find((e) => e.type === "turn_end").toolResultIds.length, 3);
});

deviation("deviation: parallel abort while preparing call 2: prepared call 1 and un-prepared call 3 also end aborted", async (impl) => {
	const tr = new Trace();
	const ac = new AbortController();
	const t1 = makeTool(tr, "t");
	const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t"), call("c3", "t")] }, { content: [text("never")] }], { tr });
	await runLoop(impl, {
		tr,
		prompts: [user("go")],
		context: { messages: [], tools: [t1] },
		signal: ac.signal,
		config: baseConfig(tr, toolHooks(tr, { before: async ({ toolCall }) => void (toolCall.id === "c2" && ac.abort()) })),
		streamFn,
	});
	assertEveryStartEnded(tr, ["c1", "c2", "c3"]);
	for (const id of ["c1", "c2", "c3"]) assertAbortedEnd(tr, id);
	assert.deepEqual(abortedToolResults(tr).map((m) => m.toolCallId), ["c1", "c2", "c3"]);
});

deviation("deviation: Agent sequential abort inside a tool: the transcript has a result for every call", async (impl) => {
	const tr = new Trace();
	let agent;
	const t1 = makeTool(tr, "t", {
		execute: async (id) => {
			if (id === "c1") agent.abort();
			return { content: [{ type: "text", text: `ran ${id}` }], details: {} };
		},
	});
	({ agent } = makeAgent(impl, tr, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("never")] }], {
		initialState: { model: MODEL, tools: [t1] },
		toolExecution: "sequential",
	}));
	recordAgent(agent, tr);
	const r = await settleRun(agent.prompt("go"));
	assert.deepEqual(r, { resolved: true });
	const st = finalState(agent, tr);
	assert.deepEqual(st.messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId), ["c1", "c2"]);
	assert.deepEqual(st.pending, []);
	assert.equal(st.isStreaming, false);
	assertEveryStartEnded(tr, ["c1", "c2"]);
	assertAbortedEnd(tr, "c2");
});

deviation("deviation: a listener throwing on a parallel tool_execution_end: no orphaned events after the run, running tools awaited", async (impl) => {
	const tr = new Trace();
	let c1Done = false;
	const t1 = makeTool(tr, "t", {
		execute: async (id) => {
			if (id === "c1") {
				await sleep(30);
				c1Done = true;
			}
			return { content: [{ type: "text", text: `ran ${id}` }], details: {} };
		},
	});
	const { agent } = makeAgent(impl, tr, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("next")] }], { initialState: { model: MODEL, tools: [t1] } });
	let calls = 0;
	agent.subscribe((ev) => {
		calls++;
		tr.event(ev);
		if (ev.type === "tool_execution_end" && ev.toolCallId === "c2") throw new Error("listener broke on c2");
	});
	const r = await settleRun(agent.prompt("go"));
	const callsAtResolve = calls;
	const c1DoneAtResolve = c1Done;
	await sleep(60);
	assert.deepEqual(r, { resolved: true });
	assert.equal(calls, callsAtResolve, "no listener calls after prompt() resolved");
	assert.equal(c1DoneAtResolve, true, "the still-running tool settled before the run ended");
	assertFailureTail({ ...tr, notes: { resultIsAgentEndMessages: true } }, { errorMessage: "listener broke on c2" });
	assert.equal(agent.state.isStreaming, false);
	assert.deepEqual([...agent.state.pendingToolCalls], []);
	assert.equal(agent.state.errorMessage, "listener broke on c2");
});

deviation("deviation: waitForIdle() after a listener failure covers the running parallel tool", async (impl) => {
	const tr = new Trace();
	const release = deferred();
	let c1Settled = false;
	const t1 = makeTool(tr, "t", {
		execute: async (id) => {
			if (id === "c1") {
				await release.promise;
				c1Settled = true;
			}
			return { content: [{ type: "text", text: `ran ${id}` }], details: {} };
		},
	});
	const { agent } = makeAgent(impl, tr, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("next")] }], { initialState: { model: MODEL, tools: [t1] } });
	agent.subscribe((ev) => {
		if (ev.type === "tool_execution_end" && ev.toolCallId === "c2") {
			setTimeout(() => release.resolve(), 20);
			throw new Error("listener broke");
		}
	});
	const run = agent.prompt("go");
	run.catch(() => {});
	await sleep(1);
	await agent.waitForIdle();
	assert.equal(c1Settled, true, "idle only after the running tool settled");
	assert.equal(agent.state.isStreaming, false);
});

deviation("deviation: an update sink that rejects still gives the call its end and result, then the run fails", async (impl) => {
	const tr = new Trace();
	const t1 = makeTool(tr, "t", {
		execute: async (id, p, s, onUpdate) => {
			onUpdate({ content: [{ type: "text", text: "progress" }], details: {} });
			return { content: [{ type: "text", text: "done" }], details: {} };
		},
	});
	const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("never")] }], { tr });
	await runLoop(impl, {
		tr,
		prompts: [user("go")],
		context: { messages: [], tools: [t1] },
		config: baseConfig(tr),
		streamFn,
		onEvent: async (ev) => {
			if (ev.type === "tool_execution_update") throw new Error("update sink failed");
		},
	});
	// 1.4.0 rejects without tool_execution_end (and reports an unhandled rejection);
	// ours finishes the call first, so no tool call is left without a result.
	assert.equal(tr.notes.rejected.message, "update sink failed");
	const types = tr.events.map((e) => e.type);
	const update = types.indexOf("tool_execution_update");
	assert.deepEqual(types.slice(update), ["tool_execution_update", "tool_execution_end", "message_start", "message_end"]);
	assert.equal(streamFn.calls.length, 1, "no further request after the failure");
});

// ---- tool arguments: nesting limits (docs/deviations.md, the tool-argument limits) ----------------

function nestedArgs(depth) {
	let value = 1;
	for (let i = 0; i < depth; i++) value = { a: value };
	return value;
}

async function runDeep(impl, parameters, args) {
	const tool = { name: "t", label: "t", description: "t", parameters, execute: async () => ({ content: [{ type: "text", text: "ran" }], details: {} }) };
	const outcome = await impl.runToolCall({ type: "toolCall", id: "c1", name: "t", arguments: args }, { tools: [tool] });
	return outcome.isError ? outcome.result.content[0].text : "ran";
}

deviation("deviation: tool arguments nested deeper than 256 levels, or cyclic, end in an error result", async (impl) => {
	assert.equal(await runDeep(impl, {}, nestedArgs(256)), "ran");
	assert.equal(await runDeep(impl, {}, nestedArgs(257)), "Tool arguments are nested too deeply (or cyclic).");
	const cyclic = { a: 1 };
	cyclic.self = cyclic;
	assert.equal(await runDeep(impl, {}, cyclic), "Tool arguments are nested too deeply (or cyclic).");
});

deviation("deviation: a schema recursing through $ref stops with 'nested too deeply for the schema' long before 1.4.0's limit", async (impl) => {
	const schema = { $id: "r", type: "object", properties: { a: { anyOf: [{ $ref: "r" }, { type: "number" }] } } };
	assert.equal(await runDeep(impl, schema, nestedArgs(40)), "ran");
	// 1.4.0 validates this depth (its limit is a few thousand levels); the wasm's validator stops at half its stack.
	assert.equal(await runDeep(impl, schema, nestedArgs(200)), "Tool arguments are nested too deeply for the schema.");
});
