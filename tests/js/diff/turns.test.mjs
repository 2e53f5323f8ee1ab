// The turn loop: queue poll timing, prepareNextTurn / prepareRequest swaps, finishTurn, hard exits.
import { assert, scenario } from "../support/harness.mjs";
import { MODEL, MODEL_B, call, makeTool, scripted, text, user } from "../support/scripted.mjs";
import { baseConfig, queuePolls, recordedHooks, runLoop } from "../support/loop.mjs";
import { Trace, labels } from "../support/trace.mjs";

const hookNames = (t) => t.log.filter((l) => l.startsWith("hook:") && l !== "hook:convertToLlm").map((l) => l.slice(5));

scenario(
	"initial steering poll runs after the prompt events; its messages precede the first request without a turn_start",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("prompt")],
			context: { messages: [] },
			config: baseConfig(tr, queuePolls(tr, { steer: [[user("early steer")]] })),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.log, [
				"ev:agent_start",
				"ev:turn_start",
				"ev:message_start:user",
				"ev:message_end:user",
				"hook:getSteeringMessages",
				"ev:message_start:user",
				"ev:message_end:user",
				"hook:convertToLlm",
				"hook:streamFn",
				"ev:message_start:assistant",
				"ev:message_update:assistant",
				"ev:message_update:assistant",
				"ev:message_update:assistant",
				"ev:message_end:assistant",
				"ev:turn_end:assistant",
				"hook:getSteeringMessages",
				"hook:getFollowUpMessages",
				"ev:agent_end",
			]);
			assert.deepEqual(t.calls[0].messages.map((m) => m.content), ["prompt", "early steer"]);
		},
	},
);

scenario(
	"steering is polled after every turn and again after prepareNextTurn when that poll was empty",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			config: baseConfig(tr, { ...queuePolls(tr), ...recordedHooks(tr, { prepareNextTurn: () => undefined }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(hookNames(t), [
				"getSteeringMessages",
				"streamFn",
				"execute:t",
				"getSteeringMessages",
				"prepareNextTurn",
				"getSteeringMessages",
				"streamFn",
				"getSteeringMessages",
				"getFollowUpMessages",
			]);
			const p = t.hooks.find((h) => h.name === "prepareNextTurn");
			assert.equal(p.argc, 1, "low-level prepareNextTurn gets no signal");
			assert.deepEqual(p.keys, ["message", "toolResults", "context", "newMessages"]);
		},
	},
);

scenario(
	"a non-empty turn_end poll is not re-polled after prepareNextTurn (one-at-a-time safety)",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			config: baseConfig(tr, { ...queuePolls(tr, { steer: [[], [user("steer-1")], [user("steer-2")]] }), ...recordedHooks(tr, { prepareNextTurn: () => undefined }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(hookNames(t).slice(0, 6), ["getSteeringMessages", "streamFn", "execute:t", "getSteeringMessages", "prepareNextTurn", "streamFn"]);
			assert.deepEqual(t.calls[1].messages.map((m) => m.role), ["system", "user", "assistant", "toolResult", "user"]);
			// steer-2 arrives at the poll after turn 2 and produces a third request
			assert.equal(t.calls.length, 3);
		},
	},
);

scenario(
	"follow-ups are polled only when the agent would stop and start a new turn (no steering re-poll)",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("first")] }, { content: [text("second")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: baseConfig(tr, { ...queuePolls(tr, { follow: [[user("follow-1"), user("follow-2")]] }), ...recordedHooks(tr, { prepareNextTurn: () => undefined }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(hookNames(t), [
				"getSteeringMessages",
				"streamFn",
				"getSteeringMessages",
				"getFollowUpMessages",
				"prepareNextTurn",
				"streamFn",
				"getSteeringMessages",
				"getFollowUpMessages",
			]);
			assert.deepEqual(t.calls[1].messages.map((m) => m.content?.[0]?.text ?? m.content), ["go", "first", "follow-1", "follow-2"]);
		},
	},
);

scenario(
	"prepareNextTurn messages precede steering messages; both get message_start/message_end after turn_start",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
		const prepared = { role: "custom", note: "prepared", timestamp: 50 };
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			config: baseConfig(tr, {
				...queuePolls(tr, { steer: [[], [user("steer")]] }),
				...recordedHooks(tr, { prepareNextTurn: () => ({ messages: [prepared] }) }),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const i = t.log.indexOf("hook:prepareNextTurn");
			assert.deepEqual(t.log.slice(i + 1, i + 6), ["ev:turn_start", "ev:message_start:custom", "ev:message_end:custom", "ev:message_start:user", "ev:message_end:user"]);
		},
	},
);

scenario(
	"prepareNextTurn and prepareRequest swap model and thinking level; the stamp follows the request",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [call("c2", "t")] }, { content: [text("done")] }], { tr });
		let turn = 0;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			config: baseConfig(tr, {
				reasoning: "medium",
				...recordedHooks(tr, {
					prepareNextTurn: () => (++turn === 1 ? { model: MODEL_B, thinkingLevel: "off" } : { thinkingLevel: "high" }),
					prepareRequest: () => undefined,
				}),
			}),
			streamFn,
		});
		tr.note("stamps", tr.events.filter((e) => e.type === "message_end" && e.message.role === "assistant").map((e) => e.message.thinkingLevel));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.calls.map((c) => c.model), ["model-a", "model-b", "model-b"]);
			assert.deepEqual(t.calls.map((c) => c.reasoning), ["medium", undefined, "high"]);
			assert.deepEqual(t.notes.stamps, ["medium", "off", "high"]);
			assert.deepEqual(t.hooks.filter((h) => h.name === "prepareRequest").map((h) => [h.model, h.thinkingLevel]), [["model-a", "medium"], ["model-b", "off"], ["model-b", "high"]]);
		},
	},
);

