// Differential harness for streamProxy: runs one scripted proxy exchange against an implementation and
// records everything observable, then compares implementations.
//
// Implementations: `reference` = streamProxy of @earendil-works/pi-agent-core 1.4.0 (the oracle);
// `ours` = streamProxy of ../../../pkg/index.js, imported lazily (the package may not be built yet).
//   PI_DIFF_ONLY=reference  -> the oracle only
//   PI_DIFF_ONLY=ours       -> the package only (contract checks, no comparison)
//   unset                   -> both when pkg/index.js exists, else the oracle only
//   PI_PROXY_OURS_MODULE=<specifier> -> use that module as `ours` (harness self-check:
//                              PI_PROXY_OURS_MODULE=@earendil-works/pi-agent-core compares the oracle to itself)
//
// A run: start a fresh SSE server with the scenario's routes, call streamProxy(model, context, options),
// consume the stream with `for await`, snapshot every event as it arrives (the `partial` object is mutated
// live, so it is deep-copied at each event), then `result()` twice: right after the iterator finished
// ("atEnd") and once the server has closed the response and the client had time to read the rest
// ("settled" — streamProxy mutates the result after the terminal event). The server is closed by the run.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startSseServer } from "../../support/sse-server.mjs";
import { snapshot, normalizeMessage, recordEvent, withoutSnapshot, describeDiff, RUNTIME_ERROR } from "./normalize.mjs";

export const PKG_ENTRY = fileURLToPath(new URL("../../../pkg/index.js", import.meta.url));

// ---------------------------------------------------------------------------------------------------------
// Implementations

let implsPromise;

/** [{ name, streamProxy } | { name, loadError }], reference first. */
export function loadImpls() {
	implsPromise ??= (async () => {
		const only = process.env.PI_DIFF_ONLY;
		if (only !== undefined && only !== "" && only !== "reference" && only !== "ours") {
			throw new Error(`PI_DIFF_ONLY must be "reference" or "ours", got ${JSON.stringify(only)}`);
		}
		const list = [];
		if (only !== "ours") {
			const { streamProxy } = await import("@earendil-works/pi-agent-core");
			list.push({ name: "reference", streamProxy });
		}
		if (only !== "reference") {
			// PI_PROXY_OURS_MODULE (a module specifier or path) stands in for pkg/index.js; with
			// "@earendil-works/pi-agent-core" it runs the reference against itself, which checks that the
			// harness is deterministic (no timing-dependent snapshots).
			const override = process.env.PI_PROXY_OURS_MODULE;
			if (override || existsSync(PKG_ENTRY)) {
				try {
					const spec = override ? (override.startsWith(".") || override.startsWith("/") ? pathToFileURL(override).href : override) : pathToFileURL(PKG_ENTRY).href;
					const mod = await import(spec);
					// A package that loads but has no streamProxy yet: exports.test.mjs fails once, the
					// scenarios skip `ours` instead of failing hundreds of times.
					if (typeof mod.streamProxy !== "function") list.push({ name: "ours", missing: "pkg/index.js has no streamProxy export" });
					else list.push({ name: "ours", streamProxy: mod.streamProxy });
				} catch (e) {
					// A present but broken package fails the `ours` subtests loudly instead of dropping out.
					list.push({ name: "ours", loadError: e });
				}
			} else if (only === "ours") {
				throw new Error(`PI_DIFF_ONLY=ours but ${PKG_ENTRY} does not exist`);
			}
		}
		return list;
	})();
	return implsPromise;
}

/** The implementations that can run: [{ name, streamProxy } | { name, loadError }] (missing ones dropped). */
export async function runnableImpls() {
	return (await loadImpls()).filter((i) => !i.missing);
}

// ---------------------------------------------------------------------------------------------------------
// Fixtures

export const MODEL = Object.freeze({
	id: "gpt-test-1",
	name: "GPT Test 1",
	api: "openai-completions",
	provider: "openai",
	baseUrl: "https://api.example.invalid/v1",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
	contextWindow: 128000,
	maxTokens: 16384,
});

export const CONTEXT = Object.freeze({
	systemPrompt: "You are terse. ✓",
	messages: [
		{ role: "user", content: "What's the weather in Paris? 日本語 🦀", timestamp: 1700000000000 },
	],
	tools: [
		{
			name: "get_weather",
			description: "Weather for a city",
			parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
		},
	],
});

