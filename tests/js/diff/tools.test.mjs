// The tool pipeline (one call at a time, inside the loop).
import { Type } from "typebox";
import { assert, scenario } from "../support/harness.mjs";
import { call, makeTool, scripted, sleep, text, user, zeroUsage } from "../support/scripted.mjs";
import { baseConfig, runLoop, toolHooks } from "../support/loop.mjs";
import { Trace, snap } from "../support/trace.mjs";

/** One prompt, one response with `calls`, then a closing text response. */
async function toolRun(impl, { tools, calls, config, stopReason, onEvent }) {
	const tr = new Trace();
	const toolList = typeof tools === "function" ? tools(tr) : (tools ?? []);
	const streamFn = scripted(impl, [{ content: calls, ...(stopReason ? { stopReason } : {}) }, { content: [text("done")] }], { tr });
	await runLoop(impl, {
		tr,
		prompts: [user("go")],
		context: { messages: [], tools: toolList },
		config: baseConfig(tr, typeof config === "function" ? config(tr) : (config ?? {})),
		streamFn,
		onEvent,
	});
	return tr.result({ calls: streamFn.calls });
}

const ends = (t) => t.events.filter((e) => e.type === "tool_execution_end");
/** tool_execution_end of a call id (ends arrive in completion order, so never index them). */
const endOf = (t, id = "c1") => ends(t).find((e) => e.toolCallId === id);
const endText = (t, id = "c1") => endOf(t, id).result.content?.[0]?.text;
const resultMessages = (t) => t.events.filter((e) => e.type === "message_end" && e.message.role === "toolResult").map((e) => e.message);

const COUNT = Type.Object({ count: Type.Number() });
const PLAIN_COUNT = { type: "object", properties: { count: { type: "number" } }, required: ["count"] };

scenario(
	"unknown tool: immediate error result without durationMs",
	(impl) => toolRun(impl, { tools: [], calls: [call("c1", "nope", { a: 1 })] }),
	{
		check(t) {
			const e = endOf(t, "c1");
			assert.equal(endText(t), "Tool nope not found");
			assert.equal(e.isError, true);
			assert.equal("durationMs" in e, false);
			assert.deepEqual(e.keys, ["type", "toolCallId", "toolName", "result", "isError"]);
			assert.deepEqual(e.result, { content: [{ type: "text", text: "Tool nope not found" }], details: {} });
			const m = resultMessages(t)[0];
			assert.deepEqual(Object.keys(m), ["role", "toolCallId", "toolName", "content", "details", "usage", "isError", "timestamp"]);
			assert.equal(m.timestamp, "<now>");
		},
	},
);

scenario(
	"successful execution: raw args on start, durationMs on end and result message",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "echo", {
					parameters: { type: "object", properties: { s: { type: "string" } } },
					execute: async (id, params) => ({ content: [{ type: "text", text: `echo ${params.s}` }], details: { n: 1 }, structuredContent: { s: params.s }, usage: zeroUsage() }),
				}),
			],
			calls: [call("c1", "echo", { s: "x" })],
		}),
	{
		check(t) {
			const e = endOf(t, "c1");
			assert.equal(e.durationMs, true);
			assert.deepEqual(e.keys, ["type", "toolCallId", "toolName", "result", "isError", "durationMs"]);
			assert.equal(e.isError, false);
			const m = resultMessages(t)[0];
			assert.deepEqual(Object.keys(m), ["role", "toolCallId", "toolName", "content", "details", "usage", "isError", "durationMs", "timestamp"]);
			assert.equal("structuredContent" in m, false);
			const s = t.events.find((x) => x.type === "tool_execution_start");
			assert.deepEqual(s.keys, ["type", "toolCallId", "toolName", "args"]);
		},
	},
);

scenario(
	"prepareArguments returning a new object: start carries the raw args, execute the prepared ones",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "p", {
					parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
					prepareArguments(args) {
						tr.hook("prepareArguments", { args: snap(args), argc: arguments.length });
						return { path: args.file };
					},
				}),
			],
			calls: [call("c1", "p", { file: "a.txt" })],
			config: (tr) => toolHooks(tr, { before: async () => undefined }),
		}),
	{
		check(t) {
			assert.deepEqual(t.events.find((e) => e.type === "tool_execution_start").args, { file: "a.txt" });
			assert.deepEqual(t.hooks.find((h) => h.name === "execute:p").params, { path: "a.txt" });
			const b = t.hooks.find((h) => h.name === "beforeToolCall");
			assert.equal(b.toolCallIsBlock, true, "beforeToolCall receives the original tool call block");
			assert.deepEqual(b.args, { path: "a.txt" });
		},
	},
);