scenario(
	"prepareNextTurn context replacement: the next request sees the new context; newMessages keeps growing",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
		const replacement = { messages: [user("compacted summary")], tools: [tool] };
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [user("history")], tools: [tool] },
			config: baseConfig(tr, { ...recordedHooks(tr, { prepareNextTurn: () => ({ context: replacement }) }) }),
			streamFn,
		});
		tr.note("replacementRoles", replacement.messages.map((m) => m.role));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.calls[1].messages.map((m) => m.role), ["user", "system"], "replacement transcript + re-declared tools");
			assert.deepEqual(t.notes.replacementRoles, ["user", "system", "assistant"], "the loop appends to the replacement context's array");
			assert.deepEqual(t.events.at(-1).roles, ["system", "user", "assistant", "toolResult", "system", "assistant"]);
		},
	},
);

scenario(
	"prepareRequest runs before the first request with thinkingLevel 'off'; its messages field is ignored",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			signal: new AbortController().signal,
			config: baseConfig(tr, {
				...recordedHooks(tr, { prepareRequest: () => ({ model: MODEL_B, thinkingLevel: "low", messages: [user("ignored")] }) }),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const h = t.hooks.find((x) => x.name === "prepareRequest");
			assert.deepEqual(h.keys, ["context", "model", "thinkingLevel"]);
			assert.equal(h.thinkingLevel, "off");
			assert.equal(h.signal, "live");
			assert.equal(t.calls[0].model, "model-b");
			assert.equal(t.calls[0].reasoning, "low");
			assert.equal(t.calls[0].messages.length, 1);
		},
	},
);

scenario(
	"tools added through prepareRequest's context are declared only at the next iteration",
	async (impl) => {
		const tr = new Trace();
		const t1 = makeTool(tr, "t");
		const u = makeTool(tr, "u");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
		let first = true;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [t1] },
			config: baseConfig(tr, {
				...recordedHooks(tr, {
					prepareRequest: ({ context }) => {
						if (!first) return undefined;
						first = false;
						return { context: { ...context, tools: [t1, u] } };
					},
				}),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const sys = (c) => c.messages.filter((m) => m.role === "system").map((m) => (m.toolsAdded ?? []).map((x) => x.name));
			assert.deepEqual(sys(t.calls[0]), [["t"]]);
			assert.deepEqual(sys(t.calls[1]), [["t"], ["u"]]);
		},
	},
);