export const USAGE = Object.freeze({
	input: 120,
	output: 34,
	cacheRead: 5,
	cacheWrite: 0,
	totalTokens: 159,
	cost: { input: 0.00015, output: 0.00034, cacheRead: 0.000001, cacheWrite: 0, total: 0.000491 },
});

/** Builders for proxy (wire) events, the server side of. */
export const E = {
	start: () => ({ type: "start" }),
	textStart: (i) => ({ type: "text_start", contentIndex: i }),
	textDelta: (i, delta) => ({ type: "text_delta", contentIndex: i, delta }),
	textEnd: (i, contentSignature, extra = {}) => ({ type: "text_end", contentIndex: i, ...(contentSignature !== undefined ? { contentSignature } : {}), ...extra }),
	thinkingStart: (i) => ({ type: "thinking_start", contentIndex: i }),
	thinkingDelta: (i, delta) => ({ type: "thinking_delta", contentIndex: i, delta }),
	thinkingEnd: (i, contentSignature) => ({ type: "thinking_end", contentIndex: i, ...(contentSignature !== undefined ? { contentSignature } : {}) }),
	toolStart: (i, id, toolName) => ({ type: "toolcall_start", contentIndex: i, id, toolName }),
	toolDelta: (i, delta) => ({ type: "toolcall_delta", contentIndex: i, delta }),
	toolEnd: (i, toolCall) => ({ type: "toolcall_end", contentIndex: i, toolCall }),
	done: (reason = "stop", usage = USAGE, extra = {}) => ({ type: "done", reason, usage, ...extra }),
	error: (reason = "error", errorMessage, usage = USAGE, extra = {}) => ({
		type: "error",
		reason,
		...(errorMessage !== undefined ? { errorMessage } : {}),
		usage,
		...extra,
	}),
};

/** The default pacing: one write per SSE event, 8 ms apart, so every event is its own read. */
export const PACED = Object.freeze({ chunking: "item", delayMs: 8 });

/** A 200 text/event-stream script with the given lines/events, paced by default. */
export function sseScript(lines, extra = {}) {
	return { status: 200, lines, ...PACED, ...extra };
}

// ---------------------------------------------------------------------------------------------------------
// One run

const RUN_TIMEOUT_MS = 10000;
const SETTLE_MS = 60;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// console.warn capture that nests: concurrent runs each get every warning, and the original console.warn
// comes back when the last run ends.
const warnSinks = new Set();
let savedWarn;
function captureWarn(sink) {
	if (warnSinks.size === 0) {
		savedWarn = console.warn;
		console.warn = (...args) => {
			for (const s of warnSinks) s(args);
		};
	}
	warnSinks.add(sink);
	return () => {
		warnSinks.delete(sink);
		if (warnSinks.size === 0) console.warn = savedWarn;
	};
}

/**
 * Runs `spec` against `impl`. spec:
 *   routes        SSE server routes (default { "/api/stream": spec.script })
 *   script        shortcut for the /api/stream route
 *   proxyUrl      (serverUrl) => proxyUrl (default: the server URL); or a fixed string (no server needed)
 *   noServer      do not start a server (proxyUrl must be a string or a function of nothing)
 *   options       extra streamProxy options (object or (serverUrl) => object); authToken defaults to "tok-123"
 *   model, context
 *   abort         { before: true }          abort before calling streamProxy
 *                 { afterEvents: n }        abort in the consumer, right after the n-th event
 *                 { afterMs: n }            abort n ms after the call
 *                 { afterTerminal: true }   abort right after the iterator finished (connection may be open)
 *                 { afterCompletion: true } abort once the response is closed and the stream has settled
 *                 any of them with `reason` (passed to controller.abort(reason))
 *   breakAfterEvents  leave the for-await loop after n events (the iterator's return() runs)
 *   consume       "iterate" (default): for await from the start; "after-result": await result() first, then
 *                 iterate (all events are queued by then); "result-only": never iterate
 *   onEvent       (event, index) => void, called synchronously as each event is received (live objects)
 *   runtimeError  true when the final errorMessage comes from the JS runtime (normalised, see normalize.mjs)
 *   timeoutMs
 * Returns a plain record (see the bottom) plus `live` (raw objects, for identity checks).
 */
