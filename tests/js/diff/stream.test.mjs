// streamAssistantResponse: transformContext, convertToLlm, apiKey, identity, options, event handling.
import { assert, scenario } from "../support/harness.mjs";
import { MODEL, assistant, call, scripted, text, thinking, user, zeroUsage } from "../support/scripted.mjs";
import { baseConfig, recordedHooks, runLoop } from "../support/loop.mjs";
import { Trace, labels, signalState, snap } from "../support/trace.mjs";

scenario(
	"transformContext(messages, signal) runs before convertToLlm, which gets the transformed list",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		const ac = new AbortController();
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [user("old"), { role: "note", timestamp: 1 }] },
			signal: ac.signal,
			config: baseConfig(tr, { ...recordedHooks(tr, { transformContext: async (m) => [user("injected"), ...m.slice(-1)] }) }),
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.hooks.map((h) => h.name), ["transformContext", "convertToLlm", "streamFn"]);
			assert.equal(t.hooks[0].signal, "live");
			assert.equal(t.hooks[0].argc, 2);
			assert.deepEqual(t.calls[0].messages.map((m) => m.content), ["injected", "go"]);
		},
	},
);

scenario(
	"convertToLlm's array is passed to streamFn unchanged (no copy); returning the input exposes the working array",
	async (impl) => {
		const tr = new Trace();
		const returned = [];
		const seen = [];
		const streamFn = scripted(impl, [{ content: [text("ok")] }], {
			tr,
			record: ({ context }) => ({ isConvertOutput: context.messages === returned.at(-1), isConvertInput: context.messages === seen.at(-1) }),
		});
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: {
				model: MODEL,
				convertToLlm: (m) => {
					seen.push(m);
					returned.push(m);
					return m;
				},
			},
			streamFn,
		});
		const live = streamFn.calls.length ? seen[0] : [];
		tr.note("liveArrayAfter", live.map((m) => m.role));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.calls[0].isConvertOutput, true);
			assert.equal(t.calls[0].isConvertInput, true);
			assert.deepEqual(t.notes.liveArrayAfter, ["user", "assistant"], "the loop later pushed into the array the stream saw");
		},
	},
);

scenario(
	"async convertToLlm returning a new array; context passed to streamFn has only `messages`",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [] },
			config: { model: MODEL, convertToLlm: async (m) => m.map((x) => ({ ...x, converted: true })) },
			streamFn,
		});
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.deepEqual(t.calls[0].contextKeys, ["messages"]) },
);

for (const [label, getApiKey, apiKey, expected] of [
	["getApiKey value wins over config.apiKey", () => "dyn-key", "static", "dyn-key"],
	["getApiKey '' falls back to config.apiKey", async () => "", "static", "static"],
	["getApiKey undefined falls back to config.apiKey", () => undefined, "static", "static"],
	["no getApiKey: config.apiKey", undefined, "static", "static"],
	["no key at all: apiKey key present but undefined", undefined, undefined, undefined],
]) {
	scenario(
		`getApiKey: ${label}`,
		async (impl) => {
			const tr = new Trace();
			const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
			const cfg = baseConfig(tr, getApiKey ? recordedHooks(tr, { getApiKey }) : {});
			if (apiKey !== undefined) cfg.apiKey = apiKey;
			await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: cfg, streamFn });
			return tr.result({ calls: streamFn.calls });
		},
		{
			check(t) {
				assert.equal(t.calls[0].apiKey, expected);
				assert.ok(t.calls[0].optionKeys.includes("apiKey"));
				const g = t.hooks.find((h) => h.name === "getApiKey");
				if (getApiKey) assert.equal(g.provider, "test-provider");
			},
		},
	);
}

scenario(
	"identity is merged over DEFAULT_AGENT_IDENTITY into a fresh object (null attribution overrides)",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [call("c", "missing")] }, { content: [text("ok")] }], { tr });
		const identity = { attribution: null, userAgent: "short", version: undefined };
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr, { identity }), streamFn });
		tr.note("identityUntouched", snap(identity));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.calls[0].identity, { attribution: null, userAgent: "short" });
			assert.equal(t.calls[0].identityIsDefault, false);
		},
	},
);

