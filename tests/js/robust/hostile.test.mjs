// Hostile values across the JS/wasm boundary. Every case runs on ours and, unless
// noted, on the reference (1.4.0); the outcomes (events, transcript, what tools
// received, how prompt() settled) must be equal. Where the reference hangs, ours
// must end the run with a clear error instead. Ours must never trap (a Rust
// panic shows as `RuntimeError: unreachable`), hang, leave `isStreaming` set, or
// cause an unhandled rejection, and nothing may pollute Object.prototype.
import { test } from "node:test";
import { MODEL } from "../support/scripted.mjs";
import {
	OURS_MS,
	REF_MS,
	cleanEndProblems,
	comparable,
	ours,
	recTool,
	reference,
	responsesStream,
	runCase,
	toolCall,
	trapProblems,
} from "./hostile-support.mjs";
import { assert, assistantMessage, zeroUsage } from "./support.mjs";

import { startSseServer } from "../../support/sse-server.mjs";

const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype).sort().join();

function assertNoPollution(label) {
	assert.equal({}.polluted, undefined, `${label}: Object.prototype polluted`);
	assert.equal(Object.getOwnPropertyNames(Object.prototype).sort().join(), PROTO_KEYS, `${label}: Object.prototype changed`);
	assert.equal([].polluted, undefined);
}

/**
 * A case. `opts.check(o, r)` replaces the equality check; `opts.refHangs` documents that the reference
 * hangs (then ours must end with an error message matching `opts.error`); `opts.oursOnly` skips the reference.
 */
// Documented differences from the reference (docs/deviations.md): each is a real check of ours'
// behaviour, next to the reference's. `textOnly(re)`: everything equal but error texts, and ours'
// error text matches `re`.
function errorTexts(out) {
	return (out.messages ?? []).flatMap((m) =>
		m.role === "assistant" && typeof m.errorMessage === "string" ? [m.errorMessage] : m.role === "toolResult" && m.isError ? (m.content ?? []).map((c) => c?.text) : [],
	);
}
function withoutErrorTexts(out) {
	const c = structuredClone(comparable(out));
	for (const m of c.messages ?? []) {
		if (m.role === "assistant" && typeof m.errorMessage === "string") m.errorMessage = "<error>";
		if (m.role === "toolResult" && m.isError) m.content = "<error>";
	}
	if (c.settled?.rejected !== undefined) c.settled.rejected = "<error>";
	return c;
}
const textOnly = (re) => (o, r) => {
	assert.deepEqual(withoutErrorTexts(o), withoutErrorTexts(r), "ours behaves as the reference but for error texts");
	assert.ok(errorTexts(o).some((t) => re.test(t)), `ours' error text matches ${re}: ${JSON.stringify(errorTexts(o))}`);
};
/** Ours completes the run where the reference fails it: same events up to the request, ours ends with `stop`. */
const oursCompletes = (o, r) => {
	assert.equal(r.messages.at(-1).stopReason, "error", "the reference fails the run");
	assert.equal(o.messages.at(-1).stopReason, "stop", "ours completes the run");
	assert.ok(o.messages.filter((m) => m.role === "assistant").every((m) => m.errorMessage === undefined));
};
const DEVIATIONS = {
	"streamFn returns undefined": textOnly(/^streamFn must return an async-iterable AssistantMessageEventStream/),
	"streamFn returns a number": textOnly(/^streamFn must return an async-iterable AssistantMessageEventStream/),
	"streamFn returns a plain object": textOnly(/^streamFn must return an async-iterable AssistantMessageEventStream/),
	"streamFn returns a promise of a non-stream": (o, r) => {
		assert.equal(o.messages.at(-1).stopReason, "error");
		assert.match(o.messages.at(-1).errorMessage, /^streamFn must return an async-iterable AssistantMessageEventStream/);
		assert.equal(r.messages.at(-1).stopReason, "error");
	},
	"events with missing or garbage fields": oursCompletes,
	"BigInt in tool arguments, schema accepts anything": (o, r) => {
		// 1.4.0's structuredClone keeps the BigInt and its schema accepts it; ours validates a JSON
		// copy, which has none: an error result with the text 1.4.0 gives when it must print one.
		assert.equal(r.params.length, 1, "the reference runs the tool");
		assert.equal(r.messages.find((m) => m.role === "toolResult").isError, false);
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.equal(res.isError, true);
		assert.deepEqual(res.content, [{ text: "Do not know how to serialize a BigInt" }]);
		assert.deepEqual(o.params, []);
	},
	"final message content holds null and non-object blocks": (o, r) => {
		assert.equal(r.messages.at(-1).stopReason, "error", "the reference fails the run");
		assert.deepEqual(o.params, [{}], "ours runs the tool call");
		assert.equal(o.messages.at(-1).stopReason, "stop");
	},
	'prepareRequest returns {"context":"nope"}': textOnly(/^context\.messages must be an array$/),
	"prepareNextTurnWithContext returns a numeric thinkingLevel and a bad context": textOnly(/^context\.messages must be an array$/),
	"tool whose execute is not a function": textOnly(/^tool\.execute must be a function$/),
	"schema with null parameters": textOnly(/Cannot use 'in' operator|null/),
	"transformContext throws an object whose toString throws": (o, r) => {
		// 1.4.0's failure handler throws converting it: prompt() rejects and no agent_end comes
		assert.ok(r.settled.rejected !== undefined && !r.events.includes("agent_end"), "the reference loses agent_end");
		assert.equal(o.settled, "resolved");
		assert.equal(o.events.filter((e) => e === "agent_end").length, 1);
		assert.equal(o.messages.at(-1).errorMessage, "a thrown value that cannot be converted to a string");
	},
	"Proxy tool arguments (1.4.0's structuredClone rejects a Proxy)": (o, r) => {
		// Plain data is validated without 1.4.0's structuredClone (it is copied anyway), so a Proxy over plain
		// data (a reactive store's, say) reads as the data it wraps; 1.4.0 fails the call.
		const refResult = r.messages.find((m) => m.role === "toolResult");
		assert.equal(refResult.isError, true);
		assert.match(refResult.content[0].text, /could not be cloned/);
		assert.deepEqual(r.params, []);
		assert.equal(o.messages.find((m) => m.role === "toolResult").isError, false);
		assert.deepEqual(o.params, [{ a: 1 }]);
		assert.deepEqual(o.events, r.events);
	},
	"schema with properties as an array": (o, r) => {
		// ours ignores an array-valued `properties`; 1.4.0's coercion indexes it (a string '1')
		assert.deepEqual(o.params, [{ 0: 1 }]);
		assert.deepEqual(r.params, [{ 0: "1" }]);
		assert.deepEqual(o.events, r.events);
	},
};

