// Scenarios run twice in Chromium: with the in-page Agent and with the WorkerAgent, whose scripted stream
// function (same script) runs in the worker. Imported by the page and by the worker module, so a response
// may be a function. `options(tr, impl)` gives main-thread tools and hooks; `drive(agent, tr)` runs it.
import { MODEL, call, deferred, makeTool, sleep, text, thinking, user } from "/support/scripted.mjs";
import { settleRun } from "/support/agent.mjs";
import { snap, signalState } from "/support/trace.mjs";

const big = "x".repeat(50) + "\n";
const obj = (properties) => ({ type: "object", properties });

export const SCENARIOS = {
	text: {
		responses: [{ content: [thinking("hmm", ["h", "mm"]), text("Hello world", ["Hel", "lo ", "world"])], timing: "micro" }],
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("hi")));
		},
	},
	"text sync, mutable partial": {
		responses: [{ content: [text("abcdef", ["ab", "cd", "ef"])], mutable: true }],
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("hi")));
		},
	},
	// Every event pushed before the loop reads the first: the partial runs ahead of the events (the blocks are
	// full at message_start), and the last block's deltas do not add up to its text.
	"thinking and text sync, mutable partial, deltas that are not the text": {
		responses: [
			{
				content: [thinking("hmm", ["h", "mm"]), text("abcdef", ["ab", "cd", "ef"]), text("final", ["fi", "xx", "nal"])],
				mutable: true,
			},
		],
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("hi")));
		},
	},
	// A listener subscribed with { deltas: false } sees every event but the per-token ones, on both.
	"a listener without the deltas": {
		responses: [{ content: [thinking("hmm", ["h", "mm"]), text("Hello world", ["Hel", "lo ", "world"])], timing: "micro" }],
		async drive(agent, tr) {
			const seen = [];
			agent.subscribe((e) => void seen.push(e.type === "message_update" ? `update:${e.assistantMessageEvent.type}` : e.type), { deltas: false });
			tr.note("settled", await settleRun(agent.prompt("hi")));
			tr.note("without deltas", seen);
		},
	},
	"long message, 2,000 deltas": {
		responses: [{ content: [text(big.repeat(2000), Array(2000).fill(big))], timing: "micro" }],
		light: true,
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("long")));
		},
	},
	"parallel tools with updates, args streamed": {
		responses: [
			{
				content: [
					text("calling"),
					call("c1", "echo", { a: 1, list: [1, 2, { b: "x" }] }, ['{"a":1,', '"list":[1,', "2,", '{"b":"x"}]}']),
					call("c2", "slow", { ms: 5 }),
				],
				timing: "micro",
			},
			{ content: [text("done")] },
		],
		options: (tr) => {
			// `slow` ends after `echo` has returned, by order rather than by time: the page's results reach the
			// worker in the order they were posted, so the completion order is the same on a loaded machine.
			let echoReturned;
			const echoed = new Promise((resolve) => (echoReturned = resolve));
			return {
				initialState: {
					model: MODEL,
					tools: [
						makeTool(tr, "echo", {
							parameters: obj({ a: { type: "number" }, list: { type: "array" } }),
							async execute(id, params, signal, onUpdate) {
								// After a pause: an update reaches the worker one round trip later, so one sent at once
								// would be ordered after the next tool's start (see the README's "Workers").
								await sleep(1);
								onUpdate({ content: [{ type: "text", text: "half" }], details: { p: 0.5 } });
								await sleep(1);
								setTimeout(echoReturned, 0);
								return { content: [{ type: "text", text: JSON.stringify(params) }], details: { echoed: params } };
							},
						}),
						makeTool(tr, "slow", {
							parameters: obj({ ms: { type: "number" } }),
							async execute(id, { ms }) {
								await echoed;
								await sleep(ms);
								return { content: [{ type: "text", text: "slept" }], details: undefined };
							},
						}),
					],
				},
			};
		},
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
	"sequential tools, a missing tool, a throwing tool": {
		responses: [
			{ content: [call("c1", "boom", {}), call("c2", "nope", {}), call("c3", "ok", {})] },
			{ content: [text("end")] },
		],
		options: (tr) => ({
			toolExecution: "sequential",
			initialState: {
				model: MODEL,
				tools: [
					makeTool(tr, "boom", { execute: async () => { throw new TypeError("tool failed"); } }),
					makeTool(tr, "ok"),
				],
			},
		}),
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
	"beforeToolCall blocks, afterToolCall rewrites, transformContext and convertToLlm": {
		responses: [{ content: [call("c1", "a", { v: 1 }), call("c2", "b", { v: 2 })] }, { content: [text("ok")] }],
		options: (tr) => ({
			initialState: { model: MODEL, systemPrompt: "sys", tools: [makeTool(tr, "a"), makeTool(tr, "b")] },
			async beforeToolCall(ctx, signal) {
				tr.hook("before", { name: ctx.toolCall.name, args: snap(ctx.args), messages: ctx.context.messages.length, signal: signalState(signal), tools: ctx.context.tools?.map((t) => t.name) });
				await sleep(1);
				return ctx.toolCall.name === "b" ? { block: true, reason: "not b" } : undefined;
			},
			async afterToolCall(ctx) {
				tr.hook("after", { name: ctx.toolCall.name, isError: ctx.isError, result: snap(ctx.result) });
				return ctx.toolCall.name === "a" ? { content: [{ type: "text", text: "rewritten" }], details: { r: 1 } } : undefined;
			},
			async transformContext(messages, signal) {
				tr.hook("transform", { n: messages.length, signal: signalState(signal) });
				return [...messages, { role: "note", text: "n", timestamp: 5 }];
			},
			convertToLlm(messages) {
				tr.hook("convert", { roles: messages.map((m) => m.role) });
				return messages.filter((m) => m.role !== "note");
			},
		}),
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
	"steering and follow-up from a listener, queue accessors": {
		responses: [
			{ content: [call("c1", "t", {})], timing: "micro" },
			{ content: [text("after steer")] },
			{ content: [text("after follow-up")] },
		],
		options: (tr) => ({ initialState: { model: MODEL, tools: [makeTool(tr, "t")] } }),
		async drive(agent, tr) {
			let once = false;
			agent.subscribe((ev) => {
				if (ev.type === "tool_execution_start" && !once) {
					once = true;
					agent.steer(user("steered"));
					agent.followUp(user("followed"));
					tr.note("queued", { has: agent.hasQueuedMessages(), peek: snap(agent.peekQueuedMessages()) });
				}
			});
			tr.note("settled", await settleRun(agent.prompt("go")));
			tr.note("after", { has: agent.hasQueuedMessages() });
		},
	},
	"abort while streaming": {
		responses: [{ content: [text("partial text", ["par", "tial", " text"])], hang: true, timing: "micro" }],
		async drive(agent, tr) {
			agent.subscribe((ev) => {
				if (ev.type === "message_update" && ev.assistantMessageEvent.type === "text_delta") agent.abort();
			});
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
	"abort during a main-thread tool: its signal is aborted": {
		responses: [{ content: [call("c1", "wait", {})] }, { content: [text("never")] }],
		options: (tr) => ({
			initialState: {
				model: MODEL,
				tools: [
					makeTool(tr, "wait", {
						execute: (id, params, signal) =>
							new Promise((resolve, reject) => {
								signal.addEventListener("abort", () => {
									tr.hook("tool saw abort", { aborted: signal.aborted });
									reject(new Error("stopped by abort"));
								});
							}),
					}),
				],
			},
		}),
		async drive(agent, tr) {
			agent.subscribe((ev) => {
				if (ev.type === "tool_execution_start") setTimeout(() => agent.abort(), 5);
			});
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
	"beforeToolCall pending at abort sees its signal abort": {
		responses: [{ content: [call("c1", "a", {})] }, { content: [text("never")] }],
		options: (tr) => ({
			initialState: { model: MODEL, tools: [makeTool(tr, "a")] },
			beforeToolCall: (ctx, signal) =>
				new Promise((resolve) => {
					signal.addEventListener("abort", () => {
						tr.hook("before saw abort", { aborted: signal.aborted });
						resolve({ block: true, reason: "aborted" });
					});
				}),
		}),
		async drive(agent, tr) {
			agent.subscribe((ev) => {
				if (ev.type === "message_end" && ev.message.role === "assistant") setTimeout(() => agent.abort(), 5);
			});
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
	"stream function rejects; prompt while running; continue; reset": {
		responses: [{ reject: new Error("network down") }, { content: [text("continued")], timing: "micro" }],
		async drive(agent, tr) {
			tr.note("first", await settleRun(agent.prompt("go")));
			tr.note("errorMessage", agent.state.errorMessage);
			agent.state.messages = agent.state.messages.slice(0, -1);
			const p = agent.continue();
			tr.note("second while running", await settleRun(agent.prompt("again")));
			tr.note("continued", await settleRun(p));
			await agent.waitForIdle();
			tr.note("beforeReset", agent.state.messages.length);
			agent.reset();
			tr.note("afterReset", snap(agent.state.messages));
		},
	},
	"reset with several system messages and sections; system prompt": {
		responses: [{ content: [text("one")] }, (c) => ({ content: [text(`after reset: ${c.context.messages.length}`)] })],
		options: () => ({
			initialState: {
				model: MODEL,
				messages: [
					{ role: "system", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], sections: { s1: "x" }, timestamp: 1 },
					{ role: "system", content: "c", sections: { s1: null, s2: "y" }, timestamp: 2 },
				],
			},
		}),
		async drive(agent, tr) {
			tr.note("prompt", agent.state.systemPrompt);
			await agent.prompt("first");
			agent.reset();
			tr.note("after reset", { messages: snap(agent.state.messages), prompt: agent.state.systemPrompt });
			await agent.prompt("second");
		},
	},
	"messages edited in place and model changed between runs": {
		responses: [{ content: [text("one")] }, (c) => ({ content: [text(`two: ${c.context.messages.length} messages, ${c.model.id}`)] })],
		async drive(agent, tr) {
			await agent.prompt("first");
			agent.state.messages.push(user("pushed by the app"));
			agent.state.model = { ...MODEL, id: "model-z" };
			await agent.prompt("second");
			tr.note("last", snap(agent.state.messages.at(-1).content));
		},
	},
	"a tool result whose details hold a function and a class instance": {
		responses: [{ content: [call("c1", "odd", {})] }, { content: [text("ok")] }],
		options: (tr) => ({
			initialState: {
				model: MODEL,
				tools: [makeTool(tr, "odd", { execute: async () => ({ content: [{ type: "text", text: "odd" }], details: { fn: () => 1, when: new (class When { at = 1; })(), n: 2 } }) })],
			},
		}),
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("go")));
			const details = agent.state.messages.find((m) => m.role === "toolResult").details;
			tr.note("details kept", { fn: typeof details.fn, when: details.when?.constructor?.name });
		},
	},
	"a tool registered in the worker": {
		responses: [{ content: [call("c1", "local", { x: 2 })] }, { content: [text("fine")] }],
		workerTools: () => [
			{
				name: "local",
				label: "Local",
				description: "runs where the agent runs",
				parameters: obj({ x: { type: "number" } }),
				execute: async (id, { x }) => ({ content: [{ type: "text", text: String(x * 2) }], details: { x } }),
			},
		],
		async drive(agent, tr) {
			tr.note("settled", await settleRun(agent.prompt("go")));
		},
	},
};

export { deferred };
