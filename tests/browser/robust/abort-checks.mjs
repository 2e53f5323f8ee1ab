// The checks of tests/js/robust/abort-hooks.test.mjs in a form that runs in a page as well as in
// Node (no Node imports): code ignoring the abort at every call site, thrown values that cannot
// be turned into text, listeners failing on `agent_end`, and tool arguments JSON cannot carry;
// each on the default path and with every other hook set. `runAbortChecks(pkg)` returns the failures (empty when all pass).
// Every context the scripted stream function receives must be valid for a strict provider.
import { strictProblems } from "../../support/strict-transcript.mjs";

const MODEL = { id: "m", name: "m", api: "faux", provider: "faux", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const UNCONVERTIBLE = "a thrown value that cannot be converted to a string";
const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const call = (id, name) => ({ type: "toolCall", id, name, arguments: {} });
const message = (content, stopReason, extra = {}) => ({ role: "assistant", content, api: "faux", provider: "faux", model: "m", usage: USAGE, stopReason, timestamp: 1, ...extra });
const macrotask = () => new Promise((r) => setTimeout(r, 0));

function stream(pkg, responses, problems) {
	let i = 0;
	return (model, context, options) => {
		for (const p of strictProblems(context?.messages)) problems.push(`request ${i + 1} is invalid for a strict provider: ${p}`);
		const s = pkg.createAssistantMessageEventStream();
		const content = responses[i++] ?? [{ type: "text", text: "done" }];
		queueMicrotask(() => {
			if (options?.signal?.aborted) return s.push({ type: "error", reason: "aborted", error: message([], "aborted", { errorMessage: "Request was aborted" }) });
			const m = message(content, content.some((c) => c.type === "toolCall") ? "toolUse" : "stop");
			s.push({ type: "start", partial: { ...m, content: [] } });
			s.push({ type: "done", reason: m.stopReason, message: m });
		});
		return s;
	};
}

const okTool = (name) => ({ name, label: name, description: name, parameters: { type: "object" }, execute: async () => ({ content: [{ type: "text", text: `${name} ok` }], details: {} }) });
const withTool = (options, extra = {}) => ({ options, tools: [okTool("t")], responses: [[call("c1", "t")]], ...extra });

const wellBehaved = () => ({
	transformContext: async (m) => m,
	convertToLlm: async (m) => m.filter((x) => ["user", "assistant", "toolResult"].includes(x.role)),
	getApiKey: async () => "key",
	prepareRequest: async () => undefined,
	beforeToolCall: async () => undefined,
	afterToolCall: async () => undefined,
	finishTurn: async () => undefined,
	prepareNextTurnWithContext: async () => undefined,
});

const IGNORING = {
	transformContext: (h) => ({ options: { transformContext: h } }),
	convertToLlm: (h) => ({ options: { convertToLlm: h } }),
	getApiKey: (h) => ({ options: { getApiKey: h } }),
	prepareRequest: (h) => ({ options: { prepareRequest: h } }),
	finishTurn: (h) => ({ options: { finishTurn: h } }),
	prepareNextTurnWithContext: (h) => withTool({ prepareNextTurnWithContext: h }),
	prepareNextTurn: (h) => withTool({ prepareNextTurn: h, prepareNextTurnWithContext: undefined }),
	beforeToolCall: (h) => withTool({ beforeToolCall: h }),
	afterToolCall: (h) => withTool({ afterToolCall: h }),
	"execute (parallel)": (h) => ({ tools: [{ ...okTool("t"), execute: h }, okTool("u")], responses: [[call("c1", "t"), call("c2", "u")]] }),
	"execute (sequential)": (h) => ({ options: { toolExecution: "sequential" }, tools: [{ ...okTool("t"), execute: h }, okTool("u")], responses: [[call("c1", "t"), call("c2", "u")]] }),
	"streamFn promise": (h) => ({ streamFn: h }),
};

const UNCONVERTIBLES = {
	"a null-prototype object": () => Object.create(null),
	"an Error whose message getter throws": () => Object.defineProperty(new Error("x"), "message", { get() { throw new Error("getter"); } }),
};

const THROWING = {
	prepareRequest: (t) => ({ options: { prepareRequest: t } }),
	transformContext: (t) => ({ options: { transformContext: t } }),
	convertToLlm: (t) => ({ options: { convertToLlm: t } }),
	getApiKey: (t) => ({ options: { getApiKey: t } }),
	finishTurn: (t) => ({ options: { finishTurn: t } }),
	prepareNextTurn: (t) => withTool({ prepareNextTurn: t, prepareNextTurnWithContext: undefined }),
	"synchronous streamFn": (t) => ({ streamFn: t }),
	"listener on message_end": (t) => ({ listener: (e) => (e.type === "message_end" ? t() : undefined) }),
};

const nested = (n) => {
	let v = 1;
	for (let i = 0; i < n; i++) v = { a: v };
	return v;
};
const errorText = (result, text) => (result?.isError === true && result.content?.[0]?.text === text ? undefined : `result ${JSON.stringify(result?.content)}`);
/** Tool arguments JSON cannot carry: `execute` gets them as 1.4.0 does, or a clear error result. */
const ARGUMENT_CASES = {
	"Date, Map, typed array from prepareArguments": {
		prepare: () => ({ d: new Date(0), m: new Map([[1, 2]]), b: new Uint8Array([1, 2]) }),
		expect: ([p]) => (p?.d instanceof Date && p.m instanceof Map && p.m.get(1) === 2 && p.b instanceof Uint8Array && p.b[1] === 2 ? undefined : `execute got ${Object.prototype.toString.call(p?.d)}, ${Object.prototype.toString.call(p?.m)}`),
	},
	"undefined from prepareArguments, schema accepting anything": {
		parameters: {},
		prepare: () => undefined,
		expect: (got) => (got.length === 1 && got[0] === undefined ? undefined : `execute got ${JSON.stringify(got)}`),
	},
	"an undefined member": {
		prepare: () => ({ a: 1, u: undefined }),
		expect: ([p]) => (p && "u" in p && p.u === undefined ? undefined : `execute got keys ${Object.keys(p ?? {})}`),
	},
	"a BigInt": { args: () => ({ n: 1n }), expect: (got, r) => (got.length ? "execute ran" : errorText(r, "Do not know how to serialize a BigInt")) },
	"a huge array length": { args: () => ({ a: Object.assign([], { length: 2 ** 32 - 1 }) }), expect: (got, r) => (got.length ? "execute ran" : errorText(r, "Tool arguments hold an array too long to validate.")) },
	"a function": { args: () => ({ f() {} }), expect: (got, r) => (got.length || r?.isError !== true || !/could not be cloned/.test(r.content[0].text) ? `result ${JSON.stringify(r?.content)}` : undefined) },
	"nesting a recursive $ref cannot validate": {
		parameters: { $id: "r", type: "object", properties: { a: { anyOf: [{ $ref: "r" }, { type: "number" }] } } },
		args: () => nested(200),
		expect: (got, r) => (got.length ? "execute ran" : errorText(r, "Tool arguments are nested too deeply for the schema.")),
	},
};

/** Runs one prompt and returns what went wrong (an empty list when nothing did). */
async function runCase(pkg, c, hooks, expect) {
	const problems = [];
	const agent = new pkg.Agent({ initialState: { model: MODEL, tools: c.tools ?? [] }, streamFn: c.streamFn ?? stream(pkg, c.responses ?? [[{ type: "text", text: "hi" }]], problems), ...(hooks ? wellBehaved() : {}), ...(c.options ?? {}) });
	c.agent = agent;
	const events = [];
	let ended = false;
	agent.subscribe((e) => {
		if (ended) problems.push(`${e.type} delivered after agent_end`);
		events.push(e.type);
		if (e.type === "agent_end") ended = true;
		return c.listener?.(e);
	});
	let rejected;
	const timeout = new Promise((r) => setTimeout(() => r("hang"), 4000));
	const outcome = await Promise.race([agent.prompt("go").then(() => "resolved", (e) => ((rejected = e), "rejected")), timeout]);
	if (outcome === "hang") return ["prompt() hangs after abort()"];
	await c.late?.();
	for (let i = 0; i < 3; i++) await macrotask();
	if (agent.state.isStreaming) problems.push("isStreaming still true");
	const ends = events.filter((t) => t === "agent_end").length;
	if (ends !== 1 || events.at(-1) !== "agent_end") problems.push(`${ends} agent_end, last event ${events.at(-1)}`);
	const messages = agent.state.messages;
	const calls = messages.flatMap((m) => (m.role === "assistant" && m.stopReason === "toolUse" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.id) : []));
	for (const id of calls) {
		const n = messages.filter((m) => m.role === "toolResult" && m.toolCallId === id).length;
		if (n !== 1) problems.push(`tool call ${id} has ${n} results`);
	}
	problems.push(...expect({ outcome, rejected, last: messages.at(-1), messages }));
	return problems;
}