scenario(
	"every config property is spread into the stream options, then apiKey, identity, signal",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		const ac = new AbortController();
		const config = {
			temperature: 0.2,
			model: MODEL,
			maxTokens: 77,
			convertToLlm: (m) => m,
			apiKey: "k",
			sessionId: "sess-1",
			transport: "sse",
			thinkingBudgets: { low: 10 },
			maxRetryDelayMs: 5,
			toolExecution: "sequential",
			reasoning: "low",
			headers: { "x-a": "1", "x-b": null },
			metadata: { user: "u" },
			cacheRetention: "short",
			customField: { deep: true },
			getSteeringMessages: async () => [],
			getFollowUpMessages: async () => [],
			beforeToolCall: async () => undefined,
		};
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config, signal: ac.signal, streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const c = t.calls[0];
			assert.deepEqual(c.optionKeys.slice(-2), ["identity", "signal"]);
			assert.ok(c.optionKeys.includes("getSteeringMessages"));
			assert.equal(c.signal, "live");
			assert.equal(c.reasoning, "low");
			assert.equal(c.argc, 3);
		},
	},
);

scenario(
	"thinkingLevel is stamped onto the provider's result object (reasoning 'medium')",
	async (impl) => {
		const tr = new Trace();
		let resultObj;
		const inner = scripted(impl, [{ content: [text("ok")] }], { tr });
		const streamFn = (m, c, o) => {
			const s = inner(m, c, o);
			s.result().then((r) => (resultObj = r));
			return s;
		};
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr, { reasoning: "medium" }), streamFn });
		tr.note("resultObjStamp", resultObj?.thinkingLevel);
		tr.note("resultObjId", tr.id(resultObj));
		return tr.result();
	},
	{
		check(t) {
			assert.equal(t.notes.resultObjStamp, "medium");
			const end = t.events.filter((e) => e.type === "message_end").at(-1);
			assert.equal(end.messageId, t.notes.resultObjId, "message_end carries the provider's object");
			assert.equal(end.message.thinkingLevel, "medium");
		},
	},
);

scenario(
	"an error-only stream (no start): message_start is a copy of the final, message_end the final",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ noStart: true, content: [], stopReason: "error", errorMessage: "provider 500" }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{
		check(t) {
			const s = t.events.filter((e) => e.type === "message_start").at(-1);
			const e = t.events.filter((x) => x.type === "message_end").at(-1);
			assert.notEqual(s.messageId, e.messageId);
			assert.equal(e.message.stopReason, "error");
			assert.equal(e.message.errorMessage, "provider 500");
			assert.equal(e.message.thinkingLevel, "off");
		},
	},
);

scenario(
	"content events before `start` are ignored; a done without start still gets message_start",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ noStart: true, content: [text("hidden"), thinking("also hidden")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{ check: (t) => assert.equal(t.events.filter((e) => e.type === "message_update").length, 0) },
);

scenario(
	"unknown event types are ignored; all nine content event types produce updates with the original event",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(
			impl,
			[
				{
					content: [thinking("hm", ["h", "m"]), text("hi"), call("c9", "nope", { a: 1 }, ['{"a"', ":1}"])],
					raw: [{ type: "mystery", partial: "partial" }, { type: "ping" }],
					stopReason: "stop",
				},
			],
			{ tr },
		);
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{
		check(t) {
			const kinds = t.events.filter((e) => e.type === "message_update").map((e) => e.ame.type);
			assert.deepEqual(kinds, [
				"thinking_start",
				"thinking_delta",
				"thinking_delta",
				"thinking_end",
				"text_start",
				"text_delta",
				"text_end",
				"toolcall_start",
				"toolcall_delta",
				"toolcall_delta",
				"toolcall_end",
			]);
		},
	},
);

scenario(
	"the iterator ends without a terminal event: the result passed to end() is used",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("no terminal")], terminal: "end-result", timing: "micro" }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{ check: (t) => assert.equal(t.events.at(-1).type, "agent_end") },
);

