// Agent: construction, state, prompt/continue, queues, lifecycle, listeners, failures.
import { Type } from "typebox";
import { assert, deviation, scenario } from "../support/harness.mjs";
import { MODEL, MODEL_B, assistant, call, deferred, makeTool, scripted, sleep, system, text, ts, user } from "../support/scripted.mjs";
import { finalState, makeAgent, recordAgent, settleRun, stateFacts } from "../support/agent.mjs";
import { Trace, errorText, signalState, snap, types } from "../support/trace.mjs";

const decl = (name) => ({ name, description: `${name} tool`, parameters: { type: "object", properties: {} } });

// ------------------------------------------------------------------------------------------ construction & state

scenario(
	"constructor defaults, state key order, accessors and DEFAULT_MODEL",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [], { tr });
		const agent = new impl.Agent({ streamFn });
		const other = new impl.Agent({ streamFn });
		const st = agent.state;
		const desc = (k) => {
			const d = Object.getOwnPropertyDescriptor(st, k);
			return d ? { get: typeof d.get, set: typeof d.set, enumerable: d.enumerable, writable: d.writable } : "missing";
		};
		let assignSystemPrompt;
		try {
			st.systemPrompt = "x";
			assignSystemPrompt = "no error";
		} catch (e) {
			assignSystemPrompt = errorText(e);
		}
		const mixed = [user("u"), { role: "note", timestamp: 1 }, assistant("a"), system("s"), { role: "toolResult", toolCallId: "x", toolName: "y", content: [], isError: false, timestamp: 2 }];
		const converted = await agent.convertToLlm(mixed);
		return {
			state: finalState(agent, tr),
			model: snap(st.model),
			modelShared: st.model === other.state.model,
			stateIsStable: agent.state === st,
			descriptors: Object.fromEntries(["systemPrompt", "model", "thinkingLevel", "tools", "messages", "isStreaming", "streamingMessage", "pendingToolCalls", "errorMessage"].map((k) => [k, desc(k)])),
			pendingIsSet: st.pendingToolCalls instanceof Set,
			assignSystemPrompt,
			fields: {
				transport: agent.transport,
				toolExecution: agent.toolExecution,
				steeringMode: agent.steeringMode,
				followUpMode: agent.followUpMode,
				streamFunctionIsGiven: agent.streamFunction === streamFn,
				convertToLlm: typeof agent.convertToLlm,
				others: ["transformContext", "getApiKey", "onPayload", "onResponse", "onProviderStreamEvent", "beforeToolCall", "afterToolCall", "finishTurn", "prepareRequest", "prepareNextTurn", "prepareNextTurnWithContext", "sessionId", "thinkingBudgets", "maxRetryDelayMs", "identity"].map((k) => [k, agent[k]]),
				signal: signalState(agent.signal),
			},
			converted: converted.map((m) => m.role),
			convertedIsNewArray: converted !== mixed,
			idleWait: (await agent.waitForIdle()) === undefined,
			abortIdle: snap(agent.abort()),
		};
	},
	{
		check(t) {
			assert.deepEqual(t.state.keys, ["systemPrompt", "model", "thinkingLevel", "tools", "messages", "isStreaming", "streamingMessage", "pendingToolCalls", "errorMessage"]);
			assert.deepEqual(t.model, { id: "unknown", name: "unknown", api: "unknown", provider: "unknown", baseUrl: "", reasoning: false, input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0 });
			assert.equal(t.modelShared, true);
			assert.equal(t.state.thinkingLevel, "off");
			assert.equal(t.state.systemPrompt, "");
			assert.equal(t.assignSystemPrompt.name, "TypeError");
			assert.deepEqual(t.descriptors.tools, { get: "function", set: "function", enumerable: true, writable: undefined });
			assert.deepEqual(t.descriptors.systemPrompt, { get: "function", set: "undefined", enumerable: true, writable: undefined });
			assert.equal(t.fields.transport, "auto");
			assert.equal(t.fields.toolExecution, "parallel");
			assert.equal(t.fields.steeringMode, "one-at-a-time");
			assert.equal(t.fields.followUpMode, "one-at-a-time");
			assert.deepEqual(t.converted, ["user", "assistant", "system", "toolResult"]);
			assert.equal(t.convertedIsNewArray, true);
		},
	},
);