export async function runAbortChecks(pkg) {
	const failures = [];
	const unhandled = [];
	const onUnhandled = (e) => unhandled.push(String(e?.reason?.message ?? e?.reason ?? e));
	const target = typeof window !== "undefined" ? window : undefined;
	const onNodeUnhandled = (r) => unhandled.push(String(r?.message ?? r));
	if (target) target.addEventListener("unhandledrejection", onUnhandled);
	else globalThis.process?.on("unhandledRejection", onNodeUnhandled);
	let count = 0;
	const check = async (name, c, hooks, expect) => {
		count++;
		const problems = await runCase(pkg, c, hooks, expect);
		for (const p of problems) failures.push(`${name} (${hooks ? "with hooks" : "default path"}): ${p}`);
	};
	for (const [site, build] of Object.entries(IGNORING)) {
		for (const hooks of [false, true]) {
			for (const late of ["never", "resolves", "rejects"]) {
				let release;
				const c = build((...args) => {
					c.agent.abort();
					return new Promise((resolve, reject) => (release = () => (late === "rejects" ? reject(new Error("late")) : resolve(undefined))));
				});
				c.late = async () => late !== "never" && release?.();
				await check(`${site} ignores the abort, late ${late}`, c, hooks, ({ outcome, last, messages }) => {
					const p = [];
					if (outcome !== "resolved") p.push(`prompt() ${outcome}`);
					const tool = site.startsWith("execute") || site.endsWith("ToolCall");
					// An aborted tool batch ends the run with its results: no request follows it.
					if (tool ? last?.role !== "toolResult" : last?.stopReason !== "aborted") p.push(`last message ${last?.role} ${last?.stopReason}`);
					const result = messages.find((m) => m.role === "toolResult" && m.toolCallId === "c1");
					if (tool && (result?.isError !== true || result.content?.[0]?.text !== "Operation aborted")) p.push(`c1's result ${JSON.stringify(result?.content)}`);
					if (!tool && last?.errorMessage !== "Operation aborted") p.push(`errorMessage ${last?.errorMessage}`);
					return p;
				});
			}
		}
	}
	for (const [site, build] of Object.entries(THROWING)) {
		for (const [label, make] of Object.entries(UNCONVERTIBLES)) {
			for (const hooks of [false, true]) {
				let thrown = false;
				const c = build(() => {
					if (thrown) return undefined;
					thrown = true;
					throw make();
				});
				await check(`${site} throws ${label}`, c, hooks, ({ outcome, last }) =>
					outcome === "resolved" && last?.stopReason === "error" && last.errorMessage === UNCONVERTIBLE ? [] : [`prompt() ${outcome}, last ${last?.stopReason} ${last?.errorMessage}`],
				);
			}
		}
	}
	for (const hooks of [false, true]) {
		const error = new Error("agent_end listener");
		await check("a listener throws on agent_end", { listener: (e) => { if (e.type === "agent_end") throw error; } }, hooks, ({ outcome, rejected, last }) =>
			outcome === "rejected" && rejected === error && last?.stopReason === "stop" ? [] : [`prompt() ${outcome}, last ${last?.stopReason}`],
		);
	}
	for (const [name, c] of Object.entries(ARGUMENT_CASES)) {
		for (const hooks of [false, true]) {
			count++;
			const got = [];
			const tool = { ...okTool("t"), parameters: c.parameters ?? { type: "object" }, prepareArguments: c.prepare, execute: async (id, params) => (got.push(params), { content: [{ type: "text", text: "ran" }], details: {} }) };
			if (!c.prepare) delete tool.prepareArguments;
			const agent = new pkg.Agent({ initialState: { model: MODEL, tools: [tool] }, streamFn: stream(pkg, [[{ ...call("c1", "t"), arguments: c.args?.() ?? {} }]]), ...(hooks ? wellBehaved() : {}) });
			await agent.prompt("go");
			const result = agent.state.messages.find((m) => m.role === "toolResult");
			const problem = c.expect(got, result);
			if (problem) failures.push(`arguments: ${name} (${hooks ? "with hooks" : "default path"}): ${problem}`);
		}
	}
	await macrotask();
	if (target) target.removeEventListener("unhandledrejection", onUnhandled);
	else globalThis.process?.off("unhandledRejection", onNodeUnhandled);
	if (unhandled.length) failures.push(`unhandled rejections: ${unhandled.join(" | ")}`);
	return { count, failures };
}