export async function runProxy(impl, spec) {
	if (impl.loadError) throw impl.loadError;
	const norm = { runtimeError: !!spec.runtimeError };
	const server = spec.noServer ? undefined : await startSseServer(spec.routes ?? { "/api/stream": spec.script });
	const warnings = [];
	const unhandled = [];
	const onUnhandled = (reason) => unhandled.push(reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason));
	process.on("unhandledRejection", onUnhandled);
	const releaseWarn = captureWarn((args) => warnings.push(args.map((a) => (typeof a === "string" ? a : snapshot(a)))));
	const controller = new AbortController();
	let timer;
	let abortTimer;
	try {
		const serverUrl = server?.url;
		const proxyUrl =
			typeof spec.proxyUrl === "function" ? spec.proxyUrl(serverUrl) : spec.proxyUrl !== undefined ? spec.proxyUrl : serverUrl;
		const extra = typeof spec.options === "function" ? spec.options(serverUrl) : spec.options ?? {};
		const options = { authToken: "tok-123", ...extra, proxyUrl };
		if (spec.abort) options.signal = controller.signal;
		const abortNow = () => ("reason" in (spec.abort ?? {}) ? controller.abort(spec.abort.reason) : controller.abort());
		if (spec.abort?.before) abortNow();

		const t0 = Date.now();
		const stream = impl.streamProxy(spec.model ?? MODEL, spec.context ?? CONTEXT, options);
		const shape = {
			thenable: typeof stream?.then === "function",
			asyncIterable: typeof stream?.[Symbol.asyncIterator] === "function",
			hasResult: typeof stream?.result === "function",
		};
		assert.equal(shape.thenable, false, "streamProxy must return the stream synchronously, not a promise");
		assert.ok(shape.asyncIterable && shape.hasResult, "the stream must be async-iterable and have result()");
		const resultPromise = stream.result();
		shape.resultSamePromise = stream.result() === resultPromise;

		if (spec.abort?.afterMs !== undefined) abortTimer = setTimeout(abortNow, spec.abort.afterMs);

		const events = [];
		const liveEvents = [];
		let prevBlocks;
		const consume = (async () => {
			if (spec.consume === "result-only") return;
			if (spec.consume === "after-result") await resultPromise;
			for await (const ev of stream) {
				const { record, blocks } = recordEvent(ev, prevBlocks, norm);
				prevBlocks = blocks;
				events.push(record);
				liveEvents.push({ ev, blocks });
				spec.onEvent?.(ev, events.length - 1);
				if (spec.abort?.afterEvents !== undefined && events.length === spec.abort.afterEvents) abortNow();
				if (events.length === spec.breakAfterEvents) break;
			}
		})();
		const timeoutMs = spec.timeoutMs ?? RUN_TIMEOUT_MS;
		const timeout = new Promise((_, reject) => {
			timer = setTimeout(() => {
				controller.abort();
				reject(
					new Error(
						`run timed out after ${timeoutMs} ms (stream never ended); events so far: ${JSON.stringify(events.map((e) => e.type))}`,
					),
				);
			}, timeoutMs);
		});
		timeout.catch(() => {}); // observed through the races below; never an unhandled rejection
		await Promise.race([consume, timeout]);
		const resultAtEnd = await Promise.race([resultPromise, timeout]);
		const atEnd = normalizeMessage(snapshot(resultAtEnd), norm);

		if (spec.abort?.afterTerminal) controller.abort();
		if (server) await Promise.race([server.settled(), timeout]);
		await sleep(SETTLE_MS);
		if (spec.abort?.afterCompletion) {
			controller.abort();
			await sleep(SETTLE_MS);
		}
		const resultSettled = await resultPromise;
		const t1 = Date.now();
		const settled = normalizeMessage(snapshot(resultSettled), norm);

		// Raw facts that the normalisation hides.
		const raw = {
			timestamp: resultSettled?.timestamp,
			durationMs: resultSettled?.durationMs,
			errorMessage: resultSettled?.errorMessage,
			t0,
			t1,
		};
		const liveness = liveEvents.map(({ ev }) => {
			const carrier = ev.type === "done" ? ev.message : ev.type === "error" ? ev.error : ev.partial;
			return carrier === resultSettled;
		});

		const posts = server ? server.requests.filter((r) => r.method === "POST") : [];
		const request = posts[0] && {
			method: posts[0].method,
			path: posts[0].path,
			authorization: posts[0].headers.authorization,
			contentType: posts[0].headers["content-type"],
			body: posts[0].body,
			rawBody: posts[0].rawBody,
			optionKeys: posts[0].body?.options ? Object.keys(posts[0].body.options) : undefined,
		};
		return {
			impl: impl.name,
			shape,
			events,
			atEnd,
			settled,
			liveness,
			request,
			postCount: posts.length,
			clientClosed: posts.map((p) => p.clientClosed),
			warnings,
			unhandled,
			raw,
			live: { events: liveEvents, result: resultSettled },
		};
	} finally {
		clearTimeout(timer);
		clearTimeout(abortTimer);
		releaseWarn();
		process.off("unhandledRejection", onUnhandled);
		await server?.close();
	}
}