scenario(
	"initial system message: prompt + tools, tools only, prompt only, nothing, existing leading system message",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [], { tr });
		const a = makeTool(tr, "a", { parameters: Type.Object({ x: Type.String() }) });
		const tools = [a];
		const msgs = [user("hello")];
		const mk = (initialState) => new impl.Agent({ streamFn, initialState });
		const cases = {
			promptAndTools: mk({ systemPrompt: "You are X", tools, messages: msgs }),
			toolsOnly: mk({ tools }),
			promptOnly: mk({ systemPrompt: "Only prompt" }),
			emptyPrompt: mk({ systemPrompt: "" }),
			leadingSystem: mk({ systemPrompt: "ignored", tools, messages: [system("existing"), user("x")] }),
			undefinedState: mk(undefined),
		};
		const out = {};
		for (const [k, ag] of Object.entries(cases)) out[k] = { messages: snap(ag.state.messages), systemPrompt: ag.state.systemPrompt, keys0: ag.state.messages[0] ? Object.keys(ag.state.messages[0]) : [] };
		out.copies = { tools: cases.promptAndTools.state.tools !== tools, messages: cases.promptAndTools.state.messages !== msgs, callerMessages: msgs.length };
		return out;
	},
	{
		check(t) {
			assert.deepEqual(t.promptAndTools.keys0, ["role", "content", "toolsAdded", "timestamp"]);
			assert.equal(t.promptAndTools.messages[0].timestamp, 0);
			assert.equal(t.toolsOnly.messages[0].content, "");
			assert.deepEqual(t.promptOnly.keys0, ["role", "content", "timestamp"]);
			assert.deepEqual(t.emptyPrompt.messages, []);
			assert.equal(t.leadingSystem.messages.length, 2);
			assert.equal(t.leadingSystem.systemPrompt, "existing");
			assert.deepEqual(t.copies, { tools: true, messages: true, callerMessages: 1 });
		},
	},
);

scenario(
	"with a leading system message the tools are declared at the first request",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("ok")] }], { initialState: { model: MODEL, tools: [a], messages: [system("existing")] } });
		recordAgent(agent, tr);
		await agent.prompt("go");
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.deepEqual(t.notes.final.messages.map((m) => m.role), ["system", "system", "user", "assistant"]) },
);

scenario(
	"state.tools / state.messages setters store copies; other keys are plain data",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, []);
		const tools = [makeTool(tr, "a")];
		const messages = [user("x")];
		agent.state.tools = tools;
		agent.state.messages = messages;
		tools.push(makeTool(tr, "b"));
		messages.push(user("y"));
		agent.state.thinkingLevel = "high";
		agent.state.model = MODEL_B;
		agent.state.errorMessage = "manual";
		return {
			tools: agent.state.tools.map((x) => x.name),
			messages: agent.state.messages.length,
			sameArrays: [agent.state.tools === tools, agent.state.messages === messages],
			getterStable: agent.state.messages === agent.state.messages,
			thinkingLevel: agent.state.thinkingLevel,
			model: agent.state.model.id,
			errorMessage: agent.state.errorMessage,
		};
	},
	{ check: (t) => assert.deepEqual([t.tools, t.messages, t.sameArrays], [["a"], 1, [false, false]]) },
);

// ------------------------------------------------------------------------------------------ prompt & events

scenario(
	"prompt(string): events with the reducer's state at each listener call",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("Hello", ["He", "llo"])], timing: "micro" }]);
		recordAgent(agent, tr);
		const p = agent.prompt("hi");
		tr.note("isStreamingAfterCall", agent.state.isStreaming);
		tr.note("signalDuringRun", signalState(agent.signal));
		tr.note("waitSame", agent.waitForIdle() === agent.waitForIdle());
		tr.note("promptReturnsPromise", p instanceof Promise);
		tr.note("settled", await settleRun(p));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(types(t), ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_update", "message_update", "message_update", "message_update", "message_end", "turn_end", "agent_end"]);
			assert.ok(t.events.every((e) => e.st.isStreaming && e.st.signalIsAgentSignal));
			assert.ok(t.events.filter((e) => e.type === "message_start" || e.type === "message_update").every((e) => e.st.streaming === "event.message"));
			assert.ok(t.events.filter((e) => e.type === "message_end").every((e) => e.st.streaming === "none" && e.st.lastIsEventMessage));
			assert.equal(t.notes.isStreamingAfterCall, true);
			assert.equal(t.notes.final.isStreaming, false);
			assert.equal(t.notes.final.signal, "none");
			const u = t.events[2].message;
			assert.deepEqual(Object.keys(u), ["role", "content", "timestamp"]);
			assert.deepEqual(u.content, [{ type: "text", text: "hi" }]);
			assert.equal(u.timestamp, "<now>");
		},
	},
);

scenario(
	"prompt variants: string + images, string + [], a message object, an array of messages",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("1")] }, { content: [text("2")] }, { content: [text("3")] }, { content: [text("4")] }]);
		recordAgent(agent, tr);
		const img = { type: "image", data: "aGk=", mimeType: "image/png" };
		await agent.prompt("look", [img]);
		await agent.prompt("no images", []);
		const obj = { role: "user", content: [{ type: "text", text: "object" }], timestamp: ts() };
		await agent.prompt(obj);
		const arr = [user("first of two"), { role: "note", text: "custom", timestamp: ts() }];
		await agent.prompt(arr);
		tr.note("objInState", agent.state.messages.includes(obj));
		tr.note("arrInState", arr.every((m) => agent.state.messages.includes(m)));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const users = t.events.filter((e) => e.type === "message_end" && (e.message.role === "user" || e.message.role === "note")).map((e) => e.message.content);
			assert.deepEqual(users[0], [{ type: "text", text: "look" }, { type: "image", data: "aGk=", mimeType: "image/png" }]);
			assert.deepEqual(users[1], [{ type: "text", text: "no images" }]);
			assert.equal(t.notes.objInState, true);
			assert.equal(t.notes.arrInState, true);
			assert.deepEqual(t.calls[3].messages.map((m) => m.role).slice(-2), ["assistant", "user"], "the default convertToLlm drops the custom role");
		},
	},
);

