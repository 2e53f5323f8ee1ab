// Deliberate deviations of ours from the reference. Each test asserts OUR behaviour only and is skipped
// when pkg/ is not built (or PI_DIFF_ONLY=reference). The reference behaviour is noted for each.
import test from "node:test";
import assert from "node:assert/strict";
import { parseStreamingJson } from "@earendil-works/pi-ai";
import { runProxy, loadImpls, sseScript, E, assertInvariants } from "./harness.mjs";
import { snapshot, firstDiff } from "./normalize.mjs";

async function oursOrSkip(t) {
	const impl = (await loadImpls()).find((i) => i.name === "ours");
	if (!impl || impl.missing) {
		t.skip(process.env.PI_DIFF_ONLY === "reference" ? "PI_DIFF_ONLY=reference" : impl?.missing ?? "pkg/ not built");
		return undefined;
	}
	return impl;
}

// ----- 1. OpenAI-shaped HTTP error bodies -------------------------------------------------------------------------
// Reference: `Proxy error: ${data.error}` -> "Proxy error: [object Object]" for { error: { message } }.
// Ours: "Proxy error: <message>".

const OPENAI_ERRORS = [
	[500, { error: { message: "The server had an error while processing your request.", type: "server_error" } }, "Proxy error: The server had an error while processing your request."],
	[401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key", param: null } }, "Proxy error: Incorrect API key provided."],
	[429, { error: { message: "Rate limit reached ⏳" } }, "Proxy error: Rate limit reached ⏳"],
];

for (const [status, json, message] of OPENAI_ERRORS) {
	test(`deviation: HTTP ${status} with {error: {message}} -> "${message}"`, { timeout: 20000 }, async (t) => {
		const impl = await oursOrSkip(t);
		if (!impl) return;
		const run = await runProxy(impl, { script: { status, json } });
		assertInvariants(run);
		assert.deepEqual(run.events.map((e) => e.type), ["error"]);
		assert.equal(run.events[0].reason, "error");
		assert.equal(run.settled.stopReason, "error");
		assert.equal(run.settled.errorMessage, message);
	});
}

// ----- 2. Structural sharing of streamed tool-call arguments -------------------------------------------------------
// Reference: every toolcall_delta re-parses partialJson, so `arguments` and everything in it are new
// objects at every delta. Ours: `arguments` is a new object only when its value changed, nested objects and
// arrays whose value did not change keep their identity, and an object handed out is never mutated later.
// Values still equal the reference's parseStreamingJson at every step, and a full parse at the end.

const LONG = "lorem ipsum dolor sit amet, ".repeat(8);
const DOCS = [
	['{"a":{"x":1},"b":[1,2],"c":"' + LONG + '"}', 5],
	['{"list": [{"k": 1}, {"k": [2, {"deep": true}]}], "obj": {"inner": {"e": null, "s": "ü→✓"}}, "n": 12.5, "tail": "' + LONG + '"}', 3],
];

/** Every object/array inside `v` with its path ("$" for v itself). */
function containers(v, path = "$", out = new Map()) {
	if (v && typeof v === "object") {
		out.set(path, v);
		for (const k of Object.keys(v)) containers(v[k], `${path}.${k}`, out);
	}
	return out;
}

function get(v, path) {
	let cur = v;
	for (const k of path.split(".").slice(1)) {
		if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, k)) return undefined;
		cur = cur[k];
	}
	return cur;
}

function split(text, n) {
	const out = [];
	for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
	return out;
}