function hostile(name, build, opts = {}) {
	const deviation = opts.check ? undefined : DEVIATIONS[name];
	if (deviation) opts = { ...opts, check: deviation };
	test(`hostile: ${name}`, { timeout: 60_000 }, async () => {
		const o = await runCase(ours, build, opts.ms ?? OURS_MS);
		assertNoPollution(`${name} [ours]`);
		const problems = cleanEndProblems(o);
		assert.deepEqual(problems, [], `ours: ${JSON.stringify(comparable(o)).slice(0, 600)}`);
		if (o.consoleErrors.length) assert.fail(`ours wrote to console.error: ${o.consoleErrors.join(" | ")}`);
		if (opts.oursOnly) {
			await opts.check?.(o);
			return;
		}
		const r = await runCase(reference, build, REF_MS);
		assertNoPollution(`${name} [reference]`);
		if (opts.refHangs) {
			assert.equal(r.settled, "hang", "the reference hangs here (documented); if it no longer does, compare instead");
		}
		if (r.settled === "hang") {
			// ours must end with an explicit error
			const last = o.messages.at(-1);
			assert.equal(last.role, "assistant", "ours ends on an assistant message");
			assert.ok(["error", "aborted"].includes(last.stopReason), `ours: failure stopReason, got ${last.stopReason}`);
			assert.ok(typeof last.errorMessage === "string" && last.errorMessage.length > 0, "ours: a clear errorMessage");
			if (opts.error) assert.match(last.errorMessage, opts.error);
			await opts.check?.(o, r);
			return;
		}
		if (opts.check) return opts.check(o, r);
		assert.deepEqual(comparable(o), comparable(r), "ours behaves as the reference");
	});
}

const throwingGetter = (obj, key, error = new Error(`getter ${key} threw`)) =>
	Object.defineProperty(obj, key, {
		enumerable: true,
		get() {
			throw error;
		},
	});

const text = (t) => ({ type: "text", text: t });
const OBJ = { type: "object" };

// ---- getters that throw -----------------------------------------------------------------

hostile("message whose `role` getter throws (read by convertToLlm)", () => ({
	input: throwingGetter({ content: "hi", timestamp: 1 }, "role"),
}));

hostile("message whose `content` getter throws (never read by the loop)", () => ({
	input: throwingGetter({ role: "user", timestamp: 1 }, "content"),
}));

hostile("tool call whose `arguments` getter throws", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [[throwingGetter({ type: "toolCall", id: "c1", name: "t" }, "arguments")]],
}));

hostile("tool call whose `id` getter throws", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [[throwingGetter({ type: "toolCall", name: "t", arguments: {} }, "id")]],
}));

hostile("tool call whose `name` getter throws", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [[throwingGetter({ type: "toolCall", id: "c1", arguments: {} }, "name")]],
}));

hostile("tool result whose `content` getter throws", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: () => throwingGetter({ details: {} }, "content") })],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("tool result whose `isError` getter throws (caught inside the call)", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: () => throwingGetter({ content: [text("x")], details: {} }, "isError") })],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("tool result whose `details` getter throws", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: () => throwingGetter({ content: [text("x")] }, "details") })],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("tool whose `name` getter throws (lookup)", (impl, rec) => ({
	tools: [throwingGetter({ label: "t", description: "d", parameters: OBJ, execute: async () => ({ content: [], details: {} }) }, "name")],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("tool whose `parameters` getter throws (declaration)", (impl, rec) => ({
	tools: [throwingGetter({ name: "t", label: "t", description: "d", execute: async () => ({ content: [], details: {} }) }, "parameters")],
	responses: [[toolCall("c1", "t", {})]],
}), {
	// The reference throws while building the initial system message in the constructor.
	check(o, r) {
		assert.deepEqual(o.constructorThrew, r.constructorThrew);
	},
});

hostile("Agent options with a throwing `convertToLlm` getter", () => ({
	options: throwingGetter({}, "convertToLlm"),
}), {
	check(o, r) {
		assert.deepEqual(o.constructorThrew ?? "constructed", r.constructorThrew ?? "constructed", "the constructor throws like the reference");
	},
});

hostile("Agent options with a throwing `initialState` getter", () => ({
	options: throwingGetter({}, "initialState"),
}), {
	check(o, r) {
		assert.deepEqual(o.constructorThrew ?? "constructed", r.constructorThrew ?? "constructed", "the constructor throws like the reference");
	},
});

hostile("stream options read by a streamFn: the `signal` is a real AbortSignal even with a throwing hook getter", (impl) => {
	const options = { beforeToolCall: undefined };
	return { options };
});

// ---- Proxy objects ----------------------------------------------------------------------

hostile("transparent Proxy as the prompt message", () => ({
	input: new Proxy({ role: "user", content: "hi", timestamp: 1 }, {}),
}));

hostile("revoked Proxy as the prompt message", () => {
	const { proxy, revoke } = Proxy.revocable({ role: "user", content: "hi", timestamp: 1 }, {});
	revoke();
	return { input: proxy };
});

hostile("Proxy tool arguments (1.4.0's structuredClone rejects a Proxy)", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [[toolCall("c1", "t", new Proxy({ a: 1 }, {}))]],
}));

hostile("Proxy whose get trap throws, as tool arguments", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [
		[
			toolCall(
				"c1",
				"t",
				new Proxy(
					{ a: 1 },
					{
						get() {
							throw new Error("trap");
						},
					},
				),
			),
		],
	],
}));

