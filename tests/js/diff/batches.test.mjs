// Tool batches and runToolCall.
import { Type } from "typebox";
import { assert, scenario } from "../support/harness.mjs";
import { MODEL, assistant, call, deferred, makeTool, scripted, sleep, text, user } from "../support/scripted.mjs";
import { baseConfig, queuePolls, runLoop, toolHooks } from "../support/loop.mjs";
import { Trace, errorText, signalState, snap } from "../support/trace.mjs";

const toolLog = (t) => t.log.filter((l) => /^ev:(tool_execution|message_(start|end):toolResult)/.test(l));

/** c1 finishes only after c2's tool_execution_end was emitted: deterministic completion order c2, c1. */
function latchedRun(impl, { toolExecution, executionMode } = {}) {
	return async () => {
		const tr = new Trace();
		const c2Ended = deferred();
		const slow = makeTool(tr, "slow", {
			execute: async (id) => {
				if (id === "c1") await c2Ended.promise;
				return { content: [{ type: "text", text: `done ${id}` }], details: { id } };
			},
			...(executionMode ? { executionMode } : {}),
		});
		const streamFn = scripted(impl, [{ content: [call("c1", "slow", { n: 1 }), call("c2", "slow", { n: 2 })] }, { content: [text("done")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [slow] },
			config: baseConfig(tr, toolExecution ? { toolExecution } : {}),
			streamFn,
			onEvent: (ev) => {
				if (ev.type === "tool_execution_end" && ev.toolCallId === "c2") c2Ended.resolve();
			},
		});
		return tr.result({ calls: streamFn.calls });
	};
}

scenario("parallel: tool_execution_end in completion order, tool results in source order", (impl) => latchedRun(impl)(), {
	check(t) {
		assert.deepEqual(toolLog(t), [
			"ev:tool_execution_start:c1",
			"ev:tool_execution_start:c2",
			"ev:tool_execution_end:c2",
			"ev:tool_execution_end:c1",
			"ev:message_start:toolResult",
			"ev:message_end:toolResult",
			"ev:message_start:toolResult",
			"ev:message_end:toolResult",
		]);
		const results = t.events.filter((e) => e.type === "message_end" && e.message.role === "toolResult").map((e) => e.message.toolCallId);
		assert.deepEqual(results, ["c1", "c2"]);
		const te = t.events.find((e) => e.type === "turn_end");
		const resIds = t.events.filter((e) => e.type === "message_end" && e.message.role === "toolResult").map((e) => e.messageId);
		assert.deepEqual(te.toolResultIds, resIds);
		assert.deepEqual(t.calls[1].messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId), ["c1", "c2"]);
	},
});