// ---------------------------------------------------------------------------------------------------------
// Invariants every run must satisfy (both implementations)

export function assertInvariants(run, spec = {}) {
	assert.equal(run.shape.resultSamePromise, true, "result() returns the same promise every call");
	assert.deepEqual(run.unhandled, [], "the producer never rejects (no unhandled rejections)");
	const types = run.events.map((e) => e.type);
	if (spec.consume !== "result-only" && spec.breakAfterEvents === undefined) {
		const terminals = types.filter((t) => t === "done" || t === "error");
		assert.equal(terminals.length, 1, `exactly one terminal event is delivered, got ${JSON.stringify(types)}`);
		assert.ok(types.at(-1) === "done" || types.at(-1) === "error", "the terminal event is the last one delivered");
	}
	assert.ok(
		run.liveness.every(Boolean),
		`every event carries the one live partial that result() resolves to (${JSON.stringify(run.liveness)})`,
	);
	assert.equal(typeof run.raw.timestamp, "number", "timestamp is a number");
	assert.ok(run.raw.timestamp >= run.raw.t0 && run.raw.timestamp <= run.raw.t1, "timestamp is Date.now() at request time");
	assert.ok(Number.isInteger(run.raw.durationMs) && run.raw.durationMs >= 0, "the terminal message gets durationMs");
	if (spec.runtimeError) {
		assert.equal(typeof run.raw.errorMessage, "string");
		assert.ok(run.raw.errorMessage.length > 0, "a runtime error message is not empty");
	}
}

// ---------------------------------------------------------------------------------------------------------
// Comparison

/** The part of a run that two implementations must agree on. `snapshots: false` drops partial snapshots. */
export function comparable(run, { snapshots = true } = {}) {
	return {
		events: snapshots ? run.events : run.events.map(withoutSnapshot),
		resultAtEnd: snapshots ? run.atEnd : undefined,
		result: run.settled,
		request: run.request,
		postCount: run.postCount,
		warnings: run.warnings,
	};
}

export function assertSameRun(expected, actual, opts = {}) {
	const e = comparable(expected, opts);
	const a = comparable(actual, opts);
	// Most useful first: the event sequence (types only), then everything.
	const te = e.events.map((x) => x.type);
	const ta = a.events.map((x) => x.type);
	let msg = describeDiff(te, ta, "event types: ");
	msg ??= describeDiff(e, a);
	if (msg) assert.fail(msg);
}

// ---------------------------------------------------------------------------------------------------------
// Scenario wrapper: one top-level test, one subtest per implementation, one comparison subtest.

/**
 * scenario(name, spec) where spec is a runProxy spec plus
 *   expect(run, implName)   contract assertions, run for every implementation
 *   snapshots               false: compare events without partial snapshots (chunk-timing dependent)
 *   around(run)             wraps each run (e.g. installs a fetch mock for its duration); must return run()'s value
 */
export function scenario(name, spec, { timeout = 30000 } = {}) {
	test(name, { timeout }, async (t) => {
		const impls = await loadImpls();
		const runs = {};
		for (const impl of impls) {
			if (impl.missing) {
				await t.test(impl.name, (st) => st.skip(impl.missing));
				continue;
			}
			await t.test(impl.name, async () => {
				const run = spec.around ? await spec.around(() => runProxy(impl, spec)) : await runProxy(impl, spec);
				runs[impl.name] = run;
				if (spec.runtimeError) t.diagnostic(`${impl.name} runtime error message: ${JSON.stringify(run.raw.errorMessage)}`);
				assertInvariants(run, spec);
				await spec.expect?.(run, impl.name);
			});
		}
		if (impls.length === 2 && !impls.some((i) => i.missing)) {
			await t.test("ours matches reference", () => {
				assert.ok(runs.reference, "the reference run failed, nothing to compare");
				assert.ok(runs.ours, "the ours run failed before producing a record");
				assertSameRun(runs.reference, runs.ours, { snapshots: spec.snapshots !== false });
			});
		}
	});
}

// ---------------------------------------------------------------------------------------------------------
// Small assertion helpers for expect()

export const types = (run) => run.events.map((e) => e.type);
export { RUNTIME_ERROR };

/** The last event (the terminal one). */
export const last = (run) => run.events.at(-1);
