// The soak workload, shared by scripts/soak.mjs (Node and Chromium) and
// tests/js/robust/leak.test.mjs: many prompts on ONE Agent, mixing text replies,
// parallel and sequential tools with progress updates, aborts from a tool, from a
// listener while the stream waits, and from outside, tools that throw, steering and
// follow-ups, a fresh listener per prompt (subscribe/unsubscribe), and reset()
// every 20 prompts so the transcript stays bounded. Runs in any JS environment.
//
//   await runSoak(pkg, { prompts, sampleAt: [i, ...], measure: async () => sample, onSample, freshTools })
//
// `measure()` is the host's (it knows how to collect garbage and read memory); it is
// called after prompt i for every i in `sampleAt` (0 = before the first prompt).

const USAGE = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const MODEL = { id: "soak", name: "soak", api: "soak-api", provider: "soak", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function makeTools(prefix, getAgent) {
	const schema = () => ({
		type: "object",
		properties: { n: { type: "integer", minimum: 0 }, tag: { type: "string", enum: ["a", "b"] }, list: { type: "array", items: { type: "number" } } },
		required: ["n"],
	});
	const tool = (name, run) => ({
		name,
		label: name,
		description: `${prefix}${name}`,
		parameters: schema(),
		execute: run,
	});
	return [
		tool("echo", async (id, params, signal, onUpdate) => {
			onUpdate?.({ content: [{ type: "text", text: "working" }], details: { step: 1 } });
			await Promise.resolve();
			return { content: [{ type: "text", text: `echo ${params.n}` }], details: { n: params.n, big: "d".repeat(256) } };
		}),
		tool("wait", async (id, params, signal) => {
			await sleep(0);
			if (signal?.aborted) throw new Error("aborted while waiting");
			return { content: [{ type: "text", text: "waited" }], details: {} };
		}),
		tool("boom", async () => {
			throw new Error("tool failure");
		}),
		tool("stop", async (id, params, signal) => {
			// aborts the run from inside a tool
			getAgent()?.abort();
			return { content: [{ type: "text", text: "stopping" }], details: {} };
		}),
	];
}

function assistant(model, content, stopReason) {
	return { role: "assistant", content, api: model.api, provider: model.provider, model: model.id, usage: USAGE(), stopReason, timestamp: Date.now() };
}

/** A stream function driven by `plan.next()`: a list of content blocks, or "hang" (waits for the abort). */
function streamFn(pkg, plan) {
	return (model, context, options) => {
		const stream = pkg.createAssistantMessageEventStream();
		const step = plan.next();
		const signal = options?.signal;
		(async () => {
			await Promise.resolve();
			const partial = assistant(model, [], "stop");
			stream.push({ type: "start", partial });
			if (step === "hang" || signal?.aborted) {
				if (!signal?.aborted) await new Promise((r) => signal?.addEventListener("abort", r, { once: true }));
				stream.push({ type: "error", reason: "aborted", error: { ...assistant(model, [], "aborted"), errorMessage: "Request was aborted" } });
				return;
			}
			const content = step;
			for (let i = 0; i < content.length; i++) {
				const block = content[i];
				if (block.type === "text") {
					stream.push({ type: "text_start", contentIndex: i, partial });
					stream.push({ type: "text_delta", contentIndex: i, delta: block.text, partial });
					stream.push({ type: "text_end", contentIndex: i, content: block.text, partial });
				} else {
					stream.push({ type: "toolcall_start", contentIndex: i, partial });
					const json = JSON.stringify(block.arguments);
					stream.push({ type: "toolcall_delta", contentIndex: i, delta: json.slice(0, 4), partial });
					stream.push({ type: "toolcall_delta", contentIndex: i, delta: json.slice(4), partial });
					stream.push({ type: "toolcall_end", contentIndex: i, toolCall: block, partial });
				}
			}
			const hasCall = content.some((b) => b.type === "toolCall");
			const final = assistant(model, content, hasCall ? "toolUse" : "stop");
			stream.push({ type: "done", reason: final.stopReason, message: final });
		})();
		return stream;
	};
}

const text = (t) => ({ type: "text", text: t });
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });

/** The scripted requests of prompt `i` (one entry per provider request). */
function script(i) {
	switch (i % 6) {
		case 0:
			return [[text(`reply ${i}`)]];
		case 1: // parallel tools with updates, then text
			return [[text("calling"), call(`e${i}`, "echo", { n: i, tag: "a", list: [1, 2, 3] }), call(`w${i}`, "wait", { n: "5" })], [text("done")]];
		case 2: // sequential-by-config is set per prompt below; a tool aborts the run (no request follows)
			return [[call(`e${i}`, "echo", { n: 1 }), call(`s${i}`, "stop", { n: 2 }), call(`w${i}`, "wait", { n: 3 })]];
		case 3: // the stream waits until a listener aborts
			return ["hang"];
		case 4: // a failing tool and an invalid call, then text
			return [[call(`b${i}`, "boom", { n: 1 }), call(`x${i}`, "echo", { n: -1 }), call(`u${i}`, "missing", {})], [text("recovered")]];
		default: // steering from a listener, follow-up queued before
			return [[call(`e${i}`, "echo", { n: 4 })], [text("after tool")], [text("after steer")], [text("after follow-up")]];
	}
}

/**
 * `hooks: false` runs the default path (no tool hooks), with a listener that reads
 * `agent.state.messages` on every event, as a UI re-rendering the transcript does.
 */
export async function runSoak(pkg, { prompts = 10000, sampleAt = [], measure, onSample, freshTools = false, hooks = true } = {}) {
	const plan = { queue: [], next() { return this.queue.length ? this.queue.shift() : [text("extra")]; } };
	let agentRef;
	const getAgent = () => agentRef;
	const agent = new pkg.Agent({
		initialState: { model: MODEL, systemPrompt: "soak", tools: makeTools("", getAgent) },
		streamFn: streamFn(pkg, plan),
		...(hooks
			? {
					beforeToolCall: async () => undefined,
					afterToolCall: async (ctx) => (ctx.toolCall.name === "echo" ? { details: { after: true } } : undefined),
				}
			: {}),
	});
	let rendered = 0;
	agentRef = agent;
	const wanted = new Set(sampleAt);
	const samples = [];
	const counts = { toolResults: 0, aborted: 0, errors: 0 };
	if (wanted.has(0)) samples.push(await sample(0));

	async function sample(i) {
		const s = { prompt: i, ...(await measure()) };
		onSample?.(s);
		return s;
	}

	for (let i = 1; i <= prompts; i++) {
		if (freshTools) agent.state.tools = makeTools(`#${i}`, getAgent);
		plan.queue = script(i).slice();
		agent.toolExecution = i % 6 === 2 ? "sequential" : "parallel";
		if (i % 6 === 5) agent.followUp({ role: "user", content: `follow-up ${i}`, timestamp: Date.now() });
		let steered = false;
		const off = agent.subscribe((event, signal) => {
			if (!hooks) {
				const messages = agent.state.messages;
				rendered += messages.length + (messages.at(-1)?.content?.length ?? 0);
			}
			if (event.type === "message_start" && event.message.role === "assistant" && i % 6 === 3) agent.abort();
			if (event.type === "tool_execution_end" && i % 6 === 5 && !steered) {
				steered = true;
				agent.steer({ role: "user", content: `steer ${i}`, timestamp: Date.now() });
			}
			if (event.type === "message_end" && event.message.role === "toolResult") counts.toolResults++;
			if (event.type === "agent_end" && signal?.aborted) counts.aborted++;
			if (event.type === "turn_end" && event.message.stopReason === "error") counts.errors++;
		});
		const run = agent.prompt(`prompt ${i}`);
		if (i % 50 === 7) setTimeout(() => agent.abort(), 0); // an outside abort now and then
		await run;
		await agent.waitForIdle();
		off();
		if (agent.state.isStreaming) throw new Error(`prompt ${i}: still streaming after waitForIdle`);
		if (i % 20 === 0) agent.reset();
		if (wanted.has(i)) samples.push(await sample(i));
	}
	return { samples, counts, messages: agent.state.messages.length, rendered };
}