scenario(
	"while running: prompt(), continue() and reset() fail with the exact messages",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("ok")] }]);
		const attempts = {};
		recordAgent(agent, tr, async (ev) => {
			if (ev.type !== "turn_start") return;
			for (const [k, fn] of [
				["prompt", () => agent.prompt("again")],
				["promptArray", () => agent.prompt([])],
				["continue", () => agent.continue()],
			]) {
				let sync = false;
				let p;
				try {
					p = fn();
				} catch (e) {
					sync = true;
					attempts[k] = { sync, error: errorText(e) };
				}
				if (!sync) attempts[k] = { sync, ...(await settleRun(p)) };
			}
			try {
				agent.reset();
				attempts.reset = "no error";
			} catch (e) {
				attempts.reset = { sync: true, error: errorText(e) };
			}
		});
		tr.note("run", await settleRun(agent.prompt("hi")));
		tr.note("attempts", attempts);
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{
		check(t) {
			const a = t.notes.attempts;
			assert.equal(a.prompt.rejected.message, "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.");
			assert.equal(a.continue.rejected.message, "Agent is already processing. Wait for completion before continuing.");
			assert.equal(a.reset.error.message, "Agent is already processing. Wait for completion before resetting.");
			assert.equal(a.prompt.sync, false);
		},
	},
);

// ------------------------------------------------------------------------------------------ continue()

scenario(
	"continue() refusals: empty transcript, only system messages, assistant tail with empty queues",
	async (impl) => {
		const tr = new Trace();
		const streamFn = scripted(impl, [], { tr });
		const out = {};
		const empty = new impl.Agent({ streamFn });
		out.empty = await settleRun(empty.continue());
		const sys = new impl.Agent({ streamFn, initialState: { systemPrompt: "s", messages: [] } });
		out.onlySystem = await settleRun(sys.continue());
		const asst = new impl.Agent({ streamFn, initialState: { messages: [user("q"), assistant("a")] } });
		out.assistantTail = await settleRun(asst.continue());
		out.calls = streamFn.calls.length;
		return out;
	},
	{
		check(t) {
			assert.equal(t.empty.rejected.message, "No messages to continue from");
			assert.equal(t.onlySystem.rejected.message, "No messages to continue from");
			assert.equal(t.assistantTail.rejected.message, "Cannot continue from message role: assistant");
		},
	},
);

scenario(
	"continue() from an assistant tail drains one steering message and skips the initial poll",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("r1")] }, { content: [text("r2")] }, { content: [text("r3")] }], {
			initialState: { model: MODEL, messages: [user("q"), assistant("a")] },
		});
		recordAgent(agent, tr);
		agent.steer(user("steer-1"));
		agent.steer(user("steer-2"));
		agent.followUp(user("follow-1"));
		tr.note("peekBefore", snap(agent.peekQueuedMessages()));
		tr.note("run", await settleRun(agent.continue()));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const texts = t.calls.map((c) => c.messages.at(-1).content);
			assert.deepEqual(texts, ["steer-1", "steer-2", "follow-1"]);
			assert.equal(t.events.filter((e) => e.type === "agent_start").length, 1);
		},
	},
);

scenario(
	"continue() from an assistant tail with only follow-ups runs them as a prompt (initial steering poll active)",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("r1")] }, { content: [text("r2")] }], { initialState: { model: MODEL, messages: [user("q"), assistant("a")] } });
		agent.followUp(user("follow-1"));
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "message_end" && ev.message.content === "follow-1") agent.steer(user("steer-during"));
		});
		tr.note("run", await settleRun(agent.continue()));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.deepEqual(t.calls[0].messages.map((m) => m.content).slice(-2), ["follow-1", "steer-during"]) },
);

scenario(
	"continue() from a user/toolResult tail runs runAgentLoopContinue (no prompt events)",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("answer")] }], { initialState: { model: MODEL, messages: [user("q")] } });
		recordAgent(agent, tr);
		agent.steer(user("queued steer"));
		tr.note("run", await settleRun(agent.continue()));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(types(t).slice(0, 3), ["agent_start", "turn_start", "message_start"]);
			assert.equal(t.events[2].message.content, "queued steer", "the initial steering poll is not skipped");
		},
	},
);

// ------------------------------------------------------------------------------------------ queues

