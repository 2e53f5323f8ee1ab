// Entry points and the default stream function.
import { assert, scenario } from "../support/harness.mjs";
import { MODEL, assistant, call, deferred, makeTool, scripted, sleep, text, thinking, user } from "../support/scripted.mjs";
import { baseConfig, queuePolls, runLoop } from "../support/loop.mjs";
import { Trace, errorText, labels, snap, types } from "../support/trace.mjs";

const CANONICAL = [
	"agent_start",
	"turn_start",
	"message_start:user",
	"message_end:user",
	"message_start:assistant",
	"message_update:assistant",
	"message_update:assistant",
	"message_update:assistant",
	"message_update:assistant",
	"message_end:assistant",
	"turn_end",
	"agent_end",
];

function checkCanonicalIdentity(t) {
	const ev = t.events;
	const us = ev.find((e) => e.type === "message_start" && e.message.role === "user");
	const ue = ev.find((e) => e.type === "message_end" && e.message.role === "user");
	const as = ev.find((e) => e.type === "message_start" && e.message.role === "assistant");
	const ae = ev.find((e) => e.type === "message_end" && e.message.role === "assistant");
	const te = ev.find((e) => e.type === "turn_end");
	const end = ev.find((e) => e.type === "agent_end");
	assert.equal(us.messageId, ue.messageId, "user message_start/message_end carry the same object");
	assert.notEqual(as.messageId, ae.messageId, "assistant message_start carries a copy");
	assert.equal(te.messageId, ae.messageId, "turn_end.message is the final assistant object");
	assert.deepEqual(end.messageIds, [ue.messageId, ae.messageId]);
	for (const u of ev.filter((e) => e.type === "message_update")) {
		assert.equal(u.messageIsPartial, false, "message_update.message is a copy of the partial");
	}
	assert.equal(t.notes.resultIsAgentEndMessages, true);
}

scenario(
	"agentLoop: canonical prompt run with streamed text",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("Hello", ["Hel", "lo"])] }], { tr });
		await runLoop(impl, { tr, kind: "stream", prompts: [user("hi")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(labels(t), CANONICAL);
			checkCanonicalIdentity(t);
			assert.deepEqual(
				t.events.filter((e) => e.type === "message_update").map((e) => e.ame.type),
				["text_start", "text_delta", "text_delta", "text_end"],
			);
		},
	},
);

scenario(
	"runAgentLoop: canonical order, resolves with agent_end.messages",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("Hello", ["Hel", "lo"])], mutable: true }], { tr });
		await runLoop(impl, { tr, kind: "run", prompts: [user("hi")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(labels(t), CANONICAL);
			checkCanonicalIdentity(t);
			assert.equal(t.notes.returnedPromise, true);
			// mutable provider partial: the final message is the partial object, the updates share its content array
			for (const u of t.events.filter((e) => e.type === "message_update")) assert.equal(u.sharesPartialContent, true);
		},
	},
);

scenario(
	"agentLoop is observational: the producer runs ahead of a consumer that has not started",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [thinking("plan"), text("answer")], timing: "micro" }], { tr });
		const stream = impl.agentLoop([user("q")], { messages: [] }, baseConfig(tr), undefined, streamFn);
		const result = await stream.result();
		tr.note("callsBeforeConsume", streamFn.calls.length);
		const seen = [];
		for await (const ev of stream) {
			seen.push(ev);
			tr.event(ev);
		}
		tr.note("resultIsAgentEndMessages", seen.at(-1)?.messages === result);
		tr.note("resultSame", (await stream.result()) === result);
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.notes.callsBeforeConsume, 1);
			assert.equal(t.notes.resultIsAgentEndMessages, true);
			assert.equal(types(t).at(-1), "agent_end");
		},
	},
);

scenario(
	"runAgentLoop does not mutate the caller's context; the stream sees history + prompt",
	async (impl) => {
		const tr = new Trace();
		const history = [user("old"), assistant("old answer")];
		const context = { messages: history, extraField: "kept" };
		const streamFn = scripted(impl, [{ content: [text("new answer")] }], {
			tr,
			record: ({ context: c }) => ({ sameAsCaller: c.messages === history }),
		});
		await runLoop(impl, { tr, kind: "run", prompts: [user("new")], context, config: baseConfig(tr), streamFn });
		tr.note("callerLength", history.length);
		tr.note("callerContextKeys", Object.keys(context));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.notes.callerLength, 2);
			assert.deepEqual(t.calls[0].messages.map((m) => m.role), ["user", "assistant", "user"]);
		},
	},
);

