// Panic isolation: a failure on one Agent (a tool, hook or listener failure, or a
// hostile value, including the ones that currently break the failing Agent) must
// leave every other Agent in the same wasm module working: one created before the
// failure and idle, one running concurrently through the failure, and one created
// after it. A Rust panic would poison the whole module (every later call traps),
// so this also checks that no failure below panics.
import { test } from "node:test";
import { MODEL } from "../support/scripted.mjs";
import { toolCall } from "./hostile-support.mjs";
import { assert, assertRunsAgain, assistantMessage, blocksStream, isWasmTrap, ours, settle, sleep, textStream, trackUnhandled, within } from "./support.mjs";

const impl = ours;

const tool = (name, execute, extra = {}) => ({ name, label: name, description: name, parameters: { type: "object" }, execute, ...extra });
const okTool = (name, ms = 0) =>
	tool(name, async () => {
		if (ms) await sleep(ms);
		return { content: [{ type: "text", text: `${name} ok` }], details: {} };
	});
const throwing = (key) =>
	Object.defineProperty({}, key, {
		enumerable: true,
		get() {
			throw new Error(`${key} getter`);
		},
	});

/** Each failure runs on its own Agent; `recovers` says whether that Agent itself must work afterwards. */
const FAILURES = {
	"tool throws an Error": { tools: [tool("t", async () => { throw new Error("tool failed"); })], responses: [[toolCall("c1", "t", {})]], recovers: true },
	"tool throws a string": { tools: [tool("t", async () => { throw "tool string"; })], responses: [[toolCall("c1", "t", {})]], recovers: true },
	"tool returns undefined": { tools: [tool("t", async () => undefined)], responses: [[toolCall("c1", "t", {})]], recovers: true },
	"beforeToolCall throws": { tools: [okTool("t")], options: { beforeToolCall: () => { throw new Error("before"); } }, responses: [[toolCall("c1", "t", {})]], recovers: true },
	"afterToolCall throws": { tools: [okTool("t")], options: { afterToolCall: () => { throw new Error("after"); } }, responses: [[toolCall("c1", "t", {})]], recovers: true },
	"convertToLlm throws": { options: { convertToLlm: () => { throw new Error("convert"); } }, recovers: false },
	"transformContext rejects": { options: { transformContext: () => Promise.reject(new Error("transform")) }, recovers: false },
	"listener throws on message_end": { listener: (e) => { if (e.type === "message_end") throw new Error("listener"); }, recovers: false },
	"listener rejects on tool_execution_update": {
		tools: [tool("t", async (id, p, s, onUpdate) => { onUpdate({ content: [], details: {} }); await sleep(2); return { content: [], details: {} }; })],
		listener: (e) => (e.type === "tool_execution_update" ? Promise.reject(new Error("update listener")) : undefined),
		responses: [[toolCall("c1", "t", {})]],
		recovers: false,

	},
	"streamFn throws": { streamFn: () => { throw new Error("stream"); }, recovers: false },
	"invalid regex in a schema": { tools: [tool("t", async () => ({ content: [], details: {} }), { parameters: { type: "object", properties: { a: { type: "string", pattern: "([" } } } })], responses: [[toolCall("c1", "t", { a: "x" })]], recovers: true },
	"cyclic tool arguments": (() => { const a = {}; a.a = a; return { tools: [okTool("t")], responses: [[toolCall("c1", "t", a)]], recovers: true }; })(),
	"10,000-deep tool arguments": (() => { let a = {}; for (let i = 0; i < 10000; i++) a = { a }; return { tools: [okTool("t")], responses: [[toolCall("c1", "t", a)]], recovers: true }; })(),
	"frozen final message": {
		streamFn: (model) => {
			const s = impl.createAssistantMessageEventStream();
			const m = Object.freeze(assistantMessage(model, [{ type: "text", text: "x" }], "stop", { timestamp: 1 }));
			queueMicrotask(() => s.push({ type: "done", reason: "stop", message: m }));
			return s;
		},
		recovers: false,
	},
	// Values that once hung the failing Agent: it must end its run (exactly one agent_end) like the others.
	"tool-call `arguments` getter throws": { tools: [okTool("t")], responses: [[Object.assign(throwing("arguments"), { type: "toolCall", id: "c1", name: "t" })]], recovers: false },
	"tool result `content` getter throws": { tools: [tool("t", async () => throwing("content"))], responses: [[toolCall("c1", "t", {})]], recovers: false },
	"prompt message `role` getter throws": { input: throwing("role"), recovers: false },
	"thrown value whose toString throws": { tools: [tool("t", async () => { throw { toString() { throw new Error("toString"); } }; })], responses: [[toolCall("c1", "t", {})]], recovers: false },
	"null-prototype object thrown by a listener": { listener: (e) => { if (e.type === "message_end") throw Object.create(null); }, recovers: false },
};