scenario(
	"queue API: modes, peek, hasQueuedMessages, clear*, drain in 'all' mode",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("1")] }, { content: [text("2")] }, { content: [text("3")] }], { steeringMode: "all", followUpMode: "one-at-a-time" });
		const facts = {};
		facts.initial = [agent.hasQueuedMessages(), snap(agent.peekQueuedMessages()), agent.steeringMode, agent.followUpMode];
		agent.followUp(user("f1"));
		agent.followUp(user("f2"));
		facts.followOnly = snap(agent.peekQueuedMessages());
		agent.steer(user("s1"));
		agent.steer(user("s2"));
		facts.steerAll = snap(agent.peekQueuedMessages());
		agent.clearSteeringQueue();
		facts.afterClearSteer = [agent.hasQueuedMessages(), snap(agent.peekQueuedMessages())];
		agent.clearFollowUpQueue();
		facts.afterClearFollow = agent.hasQueuedMessages();
		agent.steer(user("s3"));
		agent.followUp(user("f3"));
		agent.clearAllQueues();
		facts.afterClearAll = agent.hasQueuedMessages();
		agent.followUpMode = "all";
		facts.modeSet = agent.followUpMode;
		agent.steer(user("a"));
		agent.steer(user("b"));
		agent.steer(user("c"));
		agent.followUp(user("x"));
		agent.followUp(user("y"));
		recordAgent(agent, tr);
		tr.note("run", await settleRun(agent.prompt("go")));
		tr.note("facts", facts);
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.notes.facts.initial, [false, [], "all", "one-at-a-time"]);
			assert.equal(t.notes.facts.followOnly.length, 1);
			assert.equal(t.notes.facts.steerAll.length, 2);
			assert.deepEqual(t.calls[0].messages.map((m) => m.content?.[0]?.text ?? m.content), ["go", "a", "b", "c"]);
			assert.deepEqual(t.calls[1].messages.slice(-2).map((m) => m.content), ["x", "y"]);
			assert.equal(t.calls.length, 2);
		},
	},
);

scenario(
	"one-at-a-time: a falsy first entry blocks the queue (peek [] while hasQueuedMessages is true)",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, []);
		agent.steer(undefined);
		agent.steer(user("behind"));
		const r = { has: agent.hasQueuedMessages(), peek: snap(agent.peekQueuedMessages()) };
		agent.steeringMode = "all";
		r.peekAll = snap(agent.peekQueuedMessages());
		return r;
	},
	{ check: (t) => assert.deepEqual([t.has, t.peek], [true, []]) },
);

scenario(
	"steer() inside a turn_end listener is drained by the poll right after it",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("one")] }, { content: [text("two")] }]);
		let once = true;
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "turn_end" && once) {
				once = false;
				agent.steer(user("from listener"));
			}
		});
		await agent.prompt("go");
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.calls.length, 2) },
);

scenario(
	"followUp() inside turn_end runs another turn; inside agent_end it stays queued",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("one")] }, { content: [text("two")] }, { content: [text("three")] }]);
		let turnEnds = 0;
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "turn_end" && ++turnEnds === 1) agent.followUp(user("follow from turn_end"));
			if (ev.type === "agent_end") agent.followUp(user("follow from agent_end"));
		});
		await agent.prompt("go");
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.calls.length, 2);
			assert.equal(t.notes.final.hasQueued, true);
			assert.equal(t.notes.final.peek[0].content, "follow from agent_end");
		},
	},
);

scenario(
	"steeringMode changed mid-run applies to the next drain",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [call("c1", "t")] }, { content: [text("two")] }, { content: [text("three")] }], { initialState: { model: MODEL, tools: [tool] } });
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "tool_execution_end") {
				agent.steer(user("s1"));
				agent.steer(user("s2"));
				agent.steeringMode = "all";
			}
		});
		await agent.prompt("go");
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.deepEqual(t.calls[1].messages.slice(-2).map((m) => m.content), ["s1", "s2"]) },
);

// ------------------------------------------------------------------------------------------ abort / idle / reset

scenario(
	"abort() while streaming: aborted message, errorMessage set, idle afterwards",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("partial")], hang: true, timing: "micro" }]);
		let aborted = false;
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "message_update" && !aborted) {
				aborted = true;
				tr.note("abortReturns", snap(agent.abort()));
				tr.note("signalAfterAbort", signalState(agent.signal));
			}
		});
		const p = agent.prompt("go");
		await agent.waitForIdle();
		tr.note("idleBeforePromptSettles", agent.state.isStreaming);
		tr.note("run", await settleRun(p));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const end = t.events.filter((e) => e.type === "message_end").at(-1);
			assert.equal(end.message.stopReason, "aborted");
			assert.equal(t.notes.final.errorMessage, "Request was aborted");
			assert.equal(t.notes.signalAfterAbort, "aborted");
			assert.equal(t.notes.final.signal, "none");
			assert.equal(t.events.find((e) => e.type === "turn_end").st.errorMessage, "Request was aborted");
		},
	},
);