scenario("several prompts (user, custom role, user) each get message_start/message_end with the same object", async (impl) => {
	const tr = new Trace();
	const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
	const prompts = [user("a"), { role: "note", text: "ui only", timestamp: 7 }, user("b")];
	await runLoop(impl, { tr, kind: "run", prompts, context: { messages: [] }, config: baseConfig(tr), streamFn });
	return tr.result({ calls: streamFn.calls });
});

scenario(
	"runAgentLoopContinue shares the caller's messages array (partial and final pushed into it)",
	async (impl) => {
		const tr = new Trace();
		const history = [user("q")];
		const streamFn = scripted(impl, [{ content: [text("ab", ["a", "b"])] }], { tr });
		const callerTail = [];
		await runLoop(impl, {
			tr,
			kind: "continue",
			context: { messages: history },
			config: baseConfig(tr),
			streamFn,
			onEvent: (ev) => {
				if (ev.type === "message_update") callerTail.push(history.at(-1) === ev.assistantMessageEvent.partial);
				if (ev.type === "message_start" && ev.message.role === "assistant") callerTail.push(history.length);
				if (ev.type === "message_end") callerTail.push(history.at(-1) === ev.message);
			},
		});
		tr.note("callerTail", callerTail);
		tr.note("callerRoles", history.map((m) => m.role));
		tr.note("callerLastId", tr.id(history.at(-1)));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.notes.callerRoles, ["user", "assistant"]);
			assert.deepEqual(t.notes.callerTail, [2, true, true, true, true, true]);
			assert.deepEqual(types(t).slice(0, 3), ["agent_start", "turn_start", "message_start"]);
		},
	},
);

scenario("agentLoopContinue: continue run over a toolResult tail", async (impl) => {
	const tr = new Trace();
	const history = [
		user("q"),
		assistant("", { content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }], stopReason: "toolUse" }),
		{ role: "toolResult", toolCallId: "c1", toolName: "t", content: [{ type: "text", text: "r" }], isError: false, timestamp: 5 },
	];
	const streamFn = scripted(impl, [{ content: [text("done")] }], { tr });
	await runLoop(impl, { tr, kind: "streamContinue", context: { messages: history }, config: baseConfig(tr), streamFn });
	tr.note("callerLength", history.length);
	return tr.result({ calls: streamFn.calls });
});

for (const [label, messages, expected] of [
	["empty context", [], "Cannot continue: no messages in context"],
	["assistant tail", [user("q"), assistant("a")], "Cannot continue from message role: assistant"],
]) {
	scenario(
		`agentLoopContinue throws synchronously (${label})`,
		async (impl) => {
			const tr = new Trace();
			const streamFn = scripted(impl, [], { tr });
			let threwSync = false;
			try {
				const s = impl.agentLoopContinue({ messages }, baseConfig(tr), undefined, streamFn);
				tr.note("returned", typeof s);
			} catch (e) {
				threwSync = true;
				tr.note("error", errorText(e));
				tr.note("isError", e instanceof Error);
			}
			tr.note("threwSync", threwSync);
			tr.note("calls", streamFn.calls.length);
			return tr.result();
		},
		{
			check(t) {
				assert.equal(t.notes.threwSync, true);
				assert.equal(t.notes.error.message, expected);
			},
		},
	);

	scenario(
		`runAgentLoopContinue rejects (not a sync throw) (${label})`,
		async (impl) => {
			const tr = new Trace();
			const streamFn = scripted(impl, [], { tr });
			let threwSync = false;
			let p;
			try {
				p = impl.runAgentLoopContinue({ messages }, baseConfig(tr), (ev) => tr.event(ev), undefined, streamFn);
			} catch (e) {
				threwSync = true;
				tr.note("syncError", errorText(e));
			}
			tr.note("threwSync", threwSync);
			if (p) {
				tr.note("isPromise", p instanceof Promise);
				try {
					await p;
					tr.note("resolved", true);
				} catch (e) {
					tr.note("rejected", errorText(e));
				}
			}
			return tr.result();
		},
		{
			check(t) {
				assert.equal(t.notes.threwSync, false);
				assert.equal(t.notes.rejected.message, expected);
				assert.equal(t.events.length, 0);
			},
		},
	);
}

scenario(
	"agentLoopContinue accepts a custom-role tail (only the literal assistant role is rejected)",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		const convertToLlm = (msgs) => msgs.map((m) => (m.role === "custom" ? { role: "user", content: m.note, timestamp: m.timestamp } : m));
		const history = [user("q"), assistant("a"), { role: "custom", note: "converted", timestamp: 9 }];
		await runLoop(impl, { tr, kind: "streamContinue", context: { messages: history }, config: { model: MODEL, convertToLlm }, streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls[0].messages.at(-1).content, "converted") },
);