function sleepyRun(impl, { toolExecution, modes = {} } = {}) {
	return async () => {
		const tr = new Trace();
		const mk = (name) =>
			makeTool(tr, name, {
				execute: async (id) => {
					await sleep(id === "c1" ? 30 : 1); // a wide gap: the order must hold on a loaded machine
					tr.hook(`finished:${id}`);
					return { content: [{ type: "text", text: `done ${id}` }], details: {} };
				},
				...(modes[name] ? { executionMode: modes[name] } : {}),
			});
		const a = mk("a");
		const b = mk("b");
		const unused = mk("unused");
		const streamFn = scripted(impl, [{ content: [call("c1", "a"), call("c2", "b"), call("c3", "a")] }, { content: [text("done")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [a, b, unused] },
			config: baseConfig(tr, toolExecution ? { toolExecution } : {}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	};
}

const SEQUENTIAL = ["c1", "c2", "c3"].flatMap((id) => [`ev:tool_execution_start:${id}`, `ev:tool_execution_end:${id}`, "ev:message_start:toolResult", "ev:message_end:toolResult"]);

scenario("sequential mode via config.toolExecution", (impl) => sleepyRun(impl, { toolExecution: "sequential" })(), {
	check: (t) => assert.deepEqual(toolLog(t), SEQUENTIAL),
});

scenario("sequential mode because one called tool has executionMode 'sequential'", (impl) => sleepyRun(impl, { modes: { b: "sequential", a: "parallel" } })(), {
	check: (t) => assert.deepEqual(toolLog(t), SEQUENTIAL),
});

scenario("an uncalled sequential tool does not make the batch sequential; unknown mode strings mean parallel", (impl) => sleepyRun(impl, { toolExecution: "bogus", modes: { unused: "sequential" } })(), {
	check(t) {
		assert.deepEqual(toolLog(t).slice(0, 3), ["ev:tool_execution_start:c1", "ev:tool_execution_start:c2", "ev:tool_execution_start:c3"]);
		assert.deepEqual(t.hooks.filter((h) => h.name.startsWith("execute")).map((h) => h.toolCallId), ["c1", "c2", "c3"], "closures invoked in content order");
	},
});

scenario(
	"parallel: immediate outcomes end during preflight, before any executed call ends",
	async (impl) => {
		const tr = new Trace();
		const ok = makeTool(tr, "ok", { parameters: Type.Object({ n: Type.Number() }) });
		const streamFn = scripted(impl, [{ content: [call("c1", "ok", { n: 1 }), call("c2", "missing"), call("c3", "ok", { n: "bad" }), call("c4", "ok", { n: 4 })] }, { content: [text("done")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [ok] }, config: baseConfig(tr, toolHooks(tr, { before: async () => undefined })), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(toolLog(t).slice(0, 8), [
				"ev:tool_execution_start:c1",
				"ev:tool_execution_start:c2",
				"ev:tool_execution_end:c2",
				"ev:tool_execution_start:c3",
				"ev:tool_execution_end:c3",
				"ev:tool_execution_start:c4",
				"ev:tool_execution_end:c1",
				"ev:tool_execution_end:c4",
			]);
		},
	},
);

scenario(
	"truncated response (stopReason 'length'): every call fails without lookup, hooks or validation; the loop continues",
	async (impl) => {
		const tr = new Trace();
		const t1 = makeTool(tr, "t", { parameters: Type.Object({ n: Type.Number() }) });
		const streamFn = scripted(impl, [{ content: [call("c1", "t", { n: 1 }), call("c2", "missing", { x: "trunc" })], stopReason: "length" }, { content: [text("retry")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [t1] },
			config: baseConfig(tr, toolHooks(tr, { before: async () => undefined, after: async () => undefined })),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.hooks.some((h) => /beforeToolCall|afterToolCall|execute/.test(h.name)), false);
			const e = t.events.find((x) => x.type === "tool_execution_end");
			assert.equal(
				e.result.content[0].text,
				'Tool call "t" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.',
			);
			assert.equal("durationMs" in e, false);
			assert.deepEqual(toolLog(t), ["c1", "c2"].flatMap((id) => [`ev:tool_execution_start:${id}`, `ev:tool_execution_end:${id}`, "ev:message_start:toolResult", "ev:message_end:toolResult"]));
			assert.equal(t.calls.length, 2);
		},
	},
);

scenario(
	"'length' without tool calls ends the run normally",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("cut off")], stopReason: "length" }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr, queuePolls(tr)), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 1) },
);

scenario(
	"a mixed batch (one terminate, one not) continues; an all-blocked terminate batch stops",
	async (impl) => {
		const tr = new Trace();
		const fin = makeTool(tr, "fin", { execute: async () => ({ content: [], details: {}, terminate: true }) });
		const other = makeTool(tr, "other");
		const streamFn = scripted(impl, [{ content: [call("c1", "fin"), call("c2", "other")] }, { content: [call("c3", "other"), call("c4", "fin")] }, { content: [text("never")] }], { tr });
		let turn = 0;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [fin, other] },
			config: baseConfig(tr, {
				...toolHooks(tr, { before: async ({ toolCall }) => (toolCall.id === "c3" || toolCall.id === "c4" ? { block: true, terminate: true } : undefined) }),
				prepareNextTurn: () => void turn++,
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 2) },
);

scenario(
	"parallel: a tool that aborts synchronously makes later closures finish with 'Operation aborted'",
	async (impl) => {
		const tr = new Trace();
		tr.stopAfter("turn_end");
		const ac = new AbortController();
		const t1 = makeTool(tr, "t", {
			execute: async (id, params, signal) => {
				if (id === "c1") ac.abort();
				await sleep(1);
				return { content: [{ type: "text", text: `ran ${id} aborted=${signal.aborted}` }], details: {} };
			},
		});
		const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [t1] }, signal: ac.signal, config: baseConfig(tr, queuePolls(tr)), streamFn });
		return tr.result({ calls: streamFn.calls.slice(0, 1) });
	},
	{
		check(t) {
			const ends = t.events.filter((e) => e.type === "tool_execution_end");
			assert.deepEqual(ends.map((e) => e.toolCallId), ["c2", "c1"]);
			assert.equal(ends[0].result.content[0].text, "Operation aborted");
			assert.equal("durationMs" in ends[0], false);
		},
	},
);

scenario(
	"parallel: abort inside beforeToolCall of the last call; the prepared earlier call ends 'Operation aborted'",
	async (impl) => {
		const tr = new Trace();
		tr.stopAfter("turn_end");
		const ac = new AbortController();
		const t1 = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [t1] },
			signal: ac.signal,
			config: baseConfig(tr, toolHooks(tr, { before: async ({ toolCall }) => (toolCall.id === "c2" ? (ac.abort(), { block: true, reason: "ignored" }) : undefined) })),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls.slice(0, 1) });
	},
	{
		check(t) {
			const ends = t.events.filter((e) => e.type === "tool_execution_end");
			assert.deepEqual(ends.map((e) => [e.toolCallId, e.result.content[0].text]), [["c2", "Operation aborted"], ["c1", "Operation aborted"]]);
			assert.equal(t.hooks.some((h) => h.name.startsWith("execute")), false);
		},
	},
);