for (const reason of ["error", "aborted"]) {
	scenario(
		`hard exit on stopReason ${reason}: tool calls ignored, finishTurn then turn_end then agent_end, no polls`,
		async (impl) => {
			const tr = new Trace();
			const tool = makeTool(tr, "t");
			const streamFn = scripted(impl, [{ content: [text("partial"), call("c1", "t")], stopReason: reason, errorMessage: `boom ${reason}` }], { tr });
			await runLoop(impl, {
				tr,
				prompts: [user("go")],
				context: { messages: [], tools: [tool] },
				config: baseConfig(tr, {
					...queuePolls(tr, { steer: [[], [user("never")]], follow: [[user("never")]] }),
					...recordedHooks(tr, { finishTurn: () => ({ action: "continue" }), prepareNextTurn: () => undefined }),
				}),
				streamFn,
			});
			return tr.result({ calls: streamFn.calls });
		},
		{
			check(t) {
				assert.deepEqual(hookNames(t), ["getSteeringMessages", "streamFn", "finishTurn"]);
				assert.deepEqual(t.log.slice(-3), ["hook:finishTurn", "ev:turn_end:assistant", "ev:agent_end"]);
				const te = t.events.find((e) => e.type === "turn_end");
				assert.deepEqual(te.toolResultIds, []);
				assert.equal(te.message.errorMessage, `boom ${reason}`);
			},
		},
	);
}

scenario(
	"finishTurn runs before turn_end with live references (message, toolResults, context, newMessages)",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("done")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			signal: new AbortController().signal,
			config: baseConfig(tr, { ...recordedHooks(tr, { finishTurn: () => undefined }) }),
			streamFn,
		});
		return tr.result();
	},
	{
		check(t) {
			const f = t.hooks.filter((h) => h.name === "finishTurn");
			assert.equal(f.length, 2);
			assert.equal(f[0].argc, 2);
			assert.equal(f[0].signal, "live");
			assert.equal(f[0].newMessagesId, f[1].newMessagesId, "the same newMessages array across turns");
			const end = t.events.at(-1);
			assert.equal(end.messagesId, f[0].newMessagesId, "agent_end carries newMessages");
			const te = t.events.find((e) => e.type === "turn_end");
			assert.deepEqual(te.toolResultIds, f[0].toolResultIds);
			assert.equal(t.log.indexOf("hook:finishTurn") < t.log.indexOf("ev:turn_end:assistant"), true);
		},
	},
);

scenario(
	"finishTurn {action:'end'} ends after turn_end: no steering/follow-up poll, no prepareNextTurn",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			config: baseConfig(tr, {
				...queuePolls(tr, { steer: [[], [user("pending")]] }),
				...recordedHooks(tr, { finishTurn: () => ({ action: "end" }), prepareNextTurn: () => undefined }),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(hookNames(t), ["getSteeringMessages", "streamFn", "execute:t", "finishTurn"]);
			assert.equal(t.calls.length, 1);
			assert.deepEqual(t.log.slice(-2), ["ev:turn_end:assistant", "ev:agent_end"]);
		},
	},
);

scenario(
	"finishTurn {action:'continue'} without tools forces exactly one context-only turn",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("one")] }, { content: [text("two")] }, { content: [text("three")] }], { tr });
		let n = 0;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: baseConfig(tr, {
				...queuePolls(tr),
				...recordedHooks(tr, { finishTurn: () => (++n === 1 ? { action: "continue" } : undefined), prepareNextTurn: () => undefined }),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(hookNames(t), [
				"getSteeringMessages",
				"streamFn",
				"finishTurn",
				"getSteeringMessages",
				"getFollowUpMessages",
				"prepareNextTurn",
				"getSteeringMessages",
				"streamFn",
				"finishTurn",
				"getSteeringMessages",
				"getFollowUpMessages",
			]);
			assert.equal(t.calls.length, 2);
			assert.deepEqual(t.calls[1].messages.map((m) => m.role), ["user", "assistant"]);
		},
	},
);

scenario(
	"finishTurn {action:'continue'} on a tool turn adds no extra request",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }, { content: [text("extra")] }], { tr });
		let n = 0;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			config: baseConfig(tr, { ...recordedHooks(tr, { finishTurn: () => (++n === 1 ? { action: "continue" } : undefined) }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 2) },
);

scenario(
	"an unknown finishTurn action acts like undefined",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("one")] }, { content: [text("two")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: baseConfig(tr, { ...queuePolls(tr), ...recordedHooks(tr, { finishTurn: () => ({ action: "stop" }) }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 1) },
);

scenario(
	"a follow-up satisfies an explicit continuation (no extra context-only turn)",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("one")] }, { content: [text("two")] }, { content: [text("three")] }], { tr });
		let n = 0;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: baseConfig(tr, {
				...queuePolls(tr, { follow: [[user("follow")]] }),
				...recordedHooks(tr, { finishTurn: () => (++n === 1 ? { action: "continue" } : undefined) }),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 2) },
);