scenario("agentLoop([]) does no role check: an assistant tail is sent as is", async (impl) => {
	const tr = new Trace();
	const streamFn = scripted(impl, [{ content: [text("again")] }], { tr });
	await runLoop(impl, { tr, kind: "stream", prompts: [], context: { messages: [user("q"), assistant("a")] }, config: baseConfig(tr), streamFn });
	return tr.result({ calls: streamFn.calls });
});

scenario(
	"runAgentLoop without streamFn and without default: initial events, then the exact error",
	async (impl) => {
		const tr = new Trace();
		await runLoop(impl, { tr, kind: "run", prompts: [user("hi")], context: { messages: [] }, config: baseConfig(tr), streamFn: undefined });
		return tr.result();
	},
	{
		check(t) {
			assert.deepEqual(labels(t), ["agent_start", "turn_start", "message_start:user", "message_end:user"]);
			assert.equal(t.notes.rejected.message, "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().");
			assert.equal(t.hooks.length, 0, "convertToLlm never ran");
		},
	},
);

scenario(
	"runAgentLoopContinue resolves the default lazily: set inside the turn_start emit it is used",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("via default")] }], { tr, label: "defaultStreamFn" });
		await runLoop(impl, {
			tr,
			kind: "continue",
			context: { messages: [user("q")] },
			config: baseConfig(tr),
			streamFn: undefined,
			onEvent: (ev) => {
				if (ev.type === "turn_start") impl.setDefaultStreamFn(streamFn);
			},
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 1) },
);

scenario(
	"setDefaultStreamFn: runAgentLoop(streamFn=null) uses it; unset again the error returns",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("one")] }, { content: [text("two")] }], { tr, label: "defaultStreamFn" });
		tr.note("setReturns", snap(impl.setDefaultStreamFn(streamFn)));
		await runLoop(impl, { tr, kind: "run", prompts: [user("a")], context: { messages: [] }, config: baseConfig(tr), streamFn: null });
		impl.setDefaultStreamFn(undefined);
		const tr2 = new Trace();
		await runLoop(impl, { tr: tr2, kind: "run", prompts: [user("b")], context: { messages: [] }, config: baseConfig(tr2), streamFn: undefined });
		return tr.result({ calls: streamFn.calls, second: tr2.result() });
	},
	{
		check(t) {
			assert.equal(t.calls.length, 1);
			assert.match(t.second.notes.rejected.message, /^No default stream function configured/);
		},
	},
);

scenario(
	"Agent constructor resolves the default stream function eagerly",
	async (impl) => {
		const tr = new Trace();
		try {
			new impl.Agent({});
			tr.note("noDefault", "constructed");
		} catch (e) {
			tr.note("noDefault", errorText(e));
		}
		try {
			new impl.Agent();
			tr.note("noOptions", "constructed");
		} catch (e) {
			tr.note("noOptions", errorText(e));
		}
		const streamFn = scripted(impl, [{ content: [text("from default")] }], { tr, label: "defaultStreamFn" });
		impl.setDefaultStreamFn(streamFn);
		const agent = new impl.Agent({ initialState: { model: MODEL } });
		tr.note("streamFunctionIsDefault", agent.streamFunction === streamFn);
		impl.setDefaultStreamFn(undefined);
		agent.subscribe((ev) => {
			tr.event(ev);
		});
		await agent.prompt("hi");
		tr.note("roles", agent.state.messages.map((m) => m.role));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.notes.noDefault.message, "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().");
			assert.equal(t.notes.noOptions.message, t.notes.noDefault.message);
			assert.equal(t.notes.streamFunctionIsDefault, true);
			assert.equal(t.calls.length, 1);
		},
	},
);

scenario(
	"runAgentLoop awaits every emit (barrier): a slow sink delays the request",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("x")] }], { tr });
		await runLoop(impl, {
			tr,
			kind: "run",
			prompts: [user("hi")],
			context: { messages: [] },
			config: baseConfig(tr),
			streamFn,
			onEvent: async (ev) => {
				if (ev.type === "message_end" && ev.message.role === "user") {
					await sleep(15);
					tr.hook("sink released");
				}
			},
		});
		return tr.result();
	},
	{ check: (t) => assert.deepEqual(t.hooks.map((h) => h.name), ["sink released", "convertToLlm", "streamFn"]) },
);