scenario(
	"sequential: abort during the last call keeps every result",
	async (impl) => {
		const tr = new Trace();
		tr.stopAfter("turn_end");
		const ac = new AbortController();
		const t1 = makeTool(tr, "t", {
			execute: async (id) => {
				if (id === "c2") ac.abort();
				return { content: [{ type: "text", text: `ran ${id}` }], details: {} };
			},
		});
		const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [t1] },
			signal: ac.signal,
			config: baseConfig(tr, { toolExecution: "sequential", ...toolHooks(tr, { after: async (ctx, signal) => ({ details: { afterSawAbort: signal.aborted } }) }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls.slice(0, 1) });
	},
	{ check: (t) => assert.equal(t.events.filter((e) => e.type === "message_end" && e.message.role === "toolResult").length, 2) },
);

scenario(
	"parallel: a tool that cleans up on the abort (rejects 30 ms later, as a killed process exits) keeps its own error result",
	async (impl) => {
		const tr = new Trace();
		tr.stopAfter("turn_end");
		const ac = new AbortController();
		const t1 = makeTool(tr, "t", {
			execute: (id, params, signal) =>
				new Promise((resolve, reject) => {
					if (id === "c1") setTimeout(() => ac.abort(), 1);
					signal.addEventListener("abort", () => setTimeout(() => reject(new Error(`Command aborted (${id})`)), 30), { once: true });
				}),
		});
		const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [t1] }, signal: ac.signal, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls.slice(0, 1) });
	},
	{
		check(t) {
			const ends = t.events.filter((e) => e.type === "tool_execution_end");
			assert.deepEqual(ends.map((e) => e.result.content[0].text).sort(), ["Command aborted (c1)", "Command aborted (c2)"]);
		},
	},
);

// The four scenarios above compare up to the aborted batch's turn_end: 1.4.0 then sends one more
// request with the aborted signal, and ours ends the run (upstream.test.mjs).

// ---------------------------------------------------------------------------------------------------- runToolCall

const ASSISTANT = () => assistant("", { content: [{ type: "toolCall", id: "r1", name: "calc", arguments: { count: "3" } }], stopReason: "toolUse" });

scenario(
	"runToolCall: tools from options, hooks from options, raw onUpdate, original toolCall, durationMs",
	async (impl) => {
		const tr = new Trace();
		const calc = makeTool(tr, "calc", {
			parameters: Type.Object({ count: Type.Number() }),
			execute: async (id, params, signal, onUpdate) => {
				const r = onUpdate({ content: [{ type: "text", text: "half" }], details: { half: true } });
				tr.note("onUpdateReturn", snap(r));
				return { content: [{ type: "text", text: `count=${params.count}` }], details: { c: params.count }, terminate: true };
			},
		});
		const decoy = makeTool(tr, "calc", { execute: async () => ({ content: [{ type: "text", text: "decoy" }], details: {} }) });
		const msg = ASSISTANT();
		const toolCall = msg.content[0];
		const context = { messages: [user("q"), msg], tools: [decoy] };
		const hooks = toolHooks(tr, { before: async () => undefined, after: async ({ result }) => ({ details: { wrapped: result.details } }) });
		const outcome = await impl.runToolCall(toolCall, {
			tools: [calc],
			assistantMessage: msg,
			context,
			...hooks,
			onUpdate: (p) => {
				tr.hook("onUpdate", { partial: snap(p) });
				return undefined;
			},
		});
		tr.note("outcome", snap(outcome));
		tr.note("outcomeKeys", Object.keys(outcome));
		tr.note("toolCallIsOriginal", outcome.toolCall === toolCall);
		tr.note("contextRoles", context.messages.map((m) => m.role));
		return tr.result();
	},
	{
		check(t) {
			assert.deepEqual(t.notes.outcomeKeys, ["toolCall", "result", "isError", "durationMs"]);
			assert.equal(t.notes.toolCallIsOriginal, true);
			assert.equal(t.notes.outcome.result.content[0].text, "count=3");
			assert.equal(t.notes.outcome.result.terminate, true);
			assert.deepEqual(t.notes.contextRoles, ["user", "assistant"], "no messages added");
			assert.equal(t.hooks.find((h) => h.name === "beforeToolCall").signal, "none");
		},
	},
);

