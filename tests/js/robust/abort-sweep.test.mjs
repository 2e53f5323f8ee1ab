// Abort sweep: every scenario is run once to count its await points, then again
// for every k, aborting the Agent at the k-th await point, until a run completes
// without reaching k.
//
// Await points are the places the scenario controls: every listener invocation
// (one per event), every hook call (transformContext, convertToLlm, getApiKey,
// prepareRequest, beforeToolCall, afterToolCall, finishTurn, prepareNextTurn),
// the stream function call, every event a scripted stream pushes, and the
// start / update / end of every tool execution. Two modes:
//   enter  abort synchronously when the k-th point is entered (before it awaits)
//   exit   abort when the k-th point resumes after its await (for the synchronous
//          points, the stream function and stream events, in the next microtask)
//   later  abort from a 0-ms timer set at the k-th point (a macrotask later: network
//          reads, timers and other tools get to run first)
//
// For every k and mode the run must: end with exactly one `agent_end` (last event);
// leave `isStreaming` false, no pending tool calls and no streaming message;
// `prompt()` and `waitForIdle()` resolve; give every tool call of a completed
// assistant message exactly one toolResult (messages aborted mid-stream run no
// tools, so they must have none); let a tool still run when `prompt()` resolves
// only if it ignored the abort and was abandoned (its call then has the `Operation
// aborted` result and its late result is dropped); deliver no listener call after it resolves; report no
// unhandled rejection; and the agent must answer a plain prompt afterwards.
import { test } from "node:test";
import { startSseServer } from "../../support/sse-server.mjs";
import { MODEL, call, text, thinking, scripted, user } from "../support/scripted.mjs";
import {
	assert,
	assertRunsAgain,
	eventProblems,
	ours,
	pkg,
	reference,
	settle,
	sleep,
	textStream,
	trackUnhandled,
	transcriptProblems,
	within,
} from "./support.mjs";

// PI_ROBUST_IMPL=reference runs the sweep against 1.4.0 (a harness self-check: it must fail there,
// e.g. sequential batches lose results after an abort).
const impl = process.env.PI_ROBUST_IMPL === "reference" ? reference : ours;
const streamProxy = impl === reference ? reference.module.streamProxy : pkg.streamProxy;
const MAX_K = 600;
const RUN_MS = 5000;

class Sweep {
	constructor(k, mode) {
		this.k = k; // 0 = count only
		this.mode = mode;
		this.count = 0;
		this.labels = [];
		this.agent = undefined;
		this.active = true;
		this.abortedAt = undefined;
		this.inFlight = 0;
	}
	abortNow(label) {
		this.abortedAt = label;
		this.agent.abort();
	}
	/** A synchronous point (stream function call, stream event). */
	hit(label) {
		if (!this.active) return 0;
		const n = ++this.count;
		this.labels.push(label);
		if (n === this.k) {
			if (this.mode === "enter") this.abortNow(label);
			else if (this.mode === "exit") queueMicrotask(() => this.abortNow(`${label} (after)`));
			else setTimeout(() => this.abortNow(`${label} (timer)`), 0);
		}
		return n;
	}
	/** An asynchronous point: counts, awaits once, and aborts before or after the await. */
	async point(label) {
		if (!this.active) return;
		const n = ++this.count;
		this.labels.push(label);
		if (n === this.k && this.mode === "enter") this.abortNow(label);
		if (n === this.k && this.mode === "later") setTimeout(() => this.abortNow(`${label} (timer)`), 0);
		await Promise.resolve();
		if (n === this.k && this.mode === "exit") this.abortNow(`${label} (after)`);
	}
}

// ---- scenario building blocks ----------------------------------------------------------

const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);

function hooks(sw) {
	return {
		transformContext: async (messages) => {
			await sw.point("transformContext");
			return messages;
		},
		convertToLlm: async (messages) => {
			await sw.point("convertToLlm");
			return messages.filter((m) => LLM_ROLES.has(m.role));
		},
		getApiKey: async () => {
			await sw.point("getApiKey");
			return "key";
		},
		prepareRequest: async () => {
			await sw.point("prepareRequest");
		},
		beforeToolCall: async () => {
			await sw.point("beforeToolCall");
			return undefined;
		},
		afterToolCall: async () => {
			await sw.point("afterToolCall");
			return undefined;
		},
		finishTurn: async () => {
			await sw.point("finishTurn");
		},
	};
}

/**
 * A tool whose execution is made of await points.
 *   onAbort  "return" (finish normally), "throw" (reject when the signal is aborted), "ignore" (never look)
 *   updates  number of onUpdate calls
 *   timer    wait one 1-ms timer in the middle (so other tools interleave)
 */