hostile("Proxy tool result", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: () => new Proxy({ content: [text("proxied")], details: { d: 1 } }, {}) })],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("Proxy as a tool's parameters schema", (impl, rec) => ({
	tools: [recTool(rec, "t", { parameters: new Proxy({ type: "object", properties: { a: { type: "number" } } }, {}) })],
	responses: [[toolCall("c1", "t", { a: "5" })]],
}));

// ---- frozen objects ---------------------------------------------------------------------

hostile("frozen prompt message", () => ({
	input: Object.freeze({ role: "user", content: Object.freeze([Object.freeze(text("hi"))]), timestamp: 1 }),
}));

hostile("frozen final assistant message (stamping thinkingLevel on it throws)", (impl) => ({
	streamFn: (model) => {
		const stream = impl.createAssistantMessageEventStream();
		// timestamp below the stream's clock: the stream class itself does not stamp durationMs (§4.3)
		const message = Object.freeze(assistantMessage(model, [text("frozen")], "stop", { timestamp: 1 }));
		queueMicrotask(() => stream.push({ type: "done", reason: "stop", message }));
		return stream;
	},
}), {
	check(o, r) {
		assert.deepEqual(comparable(o), comparable(r));
		const last = o.messages.at(-1);
		assert.equal(last.stopReason, "error");
		assert.match(last.errorMessage, /not extensible|read.only|frozen/i);
	},
});

hostile("sealed final assistant message with tool calls", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	streamFn: (() => {
		let n = 0;
		return (model) => {
			const stream = impl.createAssistantMessageEventStream();
			const message = Object.seal(assistantMessage(model, n++ === 0 ? [toolCall("c1", "t", {})] : [text("ok")], n === 1 ? "toolUse" : "stop", { timestamp: 1 }));
			queueMicrotask(() => stream.push({ type: "done", reason: message.stopReason, message }));
			return stream;
		};
	})(),
}));

hostile("frozen tool result and frozen arguments", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: () => Object.freeze({ content: Object.freeze([Object.freeze(text("r"))]), details: Object.freeze({ a: 1 }) }) })],
	responses: [[Object.freeze(toolCall("c1", "t", Object.freeze({ x: Object.freeze([1, 2]) })))]],
}));

hostile("frozen transcript in initialState", () => ({
	initialState: { messages: Object.freeze([Object.freeze({ role: "user", content: "earlier", timestamp: 1 })]) },
}));

// ---- cycles, BigInt, Symbols -------------------------------------------------------------

hostile("cyclic tool result details", (impl, rec) => ({
	tools: [
		recTool(rec, "t", {
			result: () => {
				const details = { name: "loop" };
				details.self = details;
				return { content: [text("cyclic")], details };
			},
		}),
	],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("cyclic tool arguments", (impl, rec) => {
	const args = { a: 1 };
	args.self = args;
	return { tools: [recTool(rec, "t")], responses: [[toolCall("c1", "t", args)]] };
}, {
	check(o, r) {
		// structuredClone copies the cycle; ours cannot represent it and must say so (one error result, no trap)
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.ok(res, "ours answers the call");
		if (JSON.stringify(comparable(o)) !== JSON.stringify(comparable(r))) {
			assert.equal(res.isError, true, "ours: an error result when the arguments cannot be copied");
			assert.match(res.content[0].text, /cycl|deep/i);
		}
	},
});

hostile("deeply nested tool arguments (10,000 levels)", (impl, rec) => {
	let args = {};
	for (let i = 0; i < 10000; i++) args = { a: args };
	return { tools: [recTool(rec, "t", { result: () => ({ content: [text("deep")], details: {} }) })], responses: [[toolCall("c1", "t", args)]] };
}, {
	check(o, r) {
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.ok(res, "ours answers the call");
		assert.deepEqual(o.events, r.events);
	},
});

hostile("BigInt in tool arguments", (impl, rec) => ({
	tools: [recTool(rec, "t", { parameters: { type: "object", properties: { n: { type: "integer" } } } })],
	responses: [[toolCall("c1", "t", { n: 10n })]],
}));

hostile("BigInt in tool arguments, schema accepts anything", (impl, rec) => ({
	tools: [recTool(rec, "t", { parameters: { type: "object" } })],
	responses: [[toolCall("c1", "t", { n: 10n })]],
}));

hostile("BigInt in tool result details", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: () => ({ content: [text("big")], details: { n: 2n ** 80n } }) })],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("Symbol-keyed and Symbol-valued tool arguments", (impl, rec) => ({
	tools: [recTool(rec, "t"), recTool(rec, "u")],
	responses: [[toolCall("c1", "t", { a: 1, [Symbol("hidden")]: 2 }), toolCall("c2", "u", { s: Symbol("value") })]],
}));

hostile("function-valued tool arguments", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [[toolCall("c1", "t", { f() {} })]],
}));

/** What `execute` got, in words a comparison sees: each value's kind, `undefined` members and holes included. */
const kinds = (p) =>
	p === undefined
		? "undefined"
		: Object.entries(p)
				.map(([k, v]) => `${k}:${v === undefined ? "undefined" : Object.prototype.toString.call(v)}${Array.isArray(v) ? `[${v.length}; ${Object.keys(v).length} set]` : ""}`)
				.join(",") + ` keys=${Object.keys(p).join("|")}`;