async function runFailure(f) {
	const agent = new impl.Agent({
		initialState: { model: MODEL, tools: f.tools ?? [] },
		streamFn: f.streamFn ?? blocksStream(impl, f.responses ?? []),
		...(f.options ?? {}),
	});
	if (f.listener) agent.subscribe(f.listener);
	const ends = [];
	agent.subscribe((e) => {
		if (e.type === "agent_end") ends.push(e);
	});
	const run = Promise.resolve().then(() => agent.prompt(f.input ?? "fail please"));
	run.catch(() => {});
	try {
		await within(run, 5000, "failing prompt()");
	} catch (e) {
		assert.ok(!/^HANG/.test(e.message), e.message);
		assert.ok(!isWasmTrap(e), `the failure trapped: ${e.message}`);
	}
	// a prompt() rejected before the run started (the prompt cannot be read) has no run to end
	if (!("input" in f)) assert.equal(ends.length, 1, "the failing run ends with exactly one agent_end");
	assert.equal(agent.state.isStreaming, false);
	return agent;
}

for (const [name, f] of Object.entries(FAILURES)) {
	test(`isolation: ${name} leaves other Agents working`, { timeout: 30_000 }, async () => {
		const unhandled = trackUnhandled();
		const before = new impl.Agent({ initialState: { model: MODEL, tools: [okTool("t")] }, streamFn: blocksStream(impl, [[toolCall("b1", "t", {})]]) });
		// an Agent mid-run (its tool sleeps) while the failure happens
		const concurrent = new impl.Agent({ initialState: { model: MODEL, tools: [okTool("slow", 20)] }, streamFn: blocksStream(impl, [[toolCall("s1", "slow", {})]]) });
		const concurrentRun = concurrent.prompt("concurrent");
		await sleep(1);
		assert.equal(concurrent.state.isStreaming, true);

		const failed = await runFailure(f);

		await within(concurrentRun, 5000, "concurrent prompt()");
		const results = concurrent.state.messages.filter((m) => m.role === "toolResult");
		assert.deepEqual(results.map((m) => [m.toolCallId, m.isError, m.content[0]?.text]), [["s1", false, "slow ok"]], "the concurrent run is intact");
		assert.equal(concurrent.state.messages.at(-1).stopReason, "stop");

		await within(before.prompt("before"), 5000, "earlier Agent prompt()");
		assert.equal(before.state.messages.filter((m) => m.role === "toolResult").length, 1);
		assert.equal(before.state.messages.at(-1).stopReason, "stop");

		const after = new impl.Agent({ initialState: { model: MODEL }, streamFn: textStream(impl, "after") });
		await assertRunsAgain(after, "new Agent after the failure");
		// the loop functions too
		const stream = impl.agentLoop([{ role: "user", content: "x", timestamp: 1 }], { messages: [] }, { model: MODEL, convertToLlm: (m) => m }, undefined, textStream(impl, "loop"));
		const messages = await within(stream.result(), 5000, "agentLoop result()");
		assert.equal(messages.at(-1).content[0].text, "loop");

		if (f.recovers) await assertRunsAgain(failed, "the failed Agent itself");
		else {
			failed.streamFunction = textStream(impl);
			failed.convertToLlm = (m) => m;
			failed.transformContext = undefined;
			failed.listeners?.clear?.();
		}
		await settle();
		const rejections = unhandled.take();
		assert.deepEqual(rejections, [], "no unhandled rejection");
	});
}