for (const [docIndex, [full, step]] of DOCS.entries()) {
	test(`deviation: tool-call arguments keep unchanged parts by identity while streaming (doc ${docIndex + 1}, ${step}-char deltas)`, { timeout: 30000 }, async (t) => {
		const impl = await oursOrSkip(t);
		if (!impl) return;
		const deltas = split(full, step);
		const seen = []; // { text, args (live), clone }
		let text = "";
		const run = await runProxy(impl, {
			script: sseScript([
				E.start(),
				E.toolStart(0, "call_s", "share"),
				...deltas.map((d) => E.toolDelta(0, d)),
				// No `arguments` in the server's toolCall: the client-side parse is what remains.
				E.toolEnd(0, { type: "toolCall", id: "call_s", name: "share" }),
				E.done("toolUse"),
			]),
			onEvent(ev) {
				if (ev.type !== "toolcall_delta") return;
				text += ev.delta;
				const args = ev.partial.content[0].arguments;
				seen.push({ text, args, clone: snapshot(args) });
			},
		});
		assertInvariants(run);
		assert.equal(seen.length, deltas.length);

		await t.test("values equal pi-ai parseStreamingJson at every delta", () => {
			for (const [k, s] of seen.entries()) {
				const expected = snapshot(parseStreamingJson(s.text) || {});
				const d = firstDiff(expected, s.clone);
				if (d) assert.fail(`delta ${k} (partialJson ${JSON.stringify(s.text)}): at ${d.path} expected ${d.expected}, actual ${d.actual}`);
			}
		});

		await t.test("final arguments deep-equal JSON.parse of the full text", () => {
			assert.deepEqual(seen.at(-1).clone, JSON.parse(full));
			assert.deepEqual(run.settled.content[0].arguments, JSON.parse(full));
		});

		await t.test("`arguments` is a new object exactly when its value changed", () => {
			let unchanged = 0;
			for (let k = 1; k < seen.length; k++) {
				const same = firstDiff(seen[k - 1].clone, seen[k].clone) === undefined;
				if (same) {
					unchanged++;
					assert.ok(seen[k].args === seen[k - 1].args, `delta ${k} (${JSON.stringify(deltas[k])}) changed nothing but arguments is a new object`);
				} else {
					assert.ok(seen[k].args !== seen[k - 1].args, `delta ${k} (${JSON.stringify(deltas[k])}) changed the value but arguments is the same object`);
				}
			}
			// Doc 2's 3-char split has steps inside keys and after commas that change nothing.
			if (docIndex === 1) assert.ok(unchanged > 0, "the delta split includes steps that change nothing (test is not vacuous)");
		});

		await t.test("nested objects/arrays whose value did not change keep their identity", () => {
			let kept = 0;
			for (let k = 1; k < seen.length; k++) {
				const before = containers(seen[k - 1].args);
				for (const [path, prev] of before) {
					if (path === "$") continue;
					const now = get(seen[k].args, path);
					if (now === undefined) continue;
					const same = firstDiff(get(seen[k - 1].clone, path), get(seen[k].clone, path)) === undefined;
					if (same) {
						kept++;
						assert.ok(now === prev, `delta ${k} (${JSON.stringify(deltas[k])}): ${path} did not change but is a new object`);
					}
				}
			}
			assert.ok(kept > 0, "some nested container stays unchanged across deltas (test is not vacuous)");
		});

		if (docIndex === 0) {
			await t.test("`a` and `b` keep their identity from the delta that closes them while `c` grows", () => {
				const firstA = seen.findIndex((s) => s.text.length >= full.indexOf("},") + 1);
				const firstB = seen.findIndex((s) => s.text.length >= full.indexOf("],") + 1);
				let grew = 0;
				for (let k = firstA + 1; k < seen.length; k++) {
					assert.ok(seen[k].args.a === seen[firstA].args.a, `delta ${k}: args.a lost its identity`);
					if (k > firstB) assert.ok(seen[k].args.b === seen[firstB].args.b, `delta ${k}: args.b lost its identity`);
					if (seen[k].clone.c !== seen[k - 1].clone.c) grew++;
				}
				assert.ok(grew > 5, "c grew over several deltas");
			});
		}

		await t.test("arguments handed out are never mutated afterwards", () => {
			for (const [k, s] of seen.entries()) {
				const d = firstDiff(s.clone, snapshot(s.args));
				if (d) assert.fail(`the arguments of delta ${k} were mutated later: at ${d.path} was ${d.expected}, now ${d.actual}`);
			}
		});
	});
}

// ----- 3. What 1.5 and 1.6 changed in streamProxy ---------------------------------------------------------------------
// Run against 1.6.0's streamProxy (pi-agent-core 1.6.0, an aliased devDependency) beside ours.

const v16 = { name: "1.6.0", streamProxy: (await import("pi-agent-core-1-6")).streamProxy };
const reference = { name: "reference", streamProxy: (await import("@earendil-works/pi-agent-core")).streamProxy };

test("1.6: disableContinuation is sent to the server, where 1.6.0 puts it (1.4.0 drops it)", { timeout: 20000 }, async (t) => {
	const impl = await oursOrSkip(t);
	if (!impl) return;
	const options = { temperature: 0.5, sessionId: "s-1", disableContinuation: true, metadata: { m: 1 } };
	const spec = { script: sseScript([E.start(), E.done("stop")]), options };
	const [ours, newer, older] = [await runProxy(impl, spec), await runProxy(v16, spec), await runProxy(reference, spec)];
	assert.equal(ours.request.body.options.disableContinuation, true);
	assert.equal(ours.request.rawBody, newer.request.rawBody, "the same body as 1.6.0, key order included");
	assert.equal("disableContinuation" in older.request.body.options, false, "1.4.0 drops it");
	// Without the option the body is 1.4.0's.
	const plain = { script: spec.script, options: { temperature: 0.5 } };
	assert.equal((await runProxy(impl, plain)).request.rawBody, (await runProxy(reference, plain)).request.rawBody);
});

test("1.6: a toolcall_delta after its call's toolcall_end ends the stream with an error, as in 1.6.0 (1.4.0 replaces the finished arguments)", { timeout: 20000 }, async (t) => {
	const impl = await oursOrSkip(t);
	if (!impl) return;
	const spec = {
		script: sseScript([
			E.start(),
			E.toolStart(0, "c1", "t"),
			E.toolDelta(0, '{"a": 1}'),
			E.toolEnd(0, { type: "toolCall", id: "c1", name: "t", arguments: { a: 1 } }),
			E.toolDelta(0, '{"late": true}'),
			E.done("toolUse"),
		]),
	};
	for (const run of [await runProxy(impl, spec), await runProxy(v16, spec)]) {
		assert.equal(run.settled.stopReason, "error");
		assert.equal(run.settled.errorMessage, "Received toolcall_delta for non-toolCall content");
		assert.deepEqual(run.settled.content[0].arguments, { a: 1 }, "the finished call keeps its arguments");
		assert.deepEqual(run.events.map((e) => e.type), ["start", "toolcall_start", "toolcall_delta", "toolcall_end", "error"]);
	}
	const older = await runProxy(reference, spec);
	assert.equal(older.settled.content[0].partialJson, 'undefined{"late": true}', "1.4.0 goes on with a corrupted call");
});

test("1.6: a toolcall_delta for a call that never started ends the stream with an error, in 1.4.0 and 1.6.0 alike", { timeout: 20000 }, async (t) => {
	const impl = await oursOrSkip(t);
	if (!impl) return;
	const spec = { script: sseScript([E.start(), E.textStart(0), E.toolDelta(0, '{"a": 1}'), E.done("toolUse")]) };
	for (const run of [await runProxy(impl, spec), await runProxy(v16, spec), await runProxy(reference, spec)]) {
		assert.equal(run.settled.errorMessage, "Received toolcall_delta for non-toolCall content");
	}
});