const kindsTool = (rec, name, extra = {}) => recTool(rec, name, { result: (p) => ({ content: [text(kinds(p))], details: {} }), ...extra });
const exotic = () => ({ d: new Date(0), m: new Map([[1, 2]]), b: new Uint8Array([1, 2]), s: new Set([1]) });

hostile("Date, Map and typed array in tool arguments", (impl, rec) => ({
	tools: [kindsTool(rec, "t")],
	responses: [[toolCall("c1", "t", exotic())]],
}));

hostile("Date, Map and typed array returned by prepareArguments", (impl, rec) => ({
	tools: [kindsTool(rec, "t", { prepareArguments: () => exotic() })],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("undefined members and holes from prepareArguments", (impl, rec) => ({
	tools: [kindsTool(rec, "t", { prepareArguments: (a) => ({ ...a, u: undefined, holes: [1, , 3] }) })],
	responses: [[toolCall("c1", "t", { a: 1 })]],
}));

hostile("prepareArguments returns undefined", (impl, rec) => ({
	tools: [kindsTool(rec, "t", { parameters: {}, prepareArguments: () => undefined }), kindsTool(rec, "u", { prepareArguments: () => undefined })],
	responses: [[toolCall("c1", "t", { a: 1 }), toolCall("c2", "u", { a: 1 })]],
}));

hostile("a Date where the schema coerces (a string property)", (impl, rec) => ({
	tools: [kindsTool(rec, "t", { parameters: { type: "object", properties: { n: { type: "number" } } } })],
	responses: [[toolCall("c1", "t", { n: "5", d: new Date(0) })]],
}), {
	check(o, r) {
		// 1.4.0 coerces in place and keeps the Date; ours cannot coerce a JSON copy faithfully: a clear error result
		assert.deepEqual(r.params.length, 1);
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.equal(res.isError, true);
		assert.match(res.content[0].text, /^Tool arguments hold values JSON cannot carry/);
		assert.deepEqual(o.params, []);
	},
});

hostile("an array with a length of 2**32 - 1 in tool arguments (ours only: 1.4.0's clone is walked by the recording tool)", (impl, rec) => ({
	tools: [kindsTool(rec, "t")],
	responses: [[toolCall("c1", "t", { big: Object.assign([], { length: 2 ** 32 - 1 }) })]],
}), {
	oursOnly: true,
	check(o) {
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.deepEqual(res.content, [{ text: "Tool arguments hold an array too long to validate." }]);
	},
});

hostile("an array with a huge length in tool arguments", (impl, rec) => ({
	tools: [kindsTool(rec, "t")],
	responses: [[toolCall("c1", "t", { big: Object.assign([], { length: 2 ** 25 }) })]],
}), {
	check(o, r) {
		// 1.4.0 clones it (sparse) and its object schema never walks it; ours refuses to walk 33 million holes
		assert.equal(r.params.length, 1);
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.equal(res.isError, true);
		assert.deepEqual(res.content, [{ text: "Tool arguments hold an array too long to validate." }]);
	},
});

// ---- __proto__ / constructor keys ----------------------------------------------------------

const protoArgs = () => JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "ok": 1}');

hostile("__proto__ and constructor keys in tool arguments (schema without properties)", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: (p) => ({ content: [text(`own keys ${Object.keys(p).join(",")}; proto ok ${Object.getPrototypeOf(p) === Object.prototype}`)], details: {} }) })],
	responses: [[toolCall("c1", "t", protoArgs())]],
}));

hostile("__proto__ and constructor keys with a coercing schema", (impl, rec) => ({
	tools: [
		recTool(rec, "t", {
			parameters: {
				type: "object",
				properties: { __proto__: { type: "object", properties: { polluted: { type: "boolean" } } }, constructor: { type: "object" }, ok: { type: "string" } },
				additionalProperties: { type: "string" },
			},
			result: (p) => ({ content: [text(`own keys ${Object.keys(p).join(",")}; proto ok ${Object.getPrototypeOf(p) === Object.prototype}`)], details: {} }),
		}),
	],
	responses: [[toolCall("c1", "t", protoArgs())]],
}));

hostile("__proto__ keys through streamProxy partial JSON", (impl, rec) => {
	// a toolcall stream whose deltas carry __proto__ members (parsed incrementally)
	return {
		tools: [recTool(rec, "t")],
		streamFn: (() => {
			let n = 0;
			return (model) => {
				const stream = impl.createAssistantMessageEventStream();
				const first = n++ === 0;
				const call = toolCall("c1", "t", protoArgs());
				const message = assistantMessage(model, first ? [call] : [text("ok")], first ? "toolUse" : "stop");
				queueMicrotask(() => {
					stream.push({ type: "start", partial: { ...message, content: [] } });
					if (first) {
						stream.push({ type: "toolcall_start", contentIndex: 0, partial: { ...message, content: [toolCall("c1", "t", {})] } });
						stream.push({ type: "toolcall_delta", contentIndex: 0, delta: '{"__proto__": {"polluted": "yes"}', partial: { ...message, content: [toolCall("c1", "t", JSON.parse('{"__proto__": {"polluted": "yes"}}'))] } });
						stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: message });
					}
					stream.push({ type: "done", reason: message.stopReason, message });
				});
				return stream;
			};
		})(),
	};
});

// ---- streamProxy: deep and huge streamed arguments (the partial-JSON parser and its JS mirror) ------

const sseRoutes = {};
const sseServer = await startSseServer(sseRoutes);
test.after(async () => sseServer.close());