function sweepTool(sw, name, { onAbort = "return", updates = 0, timer = false, executionMode } = {}) {
	const tool = {
		name,
		label: name,
		description: `${name} tool`,
		parameters: { type: "object", properties: { n: { type: "number" } } },
		async execute(toolCallId, params, signal, onUpdate) {
			sw.inFlight++;
			try {
				await sw.point(`exec:${name}:start`);
				for (let u = 0; u < updates; u++) {
					onUpdate?.({ content: [{ type: "text", text: `${name} partial ${u}` }], details: { u } });
					await sw.point(`exec:${name}:update`);
				}
				if (timer) await sleep(1);
				if (onAbort === "throw" && signal?.aborted) throw new Error(`${name} saw the abort`);
				await sw.point(`exec:${name}:end`);
				return { content: [{ type: "text", text: `${name} ok ${toolCallId}` }], details: { toolCallId, n: params?.n } };
			} finally {
				sw.inFlight--;
			}
		},
	};
	if (executionMode) tool.executionMode = executionMode;
	return tool;
}

const textSpec = (t) => ({ content: [text(t)], timing: "micro" });

/** Scripted responses played through our own stream class, each event an await point. */
function scriptedFn(sw, specs) {
	const padded = [...specs, ...Array.from({ length: 30 }, () => textSpec("fallback"))];
	const withPoints = padded.map((spec) => ({ timing: "micro", ...spec, beforeEvent: (i, ev) => sw.hit(`stream:${ev.type}`) }));
	const inner = scripted(impl, withPoints);
	return (model, context, options) => {
		sw.hit("streamFn");
		return inner(model, context, options);
	};
}

const threeTools = (sw, extra = {}) => [
	sweepTool(sw, "alpha", { onAbort: "return", updates: 1, ...extra }),
	sweepTool(sw, "beta", { onAbort: "ignore", timer: true, ...extra }),
	sweepTool(sw, "gamma", { onAbort: "throw", updates: 2, timer: true, ...extra }),
];
const threeCalls = (prefix) => [call(`${prefix}1`, "alpha", { n: 1 }, ['{"n"', ":1}"]), call(`${prefix}2`, "beta", { n: 2 }), call(`${prefix}3`, "gamma", { n: 3 })];

// Each scenario: (sw, ctx) => { options, stream, prompt(agent), onEvent?(agent, event) }.
const SCENARIOS = {
	"text only": (sw) => ({
		options: { ...hooks(sw) },
		stream: scriptedFn(sw, [{ content: [thinking("hmm", ["h", "mm"]), text("hello world", ["hello", " ", "world"])] }]),
	}),
	"parallel tools": (sw) => ({
		options: { ...hooks(sw), initialState: { model: MODEL, tools: threeTools(sw) } },
		stream: scriptedFn(sw, [{ content: [text("calling"), ...threeCalls("p")] }, textSpec("done")]),
	}),
	"sequential tools": (sw) => ({
		options: { ...hooks(sw), toolExecution: "sequential", initialState: { model: MODEL, tools: threeTools(sw) } },
		stream: scriptedFn(sw, [{ content: threeCalls("s") }, textSpec("done")]),
	}),
	"sequential by executionMode": (sw) => ({
		options: {
			...hooks(sw),
			initialState: { model: MODEL, tools: [...threeTools(sw).slice(0, 2), sweepTool(sw, "gamma", { onAbort: "throw", executionMode: "sequential" })] },
		},
		stream: scriptedFn(sw, [{ content: threeCalls("m") }, textSpec("done")]),
	}),
	steering: (sw) => {
		let steered = 0;
		return {
			options: { ...hooks(sw), initialState: { model: MODEL, tools: threeTools(sw).slice(0, 2) } },
			stream: scriptedFn(sw, [{ content: [call("t1", "alpha", { n: 1 }), call("t2", "beta", { n: 2 })] }, textSpec("after tools"), textSpec("after steer")]),
			onEvent(agent, e) {
				// steer while a tool runs and again at the end of the first turn
				if (e.type === "tool_execution_start" && steered === 0) {
					steered++;
					agent.steer(user("steer while tools run"));
				} else if (e.type === "turn_end" && steered === 1) {
					steered++;
					agent.steer(user("steer at turn end"));
				}
			},
		};
	},
	"follow-ups": (sw) => {
		let followed = 0;
		return {
			options: { ...hooks(sw), followUpMode: "one-at-a-time", initialState: { model: MODEL, tools: threeTools(sw).slice(0, 1) } },
			stream: scriptedFn(sw, [textSpec("first"), { content: [call("f1", "alpha", { n: 1 })] }, textSpec("second"), textSpec("third")]),
			before(agent) {
				agent.followUp(user("queued before the prompt"));
			},
			onEvent(agent, e) {
				if (e.type === "turn_end" && followed === 0) {
					followed++;
					agent.followUp(user("queued at turn end"));
				}
			},
		};
	},
	prepareNextTurn: (sw) => {
		let calls = 0;
		return {
			options: {
				...hooks(sw),
				initialState: { model: MODEL, tools: threeTools(sw).slice(0, 2) },
				prepareNextTurnWithContext: async () => {
					await sw.point("prepareNextTurn");
					calls++;
					return calls === 1 ? { messages: [user("prepared for turn 2")], thinkingLevel: "low" } : undefined;
				},
			},
			stream: scriptedFn(sw, [{ content: [call("n1", "alpha", { n: 1 })] }, { content: [call("n2", "beta", { n: 2 })] }, textSpec("done")]),
		};
	},
	"legacy prepareNextTurn": (sw) => ({
		options: {
			...hooks(sw),
			initialState: { model: MODEL, tools: threeTools(sw).slice(0, 1) },
			prepareNextTurn: async (signal) => {
				await sw.point("prepareNextTurn");
				return signal?.aborted ? undefined : { thinkingLevel: "high" };
			},
		},
		stream: scriptedFn(sw, [{ content: [call("l1", "alpha", { n: 1 })] }, textSpec("done")]),
	}),
};