scenario(
	// What follows the batch's turn_end (1.4.0 polls the steer and sends one more request with the
	// aborted signal; ours ends the run with the steer still queued) is in upstream.test.mjs.
	"agent.abort() inside a tool: result kept (compared up to the batch's turn_end)",
	async (impl) => {
		const tr = new Trace();
		tr.stopAfter("turn_end");
		let agent;
		const tool = makeTool(tr, "t", {
			execute: async (id, params, signal) => {
				agent.steer(user("steer while aborting"));
				agent.abort();
				return { content: [{ type: "text", text: `aborted=${signal.aborted}` }], details: {} };
			},
		});
		let streamFn;
		({ agent, streamFn } = makeAgent(impl, tr, [{ content: [call("c1", "t")] }, { content: [text("never")] }], { initialState: { model: MODEL, tools: [tool] } }));
		recordAgent(agent, tr);
		tr.note("run", await settleRun(agent.prompt("go")));
		return tr.result({ calls: streamFn.calls.slice(0, 1) });
	},
	{
		check(t) {
			const result = t.events.find((e) => e.type === "message_end" && e.message.role === "toolResult");
			assert.equal(result.message.content[0].text, "aborted=true");
			assert.equal(t.events.at(-1).type, "turn_end");
		},
	},
);

scenario(
	"reset(): replayed system baseline, cleared queues/errorMessage, model/thinkingLevel/tools kept",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("bad")], stopReason: "error", errorMessage: "upstream down" }], {
			initialState: {
				model: MODEL,
				thinkingLevel: "low",
				systemPrompt: "base",
				tools: [a],
				messages: [],
			},
		});
		agent.state.messages.push({ role: "system", content: [{ type: "text", text: "t1" }], sections: { s1: "S1" }, toolsAdded: [decl("b")], toolsRemoved: [{ name: "a" }], timestamp: 9 });
		await agent.prompt("go");
		agent.steer(user("s"));
		agent.followUp(user("f"));
		const before = finalState(agent, tr);
		const r = agent.reset();
		return { before, resetReturns: snap(r), after: finalState(agent, tr), calls: streamFn.calls.length };
	},
	{
		check(t) {
			assert.equal(t.before.errorMessage, "upstream down");
			assert.equal(t.after.errorMessage, undefined);
			assert.equal(t.after.hasQueued, false);
			assert.equal(t.after.messages.length, 1);
			assert.deepEqual(Object.keys(t.after.messages[0]), ["role", "content", "sections", "toolsAdded", "timestamp"]);
			assert.equal(t.after.messages[0].content, "base\n\nt1");
			assert.equal(t.after.messages[0].timestamp, 0);
			// the run re-declared `a` (state.tools) after the manual system message swapped it for `b`
			assert.deepEqual(t.after.messages[0].toolsAdded.map((x) => x.name), ["a"]);
			assert.equal(t.after.systemPrompt, "base\n\nt1\n\nS1");
			assert.deepEqual([t.after.model, t.after.thinkingLevel, t.after.tools], ["model-a", "low", ["a"]]);
		},
	},
);

scenario(
	"reset() on an agent without system messages empties the transcript",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }], { initialState: { model: MODEL, messages: [user("q"), assistant("a")] } });
		agent.reset();
		return finalState(agent, tr);
	},
	{ check: (t) => assert.deepEqual(t.messages, []) },
);

// ------------------------------------------------------------------------------------------ listeners

scenario(
	"subscribe/unsubscribe: registration order, added-during-dispatch called, removed skipped, boolean return",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }]);
		const seq = [];
		let offC;
		const offA = agent.subscribe((ev) => {
			seq.push(`A:${ev.type}`);
			if (ev.type === "agent_start") offC = agent.subscribe((e) => void seq.push(`C:${e.type}`));
			if (ev.type === "turn_start") tr.note("offB", [offB(), offB()]);
		});
		const offB = agent.subscribe((ev) => void seq.push(`B:${ev.type}`));
		await agent.prompt("go");
		tr.note("seq", seq);
		tr.note("offA", offA());
		tr.note("offC", offC());
		tr.note("offType", typeof offA);
		return tr.result();
	},
	{
		check(t) {
			assert.deepEqual(t.notes.seq.slice(0, 5), ["A:agent_start", "B:agent_start", "C:agent_start", "A:turn_start", "C:turn_start"]);
			assert.deepEqual(t.notes.offB, [true, false]);
			assert.equal(t.notes.offA, true);
		},
	},
);

scenario(
	"isStreaming stays true until agent_end listeners settle; prompt() resolves after them",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }]);
		recordAgent(agent, tr, async (ev) => {
			if (ev.type === "agent_end") {
				await sleep(10);
				tr.hook("agent_end listener done", { isStreaming: agent.state.isStreaming, signal: signalState(agent.signal) });
			}
		});
		await agent.prompt("go");
		tr.hook("prompt resolved", { isStreaming: agent.state.isStreaming, signal: signalState(agent.signal) });
		return tr.result();
	},
	{
		check(t) {
			assert.deepEqual(t.hooks.slice(-2).map((h) => [h.name, h.isStreaming]), [["agent_end listener done", true], ["prompt resolved", false]]);
		},
	},
);