function proxyCase(deltas) {
	return (impl, rec) => {
		let first = true;
		return {
			tools: [recTool(rec, "t", { result: (p) => ({ content: [text(`type ${Array.isArray(p) ? "array" : typeof p}`)], details: {} }) })],
			streamFn: (model, context, options) => {
				const lines = first
					? [
							{ type: "start" },
							{ type: "toolcall_start", contentIndex: 0, id: "c1", toolName: "t" },
							...deltas.map((delta) => ({ type: "toolcall_delta", contentIndex: 0, delta })),
							{ type: "done", reason: "toolUse", usage: zeroUsage() },
						]
					: [{ type: "start" }, { type: "done", reason: "stop", usage: zeroUsage() }];
				first = false;
				const route = `/r${Math.random().toString(36).slice(2)}`;
				sseRoutes[`${route}/api/stream`] = { lines, chunking: "item" };
				return impl.module.streamProxy(model, context, { proxyUrl: `${sseServer.url}${route}`, authToken: "t", signal: options?.signal });
			},
		};
	};
}

hostile("streamProxy tool-call arguments: 100,000 nested arrays", proxyCase(["[".repeat(100_000)]), {
	check(o, r) {
		// 1.4.0 ends the run with stopReason 'error'; ours parses the arguments, and the call fails
		// validation with an error result: no tool ever sees nesting cut short.
		assert.equal(r.messages.at(-1).stopReason, "error");
		assert.deepEqual(o.params, [], "the tool does not run");
		const res = o.messages.find((m) => m.role === "toolResult");
		assert.equal(res.isError, true);
		assert.match(res.content[0].text, /nested too deeply/);
	},
});

hostile("streamProxy tool-call arguments: garbage, control characters and lone surrogates", proxyCase(['{"a":"\\ud800', "\u0001\u0000", '\\x", "b": [1e, tru', "\ud83d"]), {
	check(o, r) {
		assert.deepEqual(o.events.filter((e) => e !== "message_update"), r.events.filter((e) => e !== "message_update"), "same events (updates aside)");
		assert.deepEqual(o.messages.map((m) => [m.role, m.stopReason, m.isError]), r.messages.map((m) => [m.role, m.stopReason, m.isError]));
	},
});

// The reference re-parses the whole text on every delta (quadratic: minutes for these); ours only.
hostile("streamProxy tool-call arguments: 100,000 nested objects, 2,000 deltas (ours only)", proxyCase(Array.from({ length: 2000 }, () => '{"a":'.repeat(50))), {
	oursOnly: true,
	ms: 20_000,
	check(o) {
		assert.equal(o.messages.filter((m) => m.role === "toolResult").length, 1);
	},
});

hostile("streamProxy tool-call arguments: a 2 MB string in 1 KB deltas (ours only)", proxyCase(['{"s":"', ...Array.from({ length: 2048 }, () => "z".repeat(1024)), '"}']), {
	oursOnly: true,
	ms: 20_000,
	check(o) {
		assert.deepEqual(o.params.length, 1);
		assert.equal(o.messages.find((m) => m.role === "toolResult").content[0].text, "type object");
	},
});

// ---- size --------------------------------------------------------------------------------

const TEN_MB = 10 * 1024 * 1024;

hostile("10 MB prompt message and 10 MB tool result and arguments", (impl, rec) => {
	const big = "x".repeat(TEN_MB);
	return {
		input: big,
		tools: [recTool(rec, "t", { parameters: { type: "object", properties: { s: { type: "string", minLength: 1 } } }, result: (p) => ({ content: [text(p.s.toUpperCase())], details: {} }) })],
		responses: [(context) => [toolCall("c1", "t", { s: context.messages.at(-1).content[0].text })]],
	};
}, {
	check(o, r) {
		assert.deepEqual(comparable(o), comparable(r));
		assert.deepEqual(o.messages.find((m) => m.role === "toolResult").content, [{ text: `<${TEN_MB} chars>` }]);
	},
});

hostile("10 MB of streamed tool-call argument deltas", (impl, rec) => ({
	tools: [recTool(rec, "t", { result: (p) => ({ content: [text(`len ${p.s.length}`)], details: {} }) })],
	streamFn: (() => {
		let n = 0;
		return (model) => {
			const stream = impl.createAssistantMessageEventStream();
			const first = n++ === 0;
			const s = "y".repeat(TEN_MB);
			const call = toolCall("c1", "t", { s });
			const message = assistantMessage(model, first ? [call] : [text("ok")], first ? "toolUse" : "stop");
			queueMicrotask(() => {
				stream.push({ type: "start", partial: { ...message, content: [] } });
				if (first) {
					stream.push({ type: "toolcall_start", contentIndex: 0, partial: { ...message, content: [toolCall("c1", "t", {})] } });
					const chunk = 1 << 20;
					const json = JSON.stringify({ s });
					for (let i = 0; i < json.length; i += chunk) {
						stream.push({ type: "toolcall_delta", contentIndex: 0, delta: json.slice(i, i + chunk), partial: { ...message, content: [toolCall("c1", "t", {})] } });
					}
					stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: message });
				}
				stream.push({ type: "done", reason: message.stopReason, message });
			});
			return stream;
		};
	})(),
}));

hostile("1,000 tools, the last one called", (impl, rec) => {
	const tools = [];
	for (let i = 0; i < 1000; i++) {
		tools.push(recTool(rec, `tool_${i}`, { parameters: { type: "object", properties: { i: { type: "integer", minimum: 0 }, tag: { type: "string", enum: ["a", "b"] } }, required: ["i"] } }));
	}
	return { tools, responses: [[toolCall("c1", "tool_999", { i: "999", tag: "a" })]] };
}, {
	check(o, r) {
		assert.deepEqual(comparable(o), comparable(r));
		assert.equal(o.messages[0].toolsAdded, 1000);
		assert.deepEqual(o.params, [{ i: 999, tag: "a" }]);
	},
});