scenario(
	"prepareArguments returning its (mutated) input keeps the original call; execute gets a clone",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "p", {
					prepareArguments(args) {
						args.added = true;
						return args;
					},
				}),
			],
			calls: [call("c1", "p", { x: 1 })],
			config: (tr) => toolHooks(tr, { before: async () => undefined }),
		}),
	{ check: (t) => assert.equal(t.hooks.find((h) => h.name === "beforeToolCall").argsIsRaw, false) },
);

scenario(
	"prepareArguments throwing becomes an immediate error result",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "p", {
					prepareArguments() {
						throw new RangeError("cannot prepare");
					},
				}),
			],
			calls: [call("c1", "p", { x: 1 })],
		}),
	{
		check(t) {
			assert.equal(endText(t), "cannot prepare");
			assert.equal(t.hooks.some((h) => h.name === "execute:p"), false);
		},
	},
);

scenario(
	"an argumentsError on the call fails validation even after prepareArguments",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "p", { prepareArguments: () => ({ fixed: true }) }), makeTool(tr, "q")],
			calls: [
				{ toolCall: { id: "c1", name: "p", arguments: {}, argumentsError: "Unexpected end of JSON input" } },
				{ toolCall: { id: "c2", name: "q", arguments: {}, argumentsError: "bad" } },
			],
		}),
	{
		check(t) {
			assert.equal(endText(t, "c1"), 'Invalid arguments for tool "p": Unexpected end of JSON input');
			assert.equal(endText(t, "c2"), 'Invalid arguments for tool "q": bad');
		},
	},
);

scenario(
	"TypeBox Type.Object({count: Type.Number()}) coerces '42' to 42",
	(impl) => toolRun(impl, { tools: (tr) => [makeTool(tr, "count", { parameters: COUNT })], calls: [call("c1", "count", { count: "42" })] }),
	{
		check(t) {
			assert.deepEqual(t.hooks.find((h) => h.name === "execute:count").params, { count: 42 });
			assert.deepEqual(t.events.find((e) => e.type === "tool_execution_start").args, { count: "42" });
		},
	},
);

scenario(
	"TypeBox validation failure: exact error text",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "count", { parameters: COUNT })],
			calls: [call("c1", "count", { count: "abc" }), call("c2", "count", {})],
		}),
	{
		check(t) {
			assert.equal(endText(t, "c1"), 'Validation failed for tool "count":\n  - count: must be number\n\nReceived arguments:\n{\n  "count": "abc"\n}');
			assert.equal(endText(t, "c2"), 'Validation failed for tool "count":\n  - count: must have required properties count\n\nReceived arguments:\n{}');
		},
	},
);

scenario(
	"plain JSON schema: string '42' is coerced to 42, 'abc' fails, missing property fails",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "plain", { parameters: PLAIN_COUNT })],
			calls: [call("c1", "plain", { count: "42" }), call("c2", "plain", { count: "abc" }), call("c3", "plain", {})],
		}),
	{
		check(t) {
			assert.deepEqual(t.hooks.find((h) => h.name === "execute:plain").params, { count: 42 });
			assert.match(endText(t, "c2"), /^Validation failed for tool "plain":\n {2}- count: must be number\n/);
			assert.match(endText(t, "c3"), /must have required properties count/);
		},
	},
);

scenario(
	"booleans: TypeBox Boolean '1' -> true, plain boolean '1' -> must be boolean",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "tb", { parameters: Type.Object({ flag: Type.Boolean() }) }),
				makeTool(tr, "pb", { parameters: { type: "object", properties: { flag: { type: "boolean" } }, required: ["flag"] } }),
			],
			calls: [call("c1", "tb", { flag: "1" }), call("c2", "pb", { flag: "1" }), call("c3", "pb", { flag: "true" })],
		}),
	{
		check(t) {
			assert.deepEqual(t.hooks.find((h) => h.name === "execute:tb").params, { flag: true });
			assert.match(endText(t, "c2"), /- flag: must be boolean/);
		},
	},
);