scenario(
	"exports: names, kinds and DEFAULT_AGENT_IDENTITY",
	async (impl) => {
		const kinds = {};
		for (const k of ["Agent", "DEFAULT_AGENT_IDENTITY", "agentLoop", "agentLoopContinue", "runAgentLoop", "runAgentLoopContinue", "runToolCall", "setDefaultStreamFn"]) {
			// streamProxy is out of this suite's scope (the proxy has its own suite)
			kinds[k] = typeof impl.module[k];
		}
		const id = impl.DEFAULT_AGENT_IDENTITY;
		return {
			kinds,
			identity: snap(id),
			identityKeys: Object.keys(id),
			attributionKeys: Object.keys(id.attribution),
			getDefaultStreamFnExported: "getDefaultStreamFn" in impl.module,
			agentIsClass: typeof impl.Agent === "function" && /^class\b/.test(Function.prototype.toString.call(impl.Agent)) ? "class" : "function",
		};
	},
	{
		check(t) {
			assert.deepEqual(t.identity, { attribution: { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] } });
			assert.equal(t.getDefaultStreamFnExported, false);
		},
	},
);

for (const [label, config, streamFnSpec] of [
	["convertToLlm throws", (tr) => baseConfig(tr, { convertToLlm: () => { throw new Error("convert failed"); } }), [{ content: [text("x")] }]],
	["transformContext rejects", (tr) => baseConfig(tr, { transformContext: async () => { throw new TypeError("transform failed"); } }), [{ content: [text("x")] }]],
	["getApiKey throws a string", (tr) => baseConfig(tr, { getApiKey: () => { throw "key failed"; } }), [{ content: [text("x")] }]],
	["streamFn throws synchronously", (tr) => baseConfig(tr), [{ throwSync: new Error("sync stream failure") }]],
	["streamFn rejects", (tr) => baseConfig(tr), [{ reject: new Error("async stream failure") }]],
	["prepareRequest throws", (tr) => baseConfig(tr, { prepareRequest: () => { throw new Error("prepare failed"); } }), [{ content: [text("x")] }]],
	["finishTurn throws", (tr) => baseConfig(tr, { finishTurn: async () => { throw new Error("finish failed"); } }), [{ content: [text("x")] }]],
	["getFollowUpMessages rejects", (tr) => baseConfig(tr, { getFollowUpMessages: async () => { throw new Error("follow failed"); } }), [{ content: [text("x")] }]],
]) {
	scenario(`runAgentLoop rejects when ${label} (events up to the failure)`, async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, streamFnSpec, { tr });
		await runLoop(impl, { tr, kind: "run", prompts: [user("hi")], context: { messages: [] }, config: config(tr), streamFn });
		return tr.result();
	}, {
		check(t) {
			assert.ok(t.notes.rejected, "runAgentLoop rejected");
			assert.ok(!types(t).includes("agent_end"));
		},
	});
}

scenario("runAgentLoopContinue rejects when prepareNextTurn throws on the second turn", async (impl) => {
	const tr = new Trace();
	const tool = makeTool(tr, "t");
	const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("x")] }], { tr });
	await runLoop(impl, {
		tr,
		kind: "continue",
		context: { messages: [user("q")], tools: [tool] },
		config: baseConfig(tr, { prepareNextTurn: () => { throw new Error("next failed"); }, ...queuePolls(tr) }),
		streamFn,
	});
	return tr.result();
}, { check: (t) => assert.equal(t.notes.rejected.message, "next failed") });

scenario("stream whose result() rejects: runAgentLoop rejects with that error", async (impl) => {
	const tr = new Trace();
	const streamFn = () => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "start", partial: assistant("") };
		},
		result: () => Promise.reject(new Error("result failed")),
	});
	await runLoop(impl, { tr, kind: "run", prompts: [user("hi")], context: { messages: [] }, config: baseConfig(tr), streamFn });
	return tr.result();
}, { check: (t) => assert.equal(t.notes.rejected.message, "result failed") });

// a small deferred-based check that the reference's runAgentLoop hands back a live promise while a stream waits
scenario("runAgentLoop is pending while the stream waits for more events", async (impl) => {
	const tr = new Trace();
	const gate = deferred();
	const streamFn = scripted(impl, [{ content: [text("late")], timing: "micro", beforeEvent: () => {} }], { tr });
	const wrapped = async (m, c, o) => {
		await gate.promise;
		return streamFn(m, c, o);
	};
	let settled = false;
	const p = impl.runAgentLoop([user("hi")], { messages: [] }, baseConfig(tr), (ev) => tr.event(ev), undefined, wrapped);
	p.then(() => (settled = true));
	await sleep(5);
	tr.note("settledBeforeGate", settled);
	gate.resolve();
	await p;
	tr.note("settledAfter", settled);
	return tr.result({ calls: streamFn.calls });
}, { check: (t) => assert.equal(t.notes.settledBeforeGate, false) });