scenario(
	"runToolCall immediate outcomes (not found, invalid, blocked) have no durationMs key",
	async (impl) => {
		const tr = new Trace();
		const calc = makeTool(tr, "calc", { parameters: Type.Object({ count: Type.Number() }) });
		const msg = ASSISTANT();
		const out = {};
		out.notFound = await impl.runToolCall({ type: "toolCall", id: "x", name: "nope", arguments: {} }, { tools: [calc], assistantMessage: msg, context: { messages: [] } });
		out.invalid = await impl.runToolCall({ type: "toolCall", id: "y", name: "calc", arguments: { count: "many" } }, { tools: [calc], assistantMessage: msg, context: { messages: [] } });
		out.blocked = await impl.runToolCall(msg.content[0], { tools: [calc], assistantMessage: msg, context: { messages: [] }, beforeToolCall: async () => ({ block: true, terminate: true }) });
		for (const [k, v] of Object.entries(out)) tr.note(k, { keys: Object.keys(v), value: snap(v) });
		return tr.result();
	},
	{
		check(t) {
			for (const k of ["notFound", "invalid", "blocked"]) assert.deepEqual(t.notes[k].keys, ["toolCall", "result", "isError"]);
			assert.equal(t.notes.blocked.value.result.terminate, true);
		},
	},
);

scenario(
	"runToolCall with an already aborted signal returns 'Operation aborted' (outcome only)",
	async (impl) => {
		const tr = new Trace();
		const calc = makeTool(tr, "calc", { parameters: Type.Object({ count: Type.Number() }) });
		const msg = ASSISTANT();
		const ac = new AbortController();
		ac.abort();
		const outcome = await impl.runToolCall(msg.content[0], { tools: [calc], assistantMessage: msg, context: { messages: [] }, signal: ac.signal, beforeToolCall: async () => undefined });
		return { outcome: snap(outcome), keys: Object.keys(outcome), executed: tr.hooks.some((h) => h.name.startsWith("execute")) };
	},
	{
		check(t) {
			assert.equal(t.outcome.result.content[0].text, "Operation aborted");
			assert.equal(t.executed, false);
		},
	},
);

scenario(
	"runToolCall without onUpdate (default no-op) and with execute throwing",
	async (impl) => {
		const tr = new Trace();
		const t1 = makeTool(tr, "t", {
			execute: async (id, p, s, onUpdate) => {
				onUpdate({ content: [], details: {} });
				throw new Error("exec broke");
			},
		});
		const msg = assistant("", { content: [{ type: "toolCall", id: "z", name: "t", arguments: {} }] });
		const outcome = await impl.runToolCall(msg.content[0], { tools: [t1], assistantMessage: msg, context: { messages: [] } });
		return { outcome: snap(outcome), keys: Object.keys(outcome) };
	},
	{ check: (t) => assert.equal(t.outcome.isError, true) },
);

scenario(
	"runToolCall rejects when an onUpdate promise rejects",
	async (impl) => {
		const tr = new Trace();
		const t1 = makeTool(tr, "t", {
			execute: async (id, p, s, onUpdate) => {
				onUpdate({ content: [{ type: "text", text: "u" }], details: {} });
				return { content: [], details: {} };
			},
		});
		const msg = assistant("", { content: [{ type: "toolCall", id: "z", name: "t", arguments: {} }] });
		try {
			const o = await impl.runToolCall(msg.content[0], { tools: [t1], assistantMessage: msg, context: { messages: [] }, onUpdate: async () => Promise.reject(new Error("sink broke")) });
			tr.note("resolved", snap(o));
		} catch (e) {
			tr.note("rejected", errorText(e));
		}
		return tr.result();
	},
	{ check: (t) => assert.equal(t.notes.rejected?.message, "sink broke") },
);

scenario("runToolCall passes options.context, assistantMessage and signal to the hooks", async (impl) => {
	const tr = new Trace();
	const t1 = makeTool(tr, "t");
	const msg = assistant("", { content: [{ type: "toolCall", id: "z", name: "t", arguments: { a: 1 } }] });
	const context = { messages: [user("x")] };
	const ac = new AbortController();
	const hooks = toolHooks(tr, { before: async () => undefined, after: async () => undefined });
	await impl.runToolCall(msg.content[0], { tools: [t1], assistantMessage: msg, context, signal: ac.signal, ...hooks });
	tr.note("contextId", tr.id(context));
	tr.note("msgId", tr.id(msg));
	tr.note("signal", signalState(ac.signal));
	return tr.result();
}, {
	check(t) {
		const b = t.hooks.find((h) => h.name === "beforeToolCall");
		assert.equal(b.contextId, t.notes.contextId);
		assert.equal(b.assistantMessageId, t.notes.msgId);
		assert.equal(b.signal, "live");
	},
});

// keep MODEL referenced for readers looking for the model used by ASSISTANT()
void MODEL;