scenario(
	"nulls: TypeBox String null -> 'null'; plain required string null -> ''; plain optional null -> deleted",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "ts", { parameters: Type.Object({ s: Type.String() }) }),
				makeTool(tr, "ps", { parameters: { type: "object", properties: { s: { type: "string" }, o: { type: "string" } }, required: ["s"] } }),
			],
			calls: [call("c1", "ts", { s: null }), call("c2", "ps", { s: null, o: null })],
		}),
	{
		check(t) {
			assert.deepEqual(t.hooks.find((h) => h.name === "execute:ts").params, { s: "null" });
			assert.deepEqual(t.hooks.find((h) => h.name === "execute:ps").params, { s: "" });
		},
	},
);

scenario(
	"error paths: nested required list, array item path, root",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "ab", { parameters: Type.Object({ a: Type.String(), b: Type.String() }) }),
				makeTool(tr, "arr", { parameters: Type.Object({ a: Type.Array(Type.Number()) }) }),
				makeTool(tr, "root", { parameters: Type.Object({ a: Type.String() }) }),
				makeTool(tr, "enum", { parameters: { type: "object", properties: { k: { enum: ["x", "y"] }, n: { type: "integer", minimum: 3 } }, additionalProperties: false } }),
			],
			calls: [call("c1", "ab", {}), call("c2", "arr", { a: [1, "x"] }), { toolCall: { id: "c3", name: "root", arguments: null } }, call("c4", "enum", { k: "z", n: 1.5, extra: 1 })],
		}),
	{
		check(t) {
			assert.match(endText(t, "c1"), /\n {2}- a: must have required properties a, b\n/);
			assert.match(endText(t, "c2"), /\n {2}- a\.1: must be number\n/);
			assert.match(endText(t, "c3"), /\n {2}- root: must be object\n/);
		},
	},
);

scenario(
	"beforeToolCall: block with reason, block without reason, block with terminate",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "t")],
			calls: [call("c1", "t", { i: 1 }), call("c2", "t", { i: 2 }), call("c3", "t", { i: 3 }), call("c4", "t", { i: 4 })],
			config: (tr) =>
				toolHooks(tr, {
					before: async ({ toolCall }) =>
						({
							c1: { block: true, reason: "not allowed" },
							c2: { block: true },
							c3: { block: true, reason: "", terminate: true },
							c4: { block: false, terminate: true },
						})[toolCall.id],
				}),
		}),
	{
		check(t) {
			assert.equal(endText(t, "c1"), "not allowed");
			assert.equal(endText(t, "c2"), "Tool execution was blocked");
			assert.equal(endText(t, "c3"), "Tool execution was blocked");
			assert.deepEqual(Object.keys(endOf(t, "c3").result), ["content", "details", "terminate"]);
			assert.equal(endOf(t, "c4").durationMs, true, "c4 was executed");
			const b = t.hooks.find((h) => h.name === "beforeToolCall");
			assert.deepEqual(b.keys, ["assistantMessage", "toolCall", "args", "context"]);
			assert.equal(b.argc, 2);
		},
	},
);

scenario(
	"beforeToolCall mutating args changes what execute receives (no re-validation)",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "count", { parameters: COUNT })],
			calls: [call("c1", "count", { count: "1" })],
			config: (tr) =>
				toolHooks(tr, {
					before: async ({ args }) => {
						args.count = "not a number anymore";
						args.extra = [1];
					},
				}),
		}),
	{ check: (t) => assert.deepEqual(t.hooks.find((h) => h.name === "execute:count").params, { count: "not a number anymore", extra: [1] }) },
);

scenario(
	"beforeToolCall throwing an Error or a non-Error value",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "t")],
			calls: [call("c1", "t"), call("c2", "t"), call("c3", "t")],
			config: (tr) =>
				toolHooks(tr, {
					before: async ({ toolCall }) => {
						if (toolCall.id === "c1") throw new Error("hook failed");
						if (toolCall.id === "c2") throw "plain string";
						throw { code: 7 };
					},
				}),
		}),
	{
		check(t) {
			assert.deepEqual(["c1", "c2", "c3"].map((id) => endText(t, id)), ["hook failed", "plain string", "[object Object]"]);
		},
	},
);