scenario(
	"pendingToolCalls is a new Set on every tool event; emptied by finishRun",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		const { agent } = makeAgent(impl, tr, [{ content: [call("c1", "t"), call("c2", "t")] }, { content: [text("done")] }], { initialState: { model: MODEL, tools: [tool] } });
		recordAgent(agent, tr);
		await agent.prompt("go");
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{
		check(t) {
			const ids = t.events.map((e) => e.st.pendingSetId);
			const toolEvents = t.events.map((e, i) => [e.type, i]).filter(([ty]) => ty.startsWith("tool_execution"));
			for (const [, i] of toolEvents) assert.notEqual(ids[i], ids[i - 1], "a new Set per tool event");
		},
	},
);

scenario(
	"errorMessage is set by an errored turn and cleared at the next run start",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [], stopReason: "error", errorMessage: "rate limited" }, { content: [text("fine")] }]);
		recordAgent(agent, tr);
		await agent.prompt("one");
		tr.note("afterFirst", agent.state.errorMessage);
		await agent.prompt("two");
		tr.note("afterSecond", agent.state.errorMessage);
		return tr.result();
	},
	{
		check(t) {
			assert.equal(t.notes.afterFirst, "rate limited");
			assert.equal(t.notes.afterSecond, undefined);
			const starts = t.events.filter((e) => e.type === "agent_start");
			assert.equal(starts[1].st.errorMessage, undefined);
		},
	},
);

scenario(
	"replacing state.messages mid-run: the reducer pushes into the current array",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }]);
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "message_end" && ev.message.role === "user") agent.state.messages = [];
		});
		await agent.prompt("go");
		return finalState(agent, tr);
	},
	{ check: (t) => assert.deepEqual(t.messages.map((m) => m.role), ["assistant"]) },
);

// ------------------------------------------------------------------------------------------ failures

scenario(
	"a listener throwing once: handleRunFailure events, prompt() resolves",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }]);
		let thrown = false;
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "turn_start" && !thrown) {
				thrown = true;
				throw new Error("listener exploded");
			}
		});
		tr.note("run", await settleRun(agent.prompt("go")));
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{
		check(t) {
			assert.deepEqual(types(t), ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end"]);
			const f = t.events[3].message;
			assert.deepEqual(Object.keys(f), ["role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"]);
			assert.deepEqual(f.content, [{ type: "text", text: "" }]);
			assert.equal(f.stopReason, "error");
			assert.equal(f.errorMessage, "listener exploded");
			assert.deepEqual(t.events[5].messageIds, [t.events[3].messageId]);
			assert.equal(t.notes.run.resolved, true);
			assert.equal(t.notes.final.errorMessage, "listener exploded");
		},
	},
);

// A deviation (docs/deviations.md: exactly one agent_end): 1.4.0 stops delivering at the failure's own
// message_start and never emits agent_end; ours delivers every failure event, then rejects.
deviation("a listener that always throws makes prompt() reject (after finishRun), after one agent_end", async (impl) => {
	const tr = new Trace();
	const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }]);
	const seen = [];
	recordAgent(agent, tr, (ev) => {
		seen.push(ev.type);
		if (ev.type !== "agent_start") throw new TypeError(`no ${ev.type}`);
	});
	const r = await settleRun(agent.prompt("go"));
	assert.equal(r.rejected.message, "no message_start");
	assert.equal(agent.state.isStreaming, false);
	assert.deepEqual(seen.slice(-4), ["message_start", "message_end", "turn_end", "agent_end"]);
	assert.equal(seen.filter((t) => t === "agent_end").length, 1);
	return tr.result();
});

scenario(
	"handleRunFailure uses state.model at failure time and one shared EMPTY_USAGE",
	async (impl) => {
		const tr = new Trace();
		let n = 0;
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }], {
			convertToLlm: () => {
				throw new Error(`convert failed ${++n}`);
			},
		});
		const usages = [];
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "message_end" && ev.message.role === "user") agent.state.model = MODEL_B;
			if (ev.type === "message_end" && ev.message.role === "assistant") usages.push(ev.message.usage);
		});
		await agent.prompt("one");
		await agent.prompt("two");
		tr.note("usageShared", usages.length === 2 && usages[0] === usages[1]);
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{
		check(t) {
			const f = t.events.filter((e) => e.type === "message_end" && e.message.role === "assistant")[0].message;
			assert.equal(f.model, "model-b");
			assert.equal(f.provider, "provider-b");
			assert.equal(t.notes.usageShared, true);
			assert.deepEqual(types(t).slice(0, 8), ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
		},
	},
);