hostile("10,000-message transcript", (impl) => {
	const messages = [];
	for (let i = 0; i < 5000; i++) {
		messages.push({ role: "user", content: `q${i}`, timestamp: i });
		messages.push(assistantMessage(MODEL, [text(`a${i}`)], "stop", { timestamp: i }));
	}
	return {
		initialState: { messages, systemPrompt: "sys" },
		responses: [(context) => [text(`seen ${context.messages.length}`)]],
		async after(agent) {
			agent.state.messages.push({ role: "user", content: "again", timestamp: 1 });
			await agent.continue();
			const continued = agent.state.messages.at(-1).content[0].text;
			agent.reset();
			return { continued, afterReset: agent.state.messages.length };
		},
	};
}, {
	check(o, r) {
		assert.deepEqual(comparable(o), comparable(r));
		assert.equal(o.messages.length, 10003);
	},
});

// ---- tool-call ids --------------------------------------------------------------------------

hostile("non-string tool-call ids (number, object, null, undefined)", (impl, rec) => ({
	// The model's own ids: no strict provider would take them, whatever the loop does.
	strict: false,
	tools: [recTool(rec, "t")],
	responses: [[toolCall(42, "t", {}), toolCall({ id: "obj" }, "t", {}), toolCall(null, "t", {}), toolCall(undefined, "t", {})]],
}));

hostile("duplicate tool-call ids (parallel)", (impl, rec) => ({
	// The model's own ids: no strict provider would take them, whatever the loop does.
	strict: false,
	tools: [recTool(rec, "t", { result: (p) => ({ content: [text(`n=${p.n}`)], details: {} }) })],
	responses: [[toolCall("dup", "t", { n: 1 }), toolCall("dup", "t", { n: 2 })]],
}));

hostile("duplicate tool-call ids (sequential)", (impl, rec) => ({
	options: { toolExecution: "sequential" },
	// The model's own ids: no strict provider would take them, whatever the loop does.
	strict: false,
	tools: [recTool(rec, "t", { result: (p) => ({ content: [text(`n=${p.n}`)], details: {} }) })],
	responses: [[toolCall("dup", "t", { n: 1 }), toolCall("dup", "t", { n: 2 })]],
}));

hostile("tool call with a non-string name and an unknown name", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	responses: [[toolCall("c1", 42, {}), toolCall("c2", "nope", {}), toolCall("c3", undefined, {})]],
}));

// ---- stream functions that misbehave -----------------------------------------------------------

hostile("streamFn throws synchronously", () => ({ streamFn: () => { throw new Error("sync boom"); } }));
hostile("streamFn throws a non-Error", () => ({ streamFn: () => { throw { code: 7 }; } }));
hostile("streamFn rejects", () => ({ streamFn: async () => { throw new TypeError("async boom"); } }));
hostile("streamFn rejects with undefined", () => ({ streamFn: () => Promise.reject(undefined) }));
hostile("streamFn returns undefined", () => ({ streamFn: () => undefined }));
hostile("streamFn returns a number", () => ({ streamFn: () => 42 }));
hostile("streamFn returns a plain object", () => ({ streamFn: () => ({ result: () => Promise.resolve(undefined) }) }));
hostile("streamFn returns a promise of a non-stream", () => ({ streamFn: async () => "not a stream" }));

hostile("stream iterator throws on next()", () => ({
	streamFn: () => ({
		[Symbol.asyncIterator]: () => ({
			next: () => Promise.reject(new Error("next failed")),
		}),
		result: () => new Promise(() => {}),
	}),
}));

hostile("stream iterator without next()", () => ({
	streamFn: () => ({ [Symbol.asyncIterator]: () => ({}), result: () => new Promise(() => {}) }),
}));

// `for await` reads `next` once, when the loop starts: a stream that swaps it later is still read
// through the first one.
hostile("stream iterator that replaces its next() after the first event", (impl) => ({
	streamFn: (model) => {
		const events = [
			{ type: "start", partial: assistantMessage(model, []) },
			{ type: "done", reason: "stop", message: assistantMessage(model, [text("first next")]) },
		];
		const iterator = {
			next() {
				iterator.next = () => Promise.resolve({ value: { type: "done", reason: "stop", message: assistantMessage(model, [text("second next")]) }, done: false });
				const value = events.shift();
				return Promise.resolve(value ? { value, done: false } : { value: undefined, done: true });
			},
		};
		return { [Symbol.asyncIterator]: () => iterator, result: async () => assistantMessage(model, [text("first next")]) };
	},
}));

hostile("stream ends without a terminal event, with a result", (impl) => ({
	streamFn: (model) => {
		const stream = impl.createAssistantMessageEventStream();
		queueMicrotask(() => stream.end(assistantMessage(model, [text("ended")])));
		return stream;
	},
}));

hostile("stream ends without a terminal event and without a result (the reference hangs)", (impl) => ({
	streamFn: () => {
		const stream = impl.createAssistantMessageEventStream();
		queueMicrotask(() => stream.end());
		return stream;
	},
}), { refHangs: true });

hostile("result() rejects", () => ({
	streamFn: (model) => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "done", reason: "stop", message: assistantMessage(model, [text("x")]) };
		},
		result: () => Promise.reject(new Error("result failed")),
	}),
}));

hostile("result() resolves to undefined", () => ({
	streamFn: (model) => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "done", reason: "stop", message: assistantMessage(model, [text("x")]) };
		},
		result: () => Promise.resolve(undefined),
	}),
}));

hostile("result() resolves to a number", () => ({
	streamFn: (model) => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "done", reason: "stop", message: assistantMessage(model, [text("x")]) };
		},
		result: () => Promise.resolve(7),
	}),
}));

