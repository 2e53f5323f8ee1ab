// Every call of the stream function gets its own `context.messages` array, as 1.4.0 passes a fresh
// `convertToLlm` result each time: a stream function that keeps `context` and reads it in a later
// call (as pi-ai's faux provider does in deferred mode), or that edits `messages[i]` in place, sees
// exactly what 1.4.0 shows it. Message objects keep their identity (the provider's message is the
// one in `state.messages`). These run on an Agent with no hooks (the path where ours keeps its LLM
// view between requests) and with hooks set.
import { assert, scenario } from "../support/harness.mjs";
import { MODEL, strictCheck, user } from "../support/scripted.mjs";

const roles = (messages) => messages.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c.text ?? c.type).join("|")}`);

/** A stream function answering with `replies` in order: text, or `{ call }` for one tool call. */
function replying(impl, replies, onCall, { strict = true } = {}) {
	const finals = [];
	let i = 0;
	const fn = (model, context, options) => {
		const reply = replies[i++] ?? "done";
		if (strict) strictCheck(context);
		onCall?.(context, options, i - 1);
		const content = typeof reply === "string" ? [{ type: "text", text: reply }] : [{ type: "toolCall", id: reply.call, name: "t", arguments: {} }];
		const message = {
			role: "assistant",
			content,
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: typeof reply === "string" ? "stop" : "toolUse",
			timestamp: 1,
		};
		finals.push(message);
		const stream = impl.createAssistantMessageEventStream();
		queueMicrotask(() => {
			stream.push({ type: "start", partial: { ...message, content: [] } });
			stream.push({ type: "done", reason: message.stopReason, message });
		});
		return stream;
	};
	fn.finals = finals;
	return fn;
}

const tool = {
	name: "t",
	label: "t",
	description: "t",
	parameters: { type: "object", properties: {} },
	execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

const HOOKS = { beforeToolCall: async () => undefined, afterToolCall: async () => undefined };

for (const [label, hooks] of [["no hooks", {}], ["tool hooks", HOOKS]]) {
	scenario(`a stream function that keeps context and reads it in a later call sees what 1.4.0 shows (${label})`, async (impl) => {
		const kept = [];
		const seen = [];
		const streamFn = replying(impl, ["a", { call: "c1" }, "b", "c"], (context, options, index) => {
			// Like the faux provider in deferred mode: later calls read the contexts of earlier ones.
			seen.push({ index, now: roles(context.messages), earlier: kept.map((c) => roles(c.messages)), same: kept.map((c) => c.messages === context.messages) });
			kept.push(context);
		});
		const agent = new impl.Agent({ initialState: { model: MODEL, systemPrompt: "sys", tools: [tool], messages: [user("old"), { role: "note", text: "custom" }] }, streamFn, ...hooks });
		for (const q of ["one", "two", "three"]) await agent.prompt(q);
		return {
			seen,
			finally: kept.map((c) => roles(c.messages)),
			identity: streamFn.finals.map((m) => agent.state.messages.includes(m)),
		};
	}, {
		check(t) {
			assert.ok(t.seen.every((s) => s.same.every((same) => same === false)), "a fresh array per call");
			assert.deepEqual(t.identity, [true, true, true, true], "the provider's messages are the transcript's");
		},
	});

	scenario(`a stream function that edits messages[i] in place sees what 1.4.0 shows (${label})`, async (impl) => {
		const seen = [];
		const streamFn = replying(impl, ["a", { call: "c1" }, "b", "c"], (context) => {
			seen.push(roles(context.messages));
			// Redact every user message in place, and drop the last entry.
			const messages = context.messages;
			for (let i = 0; i < messages.length; i++) if (messages[i].role === "user") messages[i] = { ...messages[i], content: "redacted" };
			messages.pop();
		});
		const agent = new impl.Agent({ initialState: { model: MODEL, tools: [tool] }, streamFn, ...hooks });
		const prompts = [];
		for (const q of ["one", "two", "three"]) {
			await agent.prompt(q);
			prompts.push(agent.state.messages.find((m) => m.role === "user" && m.content?.[0]?.text === q) !== undefined);
		}
		return { seen, state: roles(agent.state.messages), prompts };
	}, {
		check(t) {
			assert.ok(t.prompts.every(Boolean), "the transcript keeps the prompts");
			assert.ok(t.seen.slice(1).every((s) => !s.includes("user:redacted")), "an edit reaches no later request");
		},
	});
}

scenario("edits of agent.state.messages between prompts reach the next request", async (impl) => {
	const seen = [];
	const streamFn = replying(impl, ["a", "b", "c", "d"], (context) => seen.push(roles(context.messages)));
	const agent = new impl.Agent({ initialState: { model: MODEL }, streamFn });
	await agent.prompt("one");
	agent.state.messages[0] = user("edited in place");
	await agent.prompt("two");
	agent.state.messages = [user("replaced")];
	await agent.prompt("three");
	agent.state.messages.push(user("pushed"));
	agent.state.messages.splice(0, 1);
	await agent.prompt("four");
	return seen;
});

scenario("a listener that replaces agent.state.messages mid-run does not change the run's requests", async (impl) => {
	const seen = [];
	// 1.4.0's third request is not valid for a strict provider (see below).
	const strict = impl.name !== "reference";
	const streamFn = replying(impl, [{ call: "c1" }, "done", "again"], (context) => seen.push(roles(context.messages)), { strict });
	const agent = new impl.Agent({ initialState: { model: MODEL, tools: [tool] }, streamFn });
	agent.subscribe((ev) => {
		if (ev.type === "tool_execution_end") agent.state.messages = [user("swapped by a listener")];
	});
	await agent.prompt("one");
	await agent.prompt("two");
	// The third request holds the swapped transcript, whose tool result answers no call: 1.4.0 sends
	// it as it is, ours leaves it out (pairing.test.mjs); the run's own requests are the point here.
	return { seen: seen.slice(0, 2), third: seen[2].filter((r) => !r.startsWith("toolResult")), state: roles(agent.state.messages) };
});

scenario("tool hooks that keep their context and edit context.messages in place see what 1.4.0 shows", async (impl) => {
	const seen = [];
	const kept = [];
	const hookSaw = [];
	const streamFn = replying(impl, [{ call: "c1" }, "a", "b", { call: "c2" }, "c", "d"], (context) => seen.push(roles(context.messages)));
	const agent = new impl.Agent({
		initialState: { model: MODEL, tools: [tool] },
		streamFn,
		beforeToolCall: async ({ context }) => {
			hookSaw.push({ now: roles(context.messages), earlier: kept.map((c) => roles(c.messages)), same: kept.map((c) => c.messages === context.messages) });
			kept.push(context);
			// Redact the first message in place: the run's later requests see it, as in 1.4.0.
			context.messages[0] = { ...context.messages[0], content: "redacted by a hook" };
		},
		afterToolCall: async ({ context }) => {
			hookSaw.push({ after: roles(context.messages) });
		},
	});
	for (const q of ["one", "two", "three", "four"]) await agent.prompt(q);
	return { seen, hookSaw, finally: kept.map((c) => roles(c.messages)), state: roles(agent.state.messages) };
});
