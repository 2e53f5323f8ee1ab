// What each event's message holds when a listener sees it, for a stream that writes into its partial
// message after pushing an event, as pi-ai's providers do (the OpenAI provider pushes `start`, then
// writes `responseId` once the first chunk arrives, a few microtasks later when it came with the
// headers). 1.4.0 copies the partial for `message_start` and each `message_update` as its loop reads
// the event; ours must show the same copy, and the same final message at `message_end`, `turn_end`
// and `agent_end`, for each kind of stream both can be given: pi-ai's class, an async generator, a
// hand-written pull iterator.
import { scenario } from "../support/harness.mjs";
import * as ai from "@earendil-works/pi-ai";
import { MODEL, zeroUsage } from "../support/scripted.mjs";

/** A stream of each kind, fed through `sink.push(event)`; `result()` is the `done` event's message. */
const KINDS = {
	"pi-ai": () => {
		const stream = ai.createAssistantMessageEventStream();
		return { sink: stream, stream };
	},
	generator: () => {
		const queue = [];
		let wake;
		let final;
		const stream = (async function* () {
			for (;;) {
				if (queue.length > 0) {
					const event = queue.shift();
					yield event;
					if (event.type === "done") return;
				} else await new Promise((resolve) => (wake = resolve));
			}
		})();
		let resolveFinal;
		const done = new Promise((resolve) => (resolveFinal = resolve));
		stream.result = () => done;
		const sink = {
			push(event) {
				queue.push(event);
				if (event.type === "done") resolveFinal((final = event.message));
				wake?.();
			},
		};
		return { sink, stream, final: () => final };
	},
	pull: () => {
		const queue = [];
		const waiting = [];
		let final;
		let resolveFinal;
		const done = new Promise((resolve) => (resolveFinal = resolve));
		const iterator = {
			next() {
				if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
				if (final !== undefined) return Promise.resolve({ value: undefined, done: true });
				return new Promise((resolve) => waiting.push(resolve));
			},
		};
		const sink = {
			push(event) {
				if (event.type === "done") resolveFinal((final = event.message));
				const waiter = waiting.shift();
				if (waiter) waiter({ value: event, done: false });
				else queue.push(event);
			},
		};
		return { sink, stream: { [Symbol.asyncIterator]: () => iterator, result: () => done } };
	},
};

const partial = () => ({ role: "assistant", content: [], api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: zeroUsage(), stopReason: "stop", timestamp: 1, marks: "" });

/**
 * Runs `steps` one per macrotask, each scheduled by the one before it (so their order does not depend on
 * timer precision or load), starting a macrotask after the call.
 */
function macrotasks(steps) {
	const next = (i) => i < steps.length && setImmediate(() => (steps[i](), next(i + 1)));
	next(0);
}

/** Writes `mark` into `P` after `ticks` microtasks (0: at once). */
function markAfter(P, ticks, mark) {
	let n = 0;
	const step = () => (n++ < ticks ? queueMicrotask(step) : (P.marks += `${mark} `));
	step();
}

/** Writes a mark into `P` at each of the next `count` microtasks. */
function markEachTick(P, count, tag) {
	let k = 0;
	const step = () => {
		P.marks += `${tag}${k} `;
		if (++k < count) queueMicrotask(step);
	};
	queueMicrotask(step);
}

/** The events of one answer: its text in `deltas`, then `done`; `P` is mutated in place between them, as providers do. */
function answer(P, deltas) {
	const steps = [() => ({ type: "start", partial: P })];
	steps.push(() => {
		P.content.push({ type: "text", text: "" });
		return { type: "text_start", contentIndex: 0, partial: P };
	});
	for (const delta of deltas) {
		steps.push(() => {
			P.content[0].text += delta;
			return { type: "text_delta", contentIndex: 0, delta, partial: P };
		});
	}
	steps.push(() => ({ type: "text_end", contentIndex: 0, content: P.content[0].text, partial: P }));
	steps.push(() => ({ type: "done", reason: "stop", message: P }));
	return steps;
}

/** Runs one prompt on an Agent whose stream function plays `play(sink, P)` on a stream of `kind`; records what listeners see. */
async function run(impl, kind, play) {
	const seen = [];
	const agent = new impl.Agent({
		initialState: { model: MODEL },
		// An async stream function, as pi-coding-agent's: the stream comes a microtask later.
		streamFn: async () => {
			const { sink, stream } = KINDS[kind]();
			play(sink, partial());
			return stream;
		},
	});
	agent.subscribe((event) => {
		const message = event.type === "agent_end" ? event.messages.at(-1) : event.message;
		if (message?.role !== "assistant") return;
		const label = event.type === "message_update" ? `${event.type}:${event.assistantMessageEvent.type}` : event.type;
		seen.push({ label, text: message.content.map((c) => c.text).join(""), responseId: message.responseId, marks: message.marks, sameAsTranscript: message === agent.state.messages.at(-1) });
	});
	await agent.prompt("go");
	return { seen };
}

for (const kind of Object.keys(KINDS)) {
	// pi-ai's OpenAI provider: `start` arrives with the response headers, and `responseId` is written when
	// the first chunk has gone through the SDK's async iteration, some microtasks later.
	for (const ticks of [0, 1, 2, 3, 4, 6]) {
		scenario(`message_start's copy as the event is read (${kind} stream, responseId written ${ticks} microtasks after start)`, (impl) =>
			run(impl, kind, (sink, P) =>
				macrotasks([
					() => {
						sink.push({ type: "start", partial: P });
						markAfter(P, ticks, "id");
					},
					() => (P.responseId = "chatcmpl-1"),
					() => {
						for (const step of answer(P, ["Hel", "lo"]).slice(1)) sink.push(step());
					},
				]),
			),
		);
	}

	// One event per network read, the partial written at every microtask after each push until the next
	// read (a provider whose per-chunk work spans microtasks), and nothing written after `done`.
	scenario(`each event's message as listeners see it (${kind} stream, one event per macrotask, written between pushes)`, (impl) =>
		run(impl, kind, (sink, P) => {
			const steps = answer(P, ["a", "b", "c"]);
			macrotasks(
				steps.map((step, i) => () => {
					sink.push(step());
					if (i < steps.length - 1) markEachTick(P, 8, `e${i}.`);
				}),
			);
		}),
	);

	// A provider that runs ahead of the reader: several events per network read, pushed in one burst with
	// the partial written between them (the reader is still awaiting the first when the burst ends).
	scenario(`each event's message as listeners see it (${kind} stream, bursts of events that run ahead of the reader)`, (impl) =>
		run(impl, kind, (sink, P) => {
			const steps = answer(P, ["one ", "two ", "three ", "four"]);
			const bursts = [steps.slice(0, 3), steps.slice(3, 5), steps.slice(5)];
			macrotasks(
				bursts.map((burst, i) => () => {
					for (const step of burst) {
						sink.push(step());
						P.marks += `b${i} `;
					}
				}),
			);
		}),
	);
}
