// `abort()` ends the read of a stream that ignores the signal (a deviation from 1.4.0, which waits
// for such a stream forever; docs/deviations.md). The loop stops reading, calls the iterator's
// `return()` without waiting on it, and the request ends with the partial assistant message (or a
// fresh one when nothing arrived) with `stopReason: "aborted"` and `errorMessage: "Request was
// aborted"`, followed by the usual closing events. Whatever the stream does afterwards is dropped.
//
// Every kind of stream a stream function returns: ours, pi-ai 1.4.0's class, an async generator, a
// hand-written pull iterator; stalling before any event and after a few deltas; on the default path
// (no hooks) and with tool and context hooks set; for an Agent and for `runAgentLoop`.
import { test } from "node:test";
import { createAssistantMessageEventStream as piAiStream } from "@earendil-works/pi-ai";
import { MODEL, assert, eventProblems, ours as impl, settle, sleep, trackUnhandled, transcriptProblems, within, zeroUsage } from "./support.mjs";

const ABORTED = "Request was aborted";

function partialAfter(n) {
	return {
		role: "assistant",
		content: [{ type: "text", text: "x".repeat(n) }],
		api: MODEL.api,
		provider: MODEL.provider,
		model: MODEL.id,
		usage: zeroUsage(),
		stopReason: "stop",
		timestamp: 1,
	};
}

/** `start`, then `deltas` text deltas: the events every stream kind plays before it stalls. */
function events(deltas) {
	if (deltas < 0) return [];
	const out = [{ type: "start", partial: partialAfter(0) }];
	for (let i = 1; i <= deltas; i++) out.push({ type: "text_delta", contentIndex: 0, delta: "x", partial: partialAfter(i) });
	return out;
}

/**
 * Stream kinds that ignore the signal: each plays `list` and then never produces anything else.
 * `probe` records calls of the iterator's `return()` and lets the test push a late event.
 */
const KINDS = {
	ours(list, probe) {
		const stream = impl.createAssistantMessageEventStream();
		for (const e of list) stream.push(e);
		probe.late = () => {
			stream.push({ type: "text_delta", contentIndex: 0, delta: "late", partial: partialAfter(99) });
			stream.push({ type: "done", reason: "stop", message: partialAfter(99) });
		};
		return wrapReturn(stream, probe);
	},
	"pi-ai class"(list, probe) {
		const stream = piAiStream();
		setTimeout(() => {
			for (const e of list) stream.push(e);
		}, 0);
		probe.late = () => {
			stream.push({ type: "text_delta", contentIndex: 0, delta: "late", partial: partialAfter(99) });
			stream.push({ type: "done", reason: "stop", message: partialAfter(99) });
		};
		return wrapReturn(stream, probe);
	},
	"async generator"(list, probe) {
		let release;
		const gate = new Promise((r) => (release = r));
		probe.late = () => release();
		async function* gen() {
			try {
				for (const e of list) yield e;
				await gate;
				yield { type: "text_delta", contentIndex: 0, delta: "late", partial: partialAfter(99) };
			} finally {
				probe.returned++;
			}
		}
		const it = gen();
		it.result = () => new Promise(() => {});
		return it;
	},
	"pull iterator"(list, probe) {
		let i = 0;
		let resolveLate;
		probe.late = () => resolveLate?.({ value: { type: "done", reason: "stop", message: partialAfter(99) }, done: false });
		const iterator = {
			next() {
				if (i < list.length) return Promise.resolve({ value: list[i++], done: false });
				return new Promise((r) => (resolveLate = r));
			},
			return() {
				probe.returned++;
				return Promise.reject(new Error("return() failed"));
			},
		};
		return { [Symbol.asyncIterator]: () => iterator, result: () => new Promise(() => {}) };
	},
};

/** Counts `return()` calls on the iterator a stream hands out. */
function wrapReturn(stream, probe) {
	const open = stream[Symbol.asyncIterator].bind(stream);
	stream[Symbol.asyncIterator] = () => {
		const it = open();
		const original = it.return;
		it.return = function () {
			probe.returned++;
			return original?.call(this);
		};
		return it;
	};
	return stream;
}

/** A plain text response. */
function again() {
	const s = impl.createAssistantMessageEventStream();
	const m = { ...partialAfter(1), content: [{ type: "text", text: "again" }] };
	queueMicrotask(() => {
		s.push({ type: "start", partial: { ...m, content: [] } });
		s.push({ type: "done", reason: "stop", message: m });
	});
	return s;
}