hostile("events out of order: deltas before start, done before start, events after done", (impl) => ({
	streamFn: (model) => {
		const stream = impl.createAssistantMessageEventStream();
		const message = assistantMessage(model, [text("final")]);
		queueMicrotask(() => {
			stream.push({ type: "text_delta", contentIndex: 0, delta: "early", partial: message });
			stream.push({ type: "done", reason: "stop", message });
			stream.push({ type: "start", partial: message });
			stream.push({ type: "text_delta", contentIndex: 0, delta: "late", partial: message });
		});
		return stream;
	},
}));

hostile("events with missing or garbage fields", (impl) => ({
	streamFn: (model) => {
		const message = assistantMessage(model, [text("final")]);
		return {
			async *[Symbol.asyncIterator]() {
				yield null;
				yield 42;
				yield { type: 42 };
				yield { type: "start" };
				yield { type: "text_delta" };
				yield { type: "text_delta", partial: null };
				yield { type: "unknown_event", partial: message };
				yield { type: "done", reason: "stop", message };
			},
			result: () => Promise.resolve(message),
		};
	},
}));

hostile("event getter `type` throws", (impl) => ({
	streamFn: (model) => {
		const message = assistantMessage(model, [text("final")]);
		return {
			async *[Symbol.asyncIterator]() {
				yield throwingGetter({}, "type");
				yield { type: "done", reason: "stop", message };
			},
			result: () => Promise.resolve(message),
		};
	},
}));

hostile("start partial is not an object", () => ({
	streamFn: (model) => {
		const message = assistantMessage(model, [text("final")]);
		return {
			async *[Symbol.asyncIterator]() {
				yield { type: "start", partial: "nope" };
				yield { type: "text_delta", partial: 5 };
				yield { type: "done", reason: "stop", message };
			},
			result: () => Promise.resolve(message),
		};
	},
}));

hostile("final message is not an object (null)", () => ({
	streamFn: () => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "done", reason: "stop", message: null };
		},
		result: () => Promise.resolve(null),
	}),
}));

hostile("final message content is not an array", (impl) => ({
	streamFn: (model) => {
		const stream = impl.createAssistantMessageEventStream();
		const message = assistantMessage(model, "just a string");
		queueMicrotask(() => stream.push({ type: "done", reason: "stop", message }));
		return stream;
	},
}));

hostile("final message content holds null and non-object blocks", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	streamFn: (() => {
		let n = 0;
		return (model) => {
			const stream = impl.createAssistantMessageEventStream();
			const message = assistantMessage(model, n++ === 0 ? [null, 5, "s", toolCall("c1", "t", {})] : [text("ok")], n === 1 ? "toolUse" : "stop");
			queueMicrotask(() => stream.push({ type: "done", reason: message.stopReason, message }));
			return stream;
		};
	})(),
}));

// ---- tools and hooks: non-Error throws and wrong shapes ----------------------------------------

for (const [label, value] of [
	["a string", "plain string"],
	["a number", 42],
	["null", null],
	["undefined", undefined],
	["an object with message", { message: "object message" }],
	["a Symbol", Symbol("sym")],
	["a BigInt", 12n],
	["an object whose toString throws", { toString() { throw new Error("toString threw"); } }],
]) {
	hostile(`tool execute throws ${label}`, (impl, rec) => ({
		tools: [{ ...recTool(rec, "t"), execute: async () => { throw value; } }],
		responses: [[toolCall("c1", "t", {})]],
	}));
	hostile(`beforeToolCall throws ${label}`, (impl, rec) => ({
		tools: [recTool(rec, "t")],
		options: { beforeToolCall: async () => { throw value; } },
		responses: [[toolCall("c1", "t", {})]],
	}));
	hostile(`transformContext throws ${label}`, () => ({
		options: { transformContext: async () => { throw value; } },
	}));
}

for (const [label, value] of [
	["undefined", undefined],
	["null", null],
	["a number", 42],
	["a string", "result"],
	["content as a string", { content: "not an array", details: {} }],
	["content with junk blocks", { content: [null, 5, { type: "image" }], details: {} }],
	["an array", [1, 2]],
	["a thenable that rejects with a non-Error", { then: (_, rej) => rej("nope") }],
]) {
	hostile(`tool execute returns ${label}`, (impl, rec) => ({
		tools: [{ ...recTool(rec, "t"), execute: async () => value }],
		responses: [[toolCall("c1", "t", {})]],
	}));
}

for (const [hook, value] of [
	["beforeToolCall", 42],
	["beforeToolCall", "block"],
	["beforeToolCall", { block: "yes", reason: 42 }],
	["afterToolCall", 42],
	["afterToolCall", { content: 5, details: null, isError: "yes" }],
	["afterToolCall", { content: "text" }],
	["prepareRequest", 42],
	["prepareRequest", { context: "nope" }],
	["prepareRequest", { model: 5 }],
	["finishTurn", { action: 5 }],
	["finishTurn", "end"],
	["getApiKey", 42],
	["convertToLlm", "not an array"],
	["convertToLlm", undefined],
	["transformContext", undefined],
	["transformContext", "string"],
]) {
	hostile(`${hook} returns ${JSON.stringify(value) ?? String(value)}`, (impl, rec) => ({
		tools: [recTool(rec, "t")],
		options: { [hook]: async () => value },
		// convertToLlm's messages go to the stream function as they are (not an array, here).
		strict: hook !== "convertToLlm",
		responses: [[toolCall("c1", "t", {})], [{ type: "text", text: "second" }]],
	}));
}