// ---- proxy scenario (streamProxy against the local SSE server) -------------------------

const USAGE = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function proxyScript(record) {
	const messages = record.body?.context?.messages ?? [];
	const last = messages.at(-1);
	const lines =
		last?.role === "toolResult"
			? [
					{ type: "start" },
					{ type: "text_start", contentIndex: 0 },
					{ type: "text_delta", contentIndex: 0, delta: "all " },
					{ type: "text_delta", contentIndex: 0, delta: "done" },
					{ type: "text_end", contentIndex: 0 },
					{ type: "done", reason: "stop", usage: USAGE },
				]
			: [
					{ type: "start" },
					{ type: "text_start", contentIndex: 0 },
					{ type: "text_delta", contentIndex: 0, delta: "calling" },
					{ type: "text_end", contentIndex: 0 },
					{ type: "toolcall_start", contentIndex: 1, id: "x1", toolName: "alpha" },
					{ type: "toolcall_delta", contentIndex: 1, delta: '{"n":' },
					{ type: "toolcall_delta", contentIndex: 1, delta: "1}" },
					{ type: "toolcall_end", contentIndex: 1, toolCall: { type: "toolCall", id: "x1", name: "alpha", arguments: { n: 1 } } },
					{ type: "toolcall_start", contentIndex: 2, id: "x2", toolName: "beta" },
					{ type: "toolcall_delta", contentIndex: 2, delta: '{"n":2}' },
					{ type: "toolcall_end", contentIndex: 2, toolCall: { type: "toolCall", id: "x2", name: "beta", arguments: { n: 2 } } },
					{ type: "done", reason: "toolUse", usage: USAGE },
				];
	return { lines, chunking: "item", delayMs: 0 };
}

let server;
async function proxyServer() {
	server ??= await startSseServer({ "/api/stream": proxyScript });
	return server;
}

SCENARIOS["proxy stream"] = (sw, { proxyUrl }) => ({
	proxy: true,
	options: { ...hooks(sw), initialState: { model: MODEL, tools: threeTools(sw).slice(0, 2) } },
	stream: (model, context, options) => {
		sw.hit("streamFn");
		return streamProxy(model, context, { proxyUrl, authToken: "t", signal: options?.signal });
	},
});

// ---- one run --------------------------------------------------------------------------

const HOOK_NAMES = Object.keys(hooks(new Sweep(0, "enter")));

/** The scenario's options without the swept hooks: the default path (a scenario's own hook stays). */
function withoutHooks(options) {
	const rest = { ...options };
	for (const name of HOOK_NAMES) delete rest[name];
	return rest;
}