scenario(
	"a batch where every result terminates stops, but the follow-up poll still runs",
	async (impl) => {
		const tr = new Trace();
		const done = makeTool(tr, "finish", { execute: async () => ({ content: [{ type: "text", text: "bye" }], details: null, terminate: true }) });
		const streamFn = scripted(impl, [{ content: [call("c1", "finish"), call("c2", "finish")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [done] }, config: baseConfig(tr, queuePolls(tr)), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.calls.length, 1);
			assert.deepEqual(hookNames(t).slice(-2), ["getSteeringMessages", "getFollowUpMessages"]);
		},
	},
);

scenario(
	"a terminating batch still continues when steering is pending",
	async (impl) => {
		const tr = new Trace();
		const done = makeTool(tr, "finish", { execute: async () => ({ content: [{ type: "text", text: "bye" }], details: null, terminate: true }) });
		const streamFn = scripted(impl, [{ content: [call("c1", "finish")] }, { content: [text("after steer")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [done] },
			config: baseConfig(tr, queuePolls(tr, { steer: [[], [user("steer now")]] })),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 2) },
);

scenario(
	"a three-turn tool chain: one request per turn, turn_start between turns",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const streamFn = scripted(impl, [{ content: [call("c1", "t", { n: 1 })] }, { content: [text("thinking more"), call("c2", "t", { n: 2 })] }, { content: [text("done")] }], { tr });
		await runLoop(impl, { tr, kind: "stream", prompts: [user("go")], context: { messages: [], tools: [tool] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.calls.length, 3);
			assert.equal(labels(t).filter((l) => l === "turn_start").length, 3);
			assert.equal(labels(t).filter((l) => l === "turn_end").length, 3);
		},
	},
);

scenario(
	// After the batch's turn_end 1.4.0 polls the steering queue, injects the message and sends one
	// more request with the aborted signal; ours ends the run (upstream.test.mjs).
	"an abort during a tool: the batch's turn and its hooks as in 1.4.0 (compared up to its turn_end)",
	async (impl) => {
		const tr = new Trace();
		tr.stopAfter("turn_end");
		const ac = new AbortController();
		const tool = makeTool(tr, "t", {
			execute: async () => {
				ac.abort();
				return { content: [{ type: "text", text: "ran" }], details: {} };
			},
		});
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("never")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [tool] },
			signal: ac.signal,
			config: baseConfig(tr, {
				...queuePolls(tr, { steer: [[], [user("queued steer")]] }),
				...recordedHooks(tr, { prepareNextTurn: () => undefined, prepareRequest: () => undefined, finishTurn: () => undefined }),
			}),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls.slice(0, 1) });
	},
	{
		check(t) {
			const ends = t.events.filter((e) => e.type === "message_end").map((e) => e.message.role + ":" + (e.message.stopReason ?? ""));
			assert.deepEqual(ends, ["system:", "user:", "assistant:toolUse", "toolResult:"]);
			assert.ok(t.hooks.some((h) => h.name === "finishTurn"));
		},
	},
);

scenario(
	"queue polls returning undefined/null are treated as empty",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: baseConfig(tr, { getSteeringMessages: async () => undefined, getFollowUpMessages: async () => null }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.events.at(-1).type, "agent_end") },
);

scenario("prepareNextTurn returning a falsy value keeps context/config; reasoning stays", async (impl) => {
	const tr = new Trace();
	const tool = makeTool(tr, "t");
	const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
	await runLoop(impl, {
		tr,
		prompts: [user("go")],
		context: { messages: [], tools: [tool] },
		config: baseConfig(tr, { reasoning: "minimal", ...recordedHooks(tr, { prepareNextTurn: () => null }) }),
		streamFn,
	});
	return tr.result({ calls: streamFn.calls });
});

scenario("prepareNextTurn {thinkingLevel:'xhigh', messages:[]} with model unchanged", async (impl) => {
	const tr = new Trace();
	const tool = makeTool(tr, "t");
	const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
	await runLoop(impl, {
		tr,
		prompts: [user("go")],
		context: { messages: [], tools: [tool] },
		config: { model: MODEL, convertToLlm: (m) => m, ...recordedHooks(tr, { prepareNextTurn: () => ({ thinkingLevel: "xhigh", messages: [] }) }) },
		streamFn,
	});
	return tr.result({ calls: streamFn.calls });
});