scenario(
	"execute throwing Error / string / object / undefined / rejecting with null",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "t", {
					execute: async (id) => {
						const v = { c1: new TypeError("typed failure"), c2: "str failure", c3: { message: "obj" }, c4: undefined }[id];
						if (id === "c5") return Promise.reject(null);
						throw v;
					},
				}),
			],
			calls: [call("c1", "t"), call("c2", "t"), call("c3", "t"), call("c4", "t"), call("c5", "t")],
		}),
	{
		check(t) {
			assert.deepEqual(["c1", "c2", "c3", "c4", "c5"].map((id) => endText(t, id)), ["typed failure", "str failure", "[object Object]", "undefined", "null"]);
			assert.ok(ends(t).every((e) => e.durationMs === true && e.isError === true));
		},
	},
);

scenario(
	"execute resolving undefined: the isError read throws and becomes the error result",
	(impl) => toolRun(impl, { tools: (tr) => [makeTool(tr, "t", { execute: async () => undefined })], calls: [call("c1", "t")] }),
	{
		check(t) {
			assert.equal(endText(t), "Cannot read properties of undefined (reading 'isError')");
			assert.equal(endOf(t, "c1").durationMs, true);
		},
	},
);

scenario(
	"result.isError true, missing content, extra fields: flags, keys and `content ?? []`",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "t", {
					execute: async (id) =>
						id === "c1"
							? { content: [{ type: "text", text: "soft failure" }], details: { why: 1 }, isError: true, structuredContent: { a: 1 }, extra: "kept" }
							: { details: "no content" },
				}),
			],
			calls: [call("c1", "t"), call("c2", "t")],
		}),
	{
		check(t) {
			assert.equal(endOf(t, "c1").isError, true);
			assert.deepEqual(resultMessages(t)[1].content, []);
			assert.equal("content" in endOf(t, "c2").result, false);
		},
	},
);

scenario(
	"onUpdate: updates emitted only while execute runs, with raw args; late updates ignored; async sink awaited",
	async (impl) => {
		let late;
		const out = await toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "t", {
					parameters: COUNT,
					execute: async (id, params, signal, onUpdate) => {
						const r1 = onUpdate({ content: [{ type: "text", text: "10%" }], details: { p: 10 } });
						tr.hook("onUpdate returned", { value: snap(r1) });
						await sleep(1);
						onUpdate({ content: [{ type: "text", text: "50%" }], details: { p: 50 } });
						late = () => onUpdate({ content: [{ type: "text", text: "late" }], details: {} });
						return { content: [{ type: "text", text: "100%" }], details: { p: 100 } };
					},
				}),
			],
			calls: [call("c1", "t", { count: "5" })],
			onEvent: async (ev, tr) => {
				if (ev.type === "tool_execution_update") {
					// Much longer than execute's sleep(1): the order must hold on a loaded machine.
					await sleep(25);
					tr.hook("update sink done", { p: ev.partialResult.details.p });
				}
			},
		});
		late?.();
		return out;
	},
	{
		check(t) {
			const ups = t.events.filter((e) => e.type === "tool_execution_update");
			assert.equal(ups.length, 2);
			assert.deepEqual(ups[0].args, { count: "5" });
			assert.deepEqual(ups[0].keys, ["type", "toolCallId", "toolName", "args", "partialResult"]);
			const i = t.log.indexOf("ev:tool_execution_end:c1");
			assert.ok(t.log.lastIndexOf("hook:update sink done") < i, "tool_execution_end waits for update sinks");
		},
	},
);

