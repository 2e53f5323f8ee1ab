// Self-test of the differential harness: the reference compared with itself must agree, and small
// deliberate mutations of it (each one a plausible porting mistake) must be reported with the right path.
import test from "node:test";
import assert from "node:assert/strict";
import { streamProxy as referenceStreamProxy } from "@earendil-works/pi-agent-core";
import { runProxy, assertSameRun, sseScript, E } from "./harness.mjs";

const reference = { name: "reference", streamProxy: referenceStreamProxy };

/** The reference with `mutate(event)` applied to each event as the consumer receives it. */
function mutant(name, mutate, mapOptions = (o) => o) {
	return {
		name,
		streamProxy(model, context, options) {
			const inner = referenceStreamProxy(model, context, mapOptions(options));
			return {
				result: () => inner.result(),
				async *[Symbol.asyncIterator]() {
					for await (const ev of inner) yield mutate(ev) ?? ev;
				},
			};
		},
	};
}

const SPEC = {
	script: sseScript([
		E.start(),
		E.textStart(2),
		E.textDelta(2, "abc"),
		E.textEnd(2),
		E.toolStart(3, "c", "t"),
		E.toolDelta(3, '{"a": 1}'),
		E.toolEnd(3, { type: "toolCall", id: "c", name: "t", arguments: { a: 1 } }),
		{ type: "mystery" },
		E.done("stop"),
	]),
	options: { temperature: 0.5 },
};

test("harness: the reference agrees with itself", { timeout: 20000 }, async () => {
	const a = await runProxy(reference, SPEC);
	const b = await runProxy(reference, SPEC);
	assertSameRun(a, b);
});

const MUTANTS = [
	["textSignature key missing when undefined", (ev) => {
		if (ev.type === "text_end") delete ev.partial.content[ev.contentIndex].textSignature;
	}, /text_end|textSignature/],
	["holes filled with undefined", (ev) => {
		const c = ev.partial?.content;
		if (c) for (let i = 0; i < c.length; i++) if (!(i in c)) c[i] = undefined;
	}, /content\[0\]/],
	["usage moved to the end of the message (key order)", (ev) => {
		if (ev.type === "done") {
			const u = ev.message.usage;
			delete ev.message.usage;
			ev.message.usage = u;
		}
	}, /key order/],
	["an extra field on text_delta events", (ev) => {
		if (ev.type === "text_delta") return { ...ev, extra: true };
	}, /\$keys|extra/],
	["toolcall_delta mutates the block in place instead of replacing it", null, /\$replacedBlocks/],
	["a different request body", (ev) => ev, /request/, (o) => ({ ...o, temperature: 0.7 })],
	["no console.warn for unknown events", null, /warnings/],
];

for (const [label, mutate, pattern, mapOptions] of MUTANTS) {
	test(`harness: detects "${label}"`, { timeout: 20000 }, async () => {
		let impl;
		if (label.startsWith("toolcall_delta mutates")) {
			// Re-install the previous block object (same identity) with the new fields.
			const prev = new Map();
			impl = mutant(label, (ev) => {
				if (ev.type === "toolcall_start") prev.set(ev.contentIndex, ev.partial.content[ev.contentIndex]);
				if (ev.type === "toolcall_delta") {
					const old = prev.get(ev.contentIndex);
					Object.assign(old, ev.partial.content[ev.contentIndex]);
					ev.partial.content[ev.contentIndex] = old;
				}
			});
		} else if (label.startsWith("no console.warn")) {
			impl = {
				name: label,
				streamProxy(model, context, options) {
					const s = referenceStreamProxy(model, context, options);
					const warn = console.warn;
					console.warn = () => {};
					s.result().finally(() => (console.warn = warn));
					return s;
				},
			};
		} else {
			impl = mutant(label, mutate, mapOptions);
		}
		const a = await runProxy(reference, SPEC);
		const b = await runProxy(impl, SPEC);
		assert.throws(() => assertSameRun(a, b), (e) => {
			assert.match(e.message, pattern);
			return true;
		});
	});
}