hostile("prepareNextTurnWithContext returns messages as a string", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	options: { prepareNextTurnWithContext: () => ({ messages: "xy" }) },
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("prepareNextTurnWithContext returns a numeric thinkingLevel and a bad context", (impl, rec) => ({
	tools: [recTool(rec, "t")],
	options: { prepareNextTurnWithContext: () => ({ thinkingLevel: 3, context: { messages: "nope" } }) },
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("prepareArguments throws a non-Error and returns garbage", (impl, rec) => ({
	tools: [recTool(rec, "t", { prepareArguments: () => { throw 7; } }), recTool(rec, "u", { prepareArguments: () => 42, parameters: { type: "object" } })],
	responses: [[toolCall("c1", "t", {}), toolCall("c2", "u", {})]],
}));

hostile("onUpdate called with garbage and after the tool settled", (impl, rec) => {
	let late;
	return {
		tools: [
			{
				...recTool(rec, "t"),
				execute: async (id, params, signal, onUpdate) => {
					onUpdate(undefined);
					onUpdate(42);
					late = onUpdate;
					return { content: [text("ok")], details: {} };
				},
			},
		],
		responses: [[toolCall("c1", "t", {})]],
		after() {
			late?.({ content: [text("late")] });
			return "late update ignored";
		},
	};
});

hostile("tool whose execute is not a function", (impl, rec) => ({
	tools: [{ name: "t", label: "t", description: "d", parameters: OBJ, execute: "nope" }],
	responses: [[toolCall("c1", "t", {})]],
}));

hostile("tools list holds null and a number", (impl, rec) => ({
	tools: [null, 5, recTool(rec, "t")],
	responses: [[toolCall("c1", "t", {})]],
}), {
	check(o, r) {
		// the reference throws building the system message (reads .name of null) in the constructor
		assert.deepEqual(o.constructorThrew, r.constructorThrew);
	},
});

// ---- arguments that are not objects ------------------------------------------------------

for (const [label, args] of [
	["a string", "string args"],
	["a number", 42],
	["null", null],
	["undefined", undefined],
	["an array", [1, 2]],
	["a JSON string of an object", '{"a":1}'],
]) {
	hostile(`tool arguments are ${label}`, (impl, rec) => ({
		tools: [recTool(rec, "t"), recTool(rec, "any", { parameters: {} })],
		responses: [[toolCall("c1", "t", args), toolCall("c2", "any", args)]],
	}));
}

// ---- schemas the validator does not know ---------------------------------------------------

for (const [label, parameters, args] of [
	["an unknown keyword", { type: "object", "x-custom": { deep: true }, properties: { a: { type: "number", "x-unit": "ms" } } }, { a: "5" }],
	["an unknown format", { type: "object", properties: { a: { type: "string", format: "made-up-format" } } }, { a: "x" }],
	["an unknown type name", { type: "object", properties: { a: { type: "weird" } } }, { a: 1 }],
	["type as a number", { type: 5 }, { a: 1 }],
	["a dangling $ref", { type: "object", properties: { a: { $ref: "#/definitions/missing" } } }, { a: 1 }],
	["a recursive $ref", { $id: "n", type: "object", properties: { next: { $ref: "#" } } }, { next: { next: { next: {} } } }],
	["an invalid regex pattern", { type: "object", properties: { a: { type: "string", pattern: "([a-z" } } }, { a: "x" }],
	["a lookbehind regex pattern", { type: "object", properties: { a: { type: "string", pattern: "(?<=a)b" } } }, { a: "ab" }],
	["a huge minLength", { type: "object", properties: { a: { type: "string", minLength: 1e308 } } }, { a: "x" }],
	["a negative multipleOf", { type: "object", properties: { a: { type: "number", multipleOf: -0.1 } } }, { a: 0.3 }],
	["items as a number", { type: "array", items: 5 }, [1]],
	["required as a string", { type: "object", required: "a" }, {}],
	["properties as an array", { type: "object", properties: [{ type: "string" }] }, { 0: 1 }],
	["null parameters", null, {}],
	["boolean parameters", true, {}],
	["a string as parameters", "object", {}],
]) {
	hostile(`schema with ${label}`, (impl, rec) => ({
		tools: [recTool(rec, "t", { parameters })],
		responses: [[toolCall("c1", "t", args)]],
	}));
}

hostile("tool parameters undefined (declaration cannot be serialised)", (impl, rec) => ({
	tools: [recTool(rec, "t", { parameters: undefined })],
	responses: [[toolCall("c1", "t", {})]],
}), {
	check(o, r) {
		// the reference throws in the constructor (initial system message); ours must do the same or end cleanly
		assert.deepEqual(o.constructorThrew, r.constructorThrew);
	},
});

hostile("cyclic tool parameters", (impl, rec) => {
	const parameters = { type: "object", properties: {} };
	parameters.properties.self = parameters;
	return { tools: [recTool(rec, "t", { parameters })], responses: [[toolCall("c1", "t", {})]] };
}, {
	check(o, r) {
		assert.deepEqual(o.constructorThrew, r.constructorThrew);
	},
});

hostile("tools added mid-run with a cyclic schema (declaration fails inside the loop)", (impl, rec) => {
	const parameters = { type: "object", properties: {} };
	parameters.properties.self = parameters;
	const bad = recTool(rec, "bad", { parameters });
	return {
		tools: [recTool(rec, "t")],
		options: { prepareNextTurnWithContext: (ctx) => ({ context: { ...ctx.context, tools: [...ctx.context.tools, bad] } }) },
		responses: [[toolCall("c1", "t", {})]],
	};
});

// ---- the whole suite leaves the module usable ------------------------------------------------

test("hostile: after every case a plain prompt still works on a new Agent", { timeout: 10_000 }, async () => {
	const out = await runCase(ours, (impl) => ({ responses: [[{ type: "text", text: "fine" }]] }), OURS_MS);
	assert.deepEqual(cleanEndProblems(out), []);
	assert.deepEqual(out.messages.at(-1), { role: "assistant", stopReason: "stop", errorMessage: undefined, content: [{ text: "fine" }] });
	assert.deepEqual(trapProblems(out), []);
	assertNoPollution("end");
});

export { zeroUsage, responsesStream };