async function runOnce(name, k, mode, env, noHooks = false) {
	const sw = new Sweep(k, mode);
	const built = SCENARIOS[name](sw, env);
	let current = built.stream;
	const agent = new impl.Agent({
		initialState: { model: MODEL },
		...(noHooks ? withoutHooks(built.options) : built.options),
		streamFn: (model, context, options) => current(model, context, options),
	});
	sw.agent = agent;
	const events = [];
	let resolved = false;
	const late = [];
	agent.subscribe(async (e) => {
		if (resolved) late.push(e.type);
		if (!sw.active) return;
		events.push(e);
		built.onEvent?.(agent, e);
		await sw.point(`ev:${e.type}`);
	});
	built.before?.(agent);
	const unhandled = trackUnhandled();
	const problems = [];
	const where = () => `k=${k} ${mode}${sw.abortedAt ? ` (aborted at ${sw.abortedAt})` : " (no abort)"}`;
	try {
		await within(agent.prompt("go"), RUN_MS, "prompt()");
		resolved = true;
		const running = sw.inFlight;
		await within(agent.waitForIdle(), RUN_MS, "waitForIdle()");
		const st = agent.state;
		// A tool still running is one that ignored the abort and was abandoned (docs/deviations.md):
		// its call has the `Operation aborted` result, and its late result must never show up.
		const abandoned = st.messages.filter((m) => m.role === "toolResult" && m.isError && m.content?.[0]?.text === "Operation aborted").length;
		if (running > abandoned) problems.push(`${running} tool execution(s) still running when prompt() resolved, only ${abandoned} abandoned`);
		if (st.isStreaming !== false) problems.push("isStreaming is still true");
		if (st.pendingToolCalls.size !== 0) problems.push(`pendingToolCalls not empty: ${[...st.pendingToolCalls]}`);
		if (st.streamingMessage !== undefined) problems.push("streamingMessage still set");
		problems.push(...eventProblems(events));
		problems.push(...transcriptProblems(st.messages, { strictFailed: !built.proxy }));
		await settle();
		await sleep(3);
		if (late.length) problems.push(`listener called after prompt() resolved: ${late.join(",")}`);
		if (sw.inFlight !== 0) problems.push(`${sw.inFlight} tool execution(s) still running after the run`);
		const rejections = unhandled.take();
		if (rejections.length) problems.push(`unhandled: ${rejections.join(" | ")}`);
		if (problems.length === 0) {
			sw.active = false;
			current = textStream(impl, "again");
			await assertRunsAgain(agent, "run after the aborted run");
			const after = unhandled.take();
			if (after.length) problems.push(`unhandled during the follow-up run: ${after.join(" | ")}`);
		}
	} catch (e) {
		problems.push(e instanceof Error ? e.message : String(e));
		unhandled.take();
	}
	const last = agent.state.messages.findLast((m) => m.role === "assistant" && m.content?.[0]?.text !== "again");
	return {
		reached: sw.count,
		labels: sw.labels,
		problems: problems.map((p) => `${where()}: ${p}`),
		aborted: sw.abortedAt !== undefined,
		final: { stopReason: last?.stopReason, errorMessage: last?.errorMessage, toolResults: agent.state.messages.filter((m) => m.role === "toolResult").length },
	};
}

async function sweep(t, name, env = {}, noHooks = false) {
	const base = await runOnce(name, 0, "enter", env, noHooks);
	assert.deepEqual(base.problems, [], "the un-aborted run satisfies the invariants");
	assert.ok(base.reached > 5, `scenario has await points (${base.reached})`);
	// the un-aborted run really completes (a scenario that fails early would sweep nothing)
	assert.equal(base.final.stopReason, "stop", `un-aborted run ends normally (errorMessage: ${base.final.errorMessage})`);
	if (name !== "text only") assert.ok(base.final.toolResults > 0, "un-aborted run executes tools");
	const failures = [];
	let runs = 0;
	for (const mode of ["enter", "exit", "later"]) {
		for (let k = 1; k <= MAX_K; k++) {
			const r = await runOnce(name, k, mode, env, noHooks);
			runs++;
			failures.push(...r.problems);
			if (r.reached < k) break;
			assert.ok(k < MAX_K, `sweep did not terminate within ${MAX_K} points`);
		}
	}
	t.diagnostic(`${name}: ${base.reached} await points un-aborted, ${runs} aborted runs`);
	if (failures.length) {
		assert.fail(`${failures.length} failing abort points in "${name}":\n  ${failures.slice(0, 12).join("\n  ")}${failures.length > 12 ? `\n  … ${failures.length - 12} more` : ""}`);
	}
}

for (const name of Object.keys(SCENARIOS)) {
	for (const noHooks of [false, true]) {
		test(`abort sweep: ${name}${noHooks ? " (no hooks: the default path)" : ""}`, { timeout: 180_000 }, async (t) => {
			const env = name === "proxy stream" ? { proxyUrl: (await proxyServer()).url } : {};
			await sweep(t, name, env, noHooks);
		});
	}
}

test("abort sweep: the harness counts points and really aborts", { timeout: 30_000 }, async () => {
	const base = await runOnce("parallel tools", 0, "enter", {});
	assert.ok(base.labels.includes("exec:alpha:start") && base.labels.includes("beforeToolCall") && base.labels.includes("stream:text_delta"));
	// aborting at the first tool execution stops the run short of the second request
	const at = base.labels.indexOf("exec:alpha:start") + 1;
	const r = await runOnce("parallel tools", at, "enter", {});
	assert.deepEqual(r.problems, []);
	assert.ok(r.aborted);
	assert.ok(r.reached < base.reached, `aborted run reached ${r.reached} < ${base.reached}`);
});

test.after(async () => {
	await server?.close();
});