const noopTool = {
	name: "t",
	label: "t",
	description: "t",
	parameters: { type: "object", properties: {} },
	execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

/** The hooks the demo sets, plus context hooks that settle at once. */
const HOOKS = {
	beforeToolCall: async () => undefined,
	afterToolCall: async () => undefined,
	transformContext: async (messages) => messages,
	prepareRequest: () => undefined,
};

function checkAborted(message, deltas) {
	assert.equal(message.role, "assistant");
	assert.equal(message.stopReason, "aborted");
	assert.equal(message.errorMessage, ABORTED);
	if (deltas >= 0) assert.deepEqual(message.content, partialAfter(deltas).content, "the partial message is kept");
}

for (const [kind, make] of Object.entries(KINDS)) {
	for (const deltas of [-1, 3]) {
		for (const hooks of [false, true]) {
			const label = `${kind}, stalls ${deltas < 0 ? "before any event" : `after ${deltas} deltas`}, ${hooks ? "with hooks" : "no hooks"}`;
			test(`Agent: abort ends the read of a stream that ignores it (${label})`, { timeout: 20_000 }, async () => {
				const probe = { returned: 0, late: () => {} };
				let reached;
				const streaming = new Promise((r) => (reached = r));
				let calls = 0;
				const agent = new impl.Agent({
					initialState: { model: MODEL, tools: [noopTool] },
					streamFn: () => {
						if (calls++ > 0) return again();
						if (deltas < 0) setTimeout(reached, 0);
						return make(events(deltas), probe);
					},
					...(hooks ? HOOKS : {}),
				});
				const seen = [];
				agent.subscribe((e) => {
					seen.push(e);
					if (deltas >= 0 && e.type === "message_update" && e.message.content[0].text.length === deltas) reached();
				});
				const unhandled = trackUnhandled();
				const run = agent.prompt("go");
				await within(streaming, 5000, "stream reached its stall");
				await sleep(5);
				assert.equal(agent.state.isStreaming, true, "the stream stalls until the abort");
				agent.abort();
				await within(run, 5000, "prompt() after abort");
				const ended = seen.length;
				// The stream wakes up late: nothing of it is delivered any more.
				probe.late();
				await settle();
				await sleep(10);
				assert.equal(seen.length, ended, "no event after agent_end");
				assert.deepEqual(unhandled.take(), []);
				assert.deepEqual(eventProblems(seen), []);
				assert.deepEqual(transcriptProblems(agent.state.messages), []);
				const types = seen.map((e) => e.type);
				assert.deepEqual(types.slice(-4), deltas < 0 ? ["message_start", "message_end", "turn_end", "agent_end"] : ["message_update", "message_end", "turn_end", "agent_end"]);
				const last = agent.state.messages.at(-1);
				checkAborted(last, deltas);
				assert.equal(seen.at(-3).message, last, "message_end carries the transcript's message");
				assert.equal(seen.at(-2).message, last);
				assert.equal(agent.state.errorMessage, ABORTED);
				assert.equal(agent.state.isStreaming, false);
				assert.equal(probe.returned, 1, "the iterator's return() was called once");
				// The agent runs again.
				await within(agent.prompt("again"), 5000, "a later prompt");
				assert.equal(agent.state.messages.at(-1).stopReason, "stop");
			});
		}
	}
}

test("runAgentLoop: abort ends the read of a stalled async generator", { timeout: 20_000 }, async () => {
	const probe = { returned: 0, late: () => {} };
	const ac = new AbortController();
	const seen = [];
	const unhandled = trackUnhandled();
	let reached;
	const stalled = new Promise((r) => (reached = r));
	const run = impl.runAgentLoop(
		[{ role: "user", content: "go", timestamp: 1 }],
		{ systemPrompt: "", messages: [], tools: [] },
		{ model: MODEL, convertToLlm: (m) => m },
		(e) => {
			seen.push(e);
			if (e.type === "message_update") reached();
		},
		ac.signal,
		() => KINDS["async generator"](events(2), probe),
	);
	await within(stalled, 5000, "first update");
	await sleep(5);
	ac.abort();
	const messages = await within(run, 5000, "runAgentLoop after abort");
	probe.late();
	await settle();
	assert.deepEqual(unhandled.take(), []);
	checkAborted(messages.at(-1), 2);
	assert.deepEqual(seen.map((e) => e.type).slice(-3), ["message_end", "turn_end", "agent_end"]);
	assert.equal(probe.returned, 1);
});

test("a stream that ends on the abort is read to its own end, as in 1.4.0", { timeout: 20_000 }, async () => {
	const agent = new impl.Agent({
		initialState: { model: MODEL },
		streamFn: (model, context, options) => {
			const s = impl.createAssistantMessageEventStream();
			s.push({ type: "start", partial: partialAfter(0) });
			options.signal.addEventListener("abort", () => {
				const m = { ...partialAfter(0), stopReason: "aborted", errorMessage: "the provider's own text" };
				s.push({ type: "error", reason: "aborted", error: m });
			});
			return s;
		},
	});
	const run = agent.prompt("go");
	await sleep(5);
	agent.abort();
	await within(run, 5000, "prompt() after abort");
	assert.equal(agent.state.messages.at(-1).errorMessage, "the provider's own text");
});

test("a listener still running at the abort is awaited before the request ends", { timeout: 20_000 }, async () => {
	const order = [];
	let release;
	const agent = new impl.Agent({
		initialState: { model: MODEL },
		streamFn: () => KINDS["pull iterator"](events(1), { returned: 0 }),
	});
	let entered;
	const inListener = new Promise((r) => (entered = r));
	agent.subscribe((e) => {
		order.push(e.type);
		if (e.type === "message_update") {
			entered();
			return new Promise((r) => (release = r)).then(() => order.push("listener done"));
		}
	});
	const run = agent.prompt("go");
	await within(inListener, 5000, "listener entered");
	agent.abort();
	await sleep(20);
	assert.equal(agent.state.isStreaming, true, "the listener is the app's own: still awaited");
	release();
	await within(run, 5000, "prompt() after the listener settled");
	assert.deepEqual(order.slice(-5), ["message_update", "listener done", "message_end", "turn_end", "agent_end"]);
});