scenario(
	"handleRunFailure after abort: stopReason 'aborted' (transformContext aborts then throws a non-Error)",
	async (impl) => {
		const tr = new Trace();
		let agent;
		({ agent } = makeAgent(impl, tr, [{ content: [text("x")] }], {
			transformContext: async (messages, signal) => {
				tr.hook("transformContext", { signalIsAgentSignal: signal === agent.signal });
				agent.abort();
				throw "string failure";
			},
		}));
		recordAgent(agent, tr);
		tr.note("run", await settleRun(agent.prompt("go")));
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{
		check(t) {
			const f = t.events.filter((e) => e.type === "message_end").at(-1).message;
			assert.equal(f.stopReason, "aborted");
			assert.equal(f.errorMessage, "string failure");
		},
	},
);

scenario(
	"failure before agent_start (tool declaration cannot be serialised): no agent_start/turn_start",
	async (impl) => {
		const tr = new Trace();
		const bad = makeTool(tr, "bad");
		bad.parameters = undefined;
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }], { initialState: { model: MODEL, messages: [system("s")] } });
		agent.state.tools = [bad];
		recordAgent(agent, tr);
		tr.note("run", await settleRun(agent.prompt("go")));
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{ check: (t) => assert.deepEqual(types(t), ["message_start", "message_end", "turn_end", "agent_end"]) },
);

// ------------------------------------------------------------------------------------------ config forwarding

scenario(
	"Agent config reaches streamFn: option keys/order, sessionId, transport, budgets, identity, reasoning",
	async (impl) => {
		const tr = new Trace();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("x")] }, { content: [text("y")] }], {
			initialState: { model: MODEL, thinkingLevel: "high" },
			sessionId: "s-1",
			transport: "websocket",
			thinkingBudgets: { low: 1, high: 9 },
			maxRetryDelayMs: 250,
			toolExecution: "sequential",
			identity: { userAgent: "ua/1" },
			onPayload: () => undefined,
			getApiKey: (provider) => `key-for-${provider}`,
		});
		await agent.prompt("one");
		agent.sessionId = "s-2";
		agent.state.thinkingLevel = "off";
		agent.identity = { attribution: null };
		await agent.prompt("two");
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const [a, b] = t.calls;
			assert.deepEqual(a.optionKeys, [
				"model",
				"reasoning",
				"sessionId",
				"onPayload",
				"onResponse",
				"onProviderStreamEvent",
				"transport",
				"thinkingBudgets",
				"maxRetryDelayMs",
				"identity",
				"toolExecution",
				"beforeToolCall",
				"afterToolCall",
				"finishTurn",
				"prepareRequest",
				"prepareNextTurn",
				"convertToLlm",
				"transformContext",
				"getApiKey",
				"getSteeringMessages",
				"getFollowUpMessages",
				"apiKey",
				"signal",
			]);
			assert.deepEqual([a.sessionId, a.transport, a.reasoning, a.apiKey, a.maxRetryDelayMs, a.toolExecution], ["s-1", "websocket", "high", "key-for-test-provider", 250, "sequential"]);
			assert.deepEqual(a.identity, { attribution: { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] }, userAgent: "ua/1" });
			assert.deepEqual([b.sessionId, b.reasoning, b.identity], ["s-2", undefined, { attribution: null }]);
			assert.equal(a.signal, "live");
		},
	},
);

scenario(
	"prepareNextTurn wrapper: legacy prepareNextTurn(signal); prepareNextTurnWithContext wins and is read live",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		let agent;
		let streamFn;
		({ agent, streamFn } = makeAgent(impl, tr, [{ content: [call("c1", "t")] }, { content: [call("c2", "t")] }, { content: [text("done")] }], {
			initialState: { model: MODEL, tools: [tool] },
			prepareNextTurn: function (...args) {
				tr.hook("legacy prepareNextTurn", { argc: args.length, signalIsAgentSignal: args[0] === agent.signal });
				return { thinkingLevel: "low" };
			},
		}));
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "turn_end" && !agent.prepareNextTurnWithContext && t2()) {
				agent.prepareNextTurnWithContext = (ctx, signal) => {
					tr.hook("prepareNextTurnWithContext", { keys: Object.keys(ctx), signalIsAgentSignal: signal === agent.signal });
					return { model: MODEL_B };
				};
			}
		});
		let turnEnds = 0;
		const t2 = () => ++turnEnds === 2;
		await agent.prompt("go");
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.hooks.filter((h) => h.name.includes("prepareNextTurn")).map((h) => h.name), ["legacy prepareNextTurn", "prepareNextTurnWithContext"]);
			assert.deepEqual(t.calls.map((c) => [c.model, c.reasoning]), [["model-a", undefined], ["model-a", "low"], ["model-b", "low"]]);
		},
	},
);

scenario(
	"mid-run changes to state.model/thinkingLevel/tools and hook fields affect only later runs",
	async (impl) => {
		const tr = new Trace();
		const t1 = makeTool(tr, "t");
		const t2 = makeTool(tr, "u");
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [call("c1", "t")] }, { content: [call("c2", "u")] }, { content: [text("end")] }, { content: [text("second run")] }], {
			initialState: { model: MODEL, tools: [t1] },
		});
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "tool_execution_end" && ev.toolCallId === "c1") {
				agent.state.model = MODEL_B;
				agent.state.thinkingLevel = "medium";
				agent.state.tools = [t1, t2];
				agent.beforeToolCall = async () => ({ block: true, reason: "late hook" });
			}
		});
		await agent.prompt("one");
		await agent.prompt("two");
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.calls.map((c) => c.model), ["model-a", "model-a", "model-a", "model-b"]);
			assert.equal(t.calls[3].reasoning, "medium");
			const c2 = t.events.find((e) => e.type === "tool_execution_end" && e.toolCallId === "c2");
			assert.equal(c2.result.content[0].text, "Tool u not found");
		},
	},
);