scenario("terminal event with timer-paced streaming", async (impl) => {
	const tr = new Trace();
	const streamFn = scripted(impl, [{ content: [thinking("a"), text("bc", ["b", "c"])], timing: "timer", delayMs: 1 }], { tr });
	await runLoop(impl, { tr, kind: "stream", prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
	return tr.result();
});

scenario(
	"the partial is pushed into the working context during streaming and replaced by the final message",
	async (impl) => {
		const tr = new Trace();
		const history = [user("q")];
		const streamFn = scripted(impl, [{ content: [text("abc", ["a", "b", "c"])], timing: "micro" }], { tr });
		const facts = [];
		await runLoop(impl, {
			tr,
			kind: "continue",
			context: { messages: history },
			config: baseConfig(tr),
			streamFn,
			onEvent: (ev) => {
				if (ev.type === "message_start" || ev.type === "message_update" || ev.type === "message_end") {
					facts.push({ len: history.length, lastIsPartial: history.at(-1) === ev.assistantMessageEvent?.partial, lastIsMessage: history.at(-1) === ev.message });
				}
			},
		});
		tr.note("facts", facts);
		return tr.result();
	},
	{
		check(t) {
			assert.deepEqual(t.notes.facts.at(-1), { len: 2, lastIsPartial: false, lastIsMessage: true });
			assert.ok(t.notes.facts.slice(1, -1).every((f) => f.lastIsPartial));
		},
	},
);

scenario(
	"streamFn may return a Promise of a stream, an EventStream or any async iterable with result()",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(
			impl,
			[
				{ content: [call("c1", "none")], async: true },
				{ content: [call("c2", "none")], wrap: "eventstream" },
				{ content: [text("end")], wrap: "iterable", timing: "micro" },
			],
			{ tr },
		);
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{ check: (t) => assert.equal(t.events.filter((e) => e.type === "turn_end").length, 3) },
);

scenario(
	"durationMs is stamped by the event stream when the message timestamp is not older than the stream",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("timed")], timestamp: "now", timing: "timer", delayMs: 2 }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{
		check(t) {
			const end = t.events.filter((e) => e.type === "message_end").at(-1);
			assert.equal(end.message.durationMs, true);
			assert.equal(end.message.timestamp, "<now>");
		},
	},
);

scenario(
	"provider-style mutable partial: updates are shallow copies sharing the content array; final is the partial",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [text("ab", ["a", "b"]), call("c1", "x", { q: 1 })], mutable: true, stopReason: "stop" }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{
		check(t) {
			const ups = t.events.filter((e) => e.type === "message_update");
			assert.ok(ups.every((u) => u.sharesPartialContent && !u.messageIsPartial));
			const end = t.events.find((e) => e.type === "message_end" && e.message.role === "assistant");
			assert.equal(end.messageId, ups[0].ame.partialId);
		},
	},
);

scenario("a done event carrying extra provider fields (responseId, usage, diagnostics) passes them through", async (impl) => {
	const tr = new Trace();
	const usage = { ...zeroUsage(), input: 12, output: 3, totalTokens: 15 };
	const streamFn = scripted(impl, [{ content: [text("ok")], usage, extra: { responseId: "r-1", diagnostics: [{ type: "x", timestamp: 5 }] } }], { tr });
	await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
	return tr.result();
});

scenario("an assistant message from history is not touched; only the new final gets the stamp", async (impl) => {
	const tr = new Trace();
	const old = assistant("old");
	const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
	await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [user("q"), old] }, config: baseConfig(tr, { reasoning: "high" }), streamFn });
	tr.note("oldKeys", Object.keys(old));
	tr.note("signalNone", signalState(undefined));
	return tr.result();
}, { check: (t) => assert.equal(t.notes.oldKeys.includes("thinkingLevel"), false) });

scenario(
	"labels of a thinking + text + tool call response in a sync stream",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [{ content: [thinking("t"), text("x"), call("c1", "none")] }, { content: [text("y")] }], { tr });
		await runLoop(impl, { tr, kind: "stream", prompts: [user("go")], context: { messages: [] }, config: baseConfig(tr), streamFn });
		return tr.result();
	},
	{ check: (t) => assert.equal(labels(t).filter((l) => l.startsWith("tool_execution_end")).length, 1) },
);

scenario(
	"prepareRequest swaps model and context: getApiKey gets the new provider; the partial goes to the new context",
	async (impl) => {
		const tr = new Trace();
		const replacement = { messages: [user("replacement")] };
		const streamFn = scripted(impl, [{ content: [text("ok", ["o", "k"])] }], { tr });
		const { MODEL_B } = await import("../support/scripted.mjs");
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [] },
			config: baseConfig(tr, { ...recordedHooks(tr, { prepareRequest: () => ({ model: MODEL_B, context: replacement }), getApiKey: (p) => `k-${p}` }) }),
			streamFn,
		});
		tr.note("replacementRoles", replacement.messages.map((m) => m.role));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.hooks.find((h) => h.name === "getApiKey").provider, "provider-b");
			assert.equal(t.calls[0].apiKey, "k-provider-b");
			assert.deepEqual(t.calls[0].messages.map((m) => m.content), ["replacement"]);
			assert.deepEqual(t.notes.replacementRoles, ["user", "assistant"]);
			assert.equal(t.events.find((e) => e.type === "message_end" && e.message.role === "assistant").message.model, "model-b");
		},
	},
);