scenario(
	"afterToolCall overrides and the structuredContent rule",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "t", {
					execute: async (id) => ({ content: [{ type: "text", text: `orig ${id}` }], details: { d: id }, structuredContent: { s: id }, isError: id === "c6" }),
				}),
			],
			calls: ["c1", "c2", "c3", "c4", "c5", "c6", "c7"].map((id) => call(id, "t")),
			config: (tr) =>
				toolHooks(tr, {
					after: async ({ toolCall }) =>
						({
							c1: { content: [{ type: "text", text: "replaced" }] },
							c2: { structuredContent: { s: "new" }, details: { d: "new" } },
							c3: { content: null, details: null, usage: null, terminate: null, isError: null },
							c4: { content: [] },
							c5: { isError: true, terminate: true, usage: zeroUsage() },
							c6: { isError: false },
							c7: undefined,
						})[toolCall.id],
				}),
		}),
	{
		check(t) {
			const r = ["c1", "c2", "c3", "c4", "c5", "c6", "c7"].map((id) => endOf(t, id).result);
			assert.equal("structuredContent" in r[0], false);
			assert.deepEqual(r[1].structuredContent, { s: "new" });
			assert.deepEqual(r[2].structuredContent, { s: "c3" });
			assert.deepEqual(r[3].content, []);
			assert.equal("structuredContent" in r[3], false);
			assert.equal(endOf(t, "c5").isError, true);
			assert.equal(endOf(t, "c6").isError, false);
			assert.equal(r[5].isError, true, "the original isError field stays inside result");
			assert.deepEqual(Object.keys(r[6]), ["content", "details", "structuredContent", "isError"]);
			assert.deepEqual(Object.keys(r[0]), ["content", "details", "isError", "usage", "terminate"]);
		},
	},
);

scenario(
	"afterToolCall sees thrown results; afterToolCall throwing replaces the result but keeps durationMs",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [
				makeTool(tr, "t", {
					execute: async (id) => {
						if (id === "c1") throw new Error("exec failed");
						return { content: [{ type: "text", text: "ok" }], details: {} };
					},
				}),
			],
			calls: [call("c1", "t"), call("c2", "t")],
			config: (tr) =>
				toolHooks(tr, {
					after: async ({ toolCall, isError }) => {
						if (toolCall.id === "c2") throw new Error("after failed");
						return { details: { sawError: isError } };
					},
				}),
		}),
	{
		check(t) {
			const a = t.hooks.filter((h) => h.name === "afterToolCall");
			assert.equal(a[0].isError, true);
			assert.deepEqual(a[0].result, { content: [{ type: "text", text: "exec failed" }], details: {} });
			assert.equal(endText(t, "c2"), "after failed");
			assert.deepEqual(endOf(t, "c2").result, { content: [{ type: "text", text: "after failed" }], details: {} });
			assert.equal(endOf(t, "c2").durationMs, true);
		},
	},
);

scenario(
	"blocked and invalid calls never reach execute or afterToolCall",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "count", { parameters: COUNT })],
			calls: [call("c1", "count", { count: "x" }), call("c2", "count", { count: 1 }), call("c3", "missing")],
			config: (tr) => toolHooks(tr, { before: async () => ({ block: true }), after: async () => ({ content: [] }) }),
		}),
	{
		check(t) {
			assert.deepEqual(t.hooks.filter((h) => h.name.startsWith("execute") || h.name === "afterToolCall"), []);
			assert.equal(t.hooks.filter((h) => h.name === "beforeToolCall").length, 1, "only the valid call reaches beforeToolCall");
		},
	},
);

scenario(
	"hooks and execute see the working context; args are a deep clone of the raw arguments",
	(impl) =>
		toolRun(impl, {
			tools: (tr) => [makeTool(tr, "t", { parameters: { type: "object", properties: { nested: { type: "object" } } } })],
			calls: [call("c1", "t", { nested: { deep: [1, 2] } })],
			config: (tr) => toolHooks(tr, { before: async () => undefined, after: async () => undefined }),
		}),
	{
		check(t) {
			const b = t.hooks.find((h) => h.name === "beforeToolCall");
			const a = t.hooks.find((h) => h.name === "afterToolCall");
			assert.equal(b.argsIsRaw, false);
			assert.equal(a.argsId, b.argsId, "afterToolCall gets the same prepared args object");
			assert.deepEqual(b.contextRoles, ["system", "user", "assistant"]);
		},
	},
);

scenario(
	"toolResult message keeps `details`/`usage` keys when the tool returned neither",
	(impl) => toolRun(impl, { tools: (tr) => [makeTool(tr, "t", { execute: async () => ({ content: [{ type: "text", text: "bare" }] }) })], calls: [call("c1", "t")] }),
	{
		check(t) {
			const m = resultMessages(t)[0];
			assert.ok("details" in m && "usage" in m);
			assert.equal(m.details, undefined);
		},
	},
);