scenario(
	"Agent hooks: beforeToolCall sees the assistant message already in state; finishTurn/prepareRequest get the signal",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		let agent;
		let streamFn;
		({ agent, streamFn } = makeAgent(impl, tr, [{ content: [call("c1", "t")] }, { content: [text("done")] }], {
			initialState: { model: MODEL, tools: [tool] },
			beforeToolCall: async (ctx, signal) => {
				tr.hook("beforeToolCall", { stateRoles: agent.state.messages.map((m) => m.role), signalIsAgentSignal: signal === agent.signal });
				return undefined;
			},
			afterToolCall: async (ctx, signal) => {
				tr.hook("afterToolCall", { signalIsAgentSignal: signal === agent.signal, pending: [...agent.state.pendingToolCalls] });
				return undefined;
			},
			finishTurn: async (turn, signal) => {
				tr.hook("finishTurn", { signalIsAgentSignal: signal === agent.signal, toolResults: turn.toolResults.length });
				return undefined;
			},
			prepareRequest: async (req, signal) => {
				tr.hook("prepareRequest", { signalIsAgentSignal: signal === agent.signal, thinkingLevel: req.thinkingLevel });
				return undefined;
			},
		}));
		recordAgent(agent, tr);
		await agent.prompt("go");
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const b = t.hooks.find((h) => h.name === "beforeToolCall");
			assert.deepEqual(b.stateRoles, ["system", "user", "assistant"]);
			assert.ok(t.hooks.filter((h) => "signalIsAgentSignal" in h).every((h) => h.signalIsAgentSignal));
		},
	},
);

scenario(
	"continue() after finishTurn ended on tool results resumes from the toolResult tail",
	async (impl) => {
		const tr = new Trace();
		const tool = makeTool(tr, "t");
		let first = true;
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [call("c1", "t")] }, { content: [text("resumed")] }], {
			initialState: { model: MODEL, tools: [tool] },
			finishTurn: () => (first ? ((first = false), { action: "end" }) : undefined),
		});
		recordAgent(agent, tr);
		await agent.prompt("go");
		tr.note("tailAfterFirst", agent.state.messages.at(-1).role);
		tr.note("run", await settleRun(agent.continue()));
		tr.note("final", finalState(agent, tr));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.notes.tailAfterFirst, "toolResult");
			assert.equal(t.calls.length, 2);
		},
	},
);

scenario(
	"state.streamingMessage and errorMessage are reset at run start",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("x")] }]);
		agent.state.streamingMessage = user("stale");
		agent.state.errorMessage = "stale error";
		const facts = [];
		agent.subscribe((ev) => {
			if (ev.type === "agent_start") facts.push(stateFacts(agent, ev, agent.signal, tr));
		});
		await agent.prompt("go");
		return { facts };
	},
	{ check: (t) => assert.deepEqual([t.facts[0].streaming, t.facts[0].errorMessage], ["none", undefined]) },
);

scenario(
	"waitForIdle() during a run resolves only after the run; prompt() after idle works again",
	async (impl) => {
		const tr = new Trace();
		const gate = deferred();
		const { agent, streamFn } = makeAgent(impl, tr, [{ content: [text("slow")], timing: "micro" }, { content: [text("second")] }]);
		recordAgent(agent, tr, async (ev) => {
			if (ev.type === "turn_end") await gate.promise;
		});
		const p = agent.prompt("one");
		let idle = false;
		const w = agent.waitForIdle().then(() => (idle = true));
		await sleep(5);
		tr.note("idleBeforeGate", idle);
		gate.resolve();
		await w;
		await p;
		tr.note("second", await settleRun(agent.prompt("two")));
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.equal(t.notes.idleBeforeGate, false) },
);

scenario(
	"listeners see the aborted signal after abort(); agent_end messages are the objects in state",
	async (impl) => {
		const tr = new Trace();
		const { agent } = makeAgent(impl, tr, [{ content: [text("partial")], hang: true }]);
		recordAgent(agent, tr, (ev) => {
			if (ev.type === "message_start" && ev.message.role === "assistant") agent.abort();
		});
		const ends = [];
		agent.subscribe((ev) => {
			if (ev.type === "agent_end") ends.push(ev.messages);
		});
		await agent.prompt("go");
		tr.note("agentEndInState", ends[0].every((m) => agent.state.messages.includes(m)));
		tr.note("final", finalState(agent, tr));
		return tr.result();
	},
	{
		check(t) {
			assert.equal(t.events.at(-1).st.signal, "aborted");
			assert.equal(t.notes.agentEndInState, true);
		},
	},
);
