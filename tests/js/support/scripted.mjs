// A scripted StreamFn: plays a list of assistant responses through an implementation's own
// createAssistantMessageEventStream() and records every call it receives.
//
//   const streamFn = scripted(impl, [response, response, ...], { tr })
//
// A response is a spec object or a function (call) => spec, where call = { index, model, context, options }.
// Spec fields (all optional):
//   content      list of blocks, streamed in order:
//                  { text: "Hi", deltas?: ["H", "i"] }
//                  { thinking: "hmm", deltas?: [...] }
//                  { toolCall: { id, name, arguments }, deltas?: ['{"a":', '1}'] }
//   stopReason   default "toolUse" when a toolCall block is present, else "stop"
//   errorMessage, usage, extra (extra fields copied onto the message, e.g. { responseId })
//   timing       "sync" (every event pushed before streamFn returns, default) | "micro" (one microtask
//                between events) | "timer" (setTimeout(delayMs ?? 0) between events)
//   noStart      do not push the `start` event
//   terminal     "auto" (default: done, or error for stopReason error/aborted) | "done" | "error" |
//                "end-result" (no terminal event; stream.end(finalMessage)) | "end-bare" (stream.end() only)
//   raw          list of extra raw events pushed right after `start`: objects whose `partial`/`message`/`error`
//                fields may be the string "partial"/"final" (replaced by the current partial / final message)
//   throwSync    value thrown synchronously by streamFn
//   reject       value the streamFn's promise rejects with (streamFn becomes async)
//   returnValue  value returned instead of a stream
//   async        streamFn returns a Promise of the stream
//   wrap         "eventstream" (an impl.EventStream of the same protocol) | "iterable" (plain object with
//                [Symbol.asyncIterator] and result())
//   honourSignal default true: an aborted options.signal ends the response with stopReason "aborted"
//   hang         after the content, wait until options.signal aborts (then aborted)
//   beforeEvent  (i, event, call) => void, called before each push (e.g. to abort)
//   timestamp    number (default 1000 + call index; below the stream's clock, so no durationMs) | "now"
//   mutable      one partial object mutated in place and returned as the final message (provider style);
//                default: a fresh partial object per event and a fresh final message
import { errorText, signalState, snap } from "./trace.mjs";
import { assertStrictContext } from "../../support/strict-transcript.mjs";

export const MODEL = Object.freeze({
	id: "model-a",
	name: "Model A",
	api: "test-api",
	provider: "test-provider",
	baseUrl: "https://example.invalid",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 1000,
	maxTokens: 100,
});

export const MODEL_B = Object.freeze({ ...MODEL, id: "model-b", name: "Model B", provider: "provider-b", api: "api-b" });

export function zeroUsage() {
	return {
		input: 0,
		output: 0,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: 0,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	};
}

let tsCounter = 0;
/** Small fixed timestamps (kept verbatim by the normaliser). Reset per scenario run by the harness. */
export function resetTimestamps() {
	tsCounter = 0;
}
export function ts() {
	return 100 + tsCounter++;
}

export function user(text, extra = {}) {
	return { role: "user", content: text, timestamp: ts(), ...extra };
}
export function userBlocks(text) {
	return { role: "user", content: [{ type: "text", text }], timestamp: ts() };
}
export function system(content, extra = {}) {
	return { role: "system", content, ...extra, timestamp: ts() };
}
export function assistant(text, extra = {}) {
	return {
		role: "assistant",
		content: [{ type: "text", text }],
		api: MODEL.api,
		provider: MODEL.provider,
		model: MODEL.id,
		usage: zeroUsage(),
		stopReason: "stop",
		timestamp: ts(),
		...extra,
	};
}
export function toolResultMsg(toolCallId, toolName, text) {
	return {
		role: "toolResult",
		toolCallId,
		toolName,
		content: [{ type: "text", text }],
		details: {},
		isError: false,
		timestamp: ts(),
	};
}

/** Shorthand blocks. */
export const text = (t, deltas) => ({ text: t, ...(deltas ? { deltas } : {}) });
export const thinking = (t, deltas) => ({ thinking: t, ...(deltas ? { deltas } : {}) });
export const call = (id, name, args = {}, deltas) => ({ toolCall: { id, name, arguments: args }, ...(deltas ? { deltas } : {}) });

function cloneBlock(b) {
	if (b.type === "toolCall") return { ...b, arguments: structuredClone(b.arguments) };
	return { ...b };
}

function tryParse(s, fallback) {
	try {
		const v = JSON.parse(s);
		return v && typeof v === "object" && !Array.isArray(v) ? v : fallback;
	} catch {
		return fallback;
	}
}

function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

/** Builds the event list of one response. Returns { events, final } (events reference "partials"). */
function buildEvents(spec, model, timestamp) {
	const mutable = spec.mutable === true;
	const state = {
		role: "assistant",
		content: [],
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: zeroUsage(),
		stopReason: "stop",
		timestamp,
	};
	const snapshot = () => (mutable ? state : { ...state, content: state.content.map(cloneBlock) });
	// Each step mutates state then produces an event. For the mutable mode every event carries `state`.
	const steps = [];
	if (!spec.noStart) steps.push(() => ({ type: "start", partial: snapshot() }));
	for (const raw of spec.raw ?? []) {
		steps.push(() => {
			const ev = { ...raw };
			for (const k of ["partial"]) if (ev[k] === "partial") ev[k] = snapshot();
			return ev;
		});
	}
	const blocks = spec.content ?? [];
	blocks.forEach((block, idx) => {
		const contentIndex = idx;
		if ("text" in block) {
			const deltas = block.deltas ?? [block.text];
			steps.push(() => {
				state.content[contentIndex] = { type: "text", text: "" };
				return { type: "text_start", contentIndex, partial: snapshot() };
			});
			for (const d of deltas) {
				steps.push(() => {
					state.content[contentIndex] = mutable
						? Object.assign(state.content[contentIndex], { text: state.content[contentIndex].text + d })
						: { ...state.content[contentIndex], text: state.content[contentIndex].text + d };
					return { type: "text_delta", contentIndex, delta: d, partial: snapshot() };
				});
			}
			steps.push(() => {
				state.content[contentIndex] = mutable
					? Object.assign(state.content[contentIndex], { text: block.text })
					: { ...state.content[contentIndex], text: block.text };
				return { type: "text_end", contentIndex, content: block.text, partial: snapshot() };
			});
		} else if ("thinking" in block) {
			const deltas = block.deltas ?? [block.thinking];
			steps.push(() => {
				state.content[contentIndex] = { type: "thinking", thinking: "" };
				return { type: "thinking_start", contentIndex, partial: snapshot() };
			});
			for (const d of deltas) {
				steps.push(() => {
					const b = state.content[contentIndex];
					state.content[contentIndex] = mutable ? Object.assign(b, { thinking: b.thinking + d }) : { ...b, thinking: b.thinking + d };
					return { type: "thinking_delta", contentIndex, delta: d, partial: snapshot() };
				});
			}
			steps.push(() => {
				const b = state.content[contentIndex];
				state.content[contentIndex] = mutable ? Object.assign(b, { thinking: block.thinking }) : { ...b, thinking: block.thinking };
				return { type: "thinking_end", contentIndex, content: block.thinking, partial: snapshot() };
			});
		} else if ("toolCall" in block) {
			const tc = block.toolCall;
			const finalArgs = structuredClone("arguments" in tc ? tc.arguments : {});
			const json = JSON.stringify(finalArgs);
			const deltas = block.deltas ?? [json];
			let acc = "";
			steps.push(() => {
				state.content[contentIndex] = { type: "toolCall", id: tc.id, name: tc.name, arguments: {} };
				return { type: "toolcall_start", contentIndex, partial: snapshot() };
			});
			for (const d of deltas) {
				steps.push(() => {
					acc += d;
					const b = state.content[contentIndex];
					const args = tryParse(acc, b.arguments);
					state.content[contentIndex] = mutable ? Object.assign(b, { arguments: args }) : { ...b, arguments: args };
					return { type: "toolcall_delta", contentIndex, delta: d, partial: snapshot() };
				});
			}
			steps.push(() => {
				const b = state.content[contentIndex];
				const extra = {};
				for (const k of Object.keys(tc)) if (!["id", "name", "arguments"].includes(k)) extra[k] = tc[k];
				const done = { type: "toolCall", id: tc.id, name: tc.name, arguments: finalArgs, ...extra };
				state.content[contentIndex] = mutable ? Object.assign(b, done) : done;
				return { type: "toolcall_end", contentIndex, toolCall: state.content[contentIndex], partial: snapshot() };
			});
		} else {
			throw new Error(`unknown block ${JSON.stringify(block)}`);
		}
	});
	const hasToolCall = blocks.some((b) => "toolCall" in b);
	const stopReason = spec.stopReason ?? (hasToolCall ? "toolUse" : "stop");
	const finalize = (reason, errorMessage) => {
		const target = mutable ? state : { ...state, content: state.content.map(cloneBlock) };
		target.stopReason = reason;
		if (spec.usage) target.usage = structuredClone(spec.usage);
		if (errorMessage !== undefined) target.errorMessage = errorMessage;
		if (spec.extra) Object.assign(target, structuredClone(spec.extra));
		return target;
	};
	return { steps, stopReason, finalize, state };
}

/**
 * @param impl implementation object (uses impl.createAssistantMessageEventStream / impl.EventStream)
 * @param responses list of specs or (call) => spec
 * @param opts { tr?: Trace, label?: string, record?: (call) => object, strict?: false (see strictCheck) }
 */
export function scripted(impl, responses, opts = {}) {
	const tr = opts.tr;
	const label = opts.label ?? "streamFn";
	const calls = [];
	const streamFn = function scriptedStreamFn(model, context, options) {
		const index = calls.length;
		const rec = {
			index,
			argc: arguments.length,
			model: model?.id,
			contextKeys: context && typeof context === "object" ? Object.keys(context) : snap(context),
			messages: snap(context?.messages),
			messagesId: tr ? tr.id(context?.messages) : undefined,
			messageIds: tr && Array.isArray(context?.messages) ? context.messages.map((m) => tr.id(m)) : undefined,
			optionKeys: options && typeof options === "object" ? Object.keys(options) : snap(options),
			apiKey: options?.apiKey,
			reasoning: options?.reasoning,
			identity: snap(options?.identity),
			identityIsDefault: options?.identity === impl.DEFAULT_AGENT_IDENTITY,
			sessionId: options?.sessionId,
			signal: signalState(options?.signal),
			transport: options?.transport,
			thinkingBudgets: snap(options?.thinkingBudgets),
			maxRetryDelayMs: options?.maxRetryDelayMs,
			toolExecution: options?.toolExecution,
			temperature: options?.temperature,
			maxTokens: options?.maxTokens,
			optionsModelIsModel: options?.model === model,
		};
		if (!tr) {
			delete rec.messagesId;
			delete rec.messageIds;
		}
		if (opts.record) Object.assign(rec, opts.record({ model, context, options }));
		calls.push(rec);
		if (opts.strict !== false) strictCheck(context);
		if (tr) tr.hook(label, { index, model: rec.model, reasoning: rec.reasoning, signal: rec.signal, count: context?.messages?.length });

		const callInfo = { index, model, context, options };
		const entry = responses[index];
		let spec;
		if (entry === undefined) {
			spec = { content: [], stopReason: "error", errorMessage: "script exhausted" };
		} else {
			spec = typeof entry === "function" ? entry(callInfo) : entry;
		}
		if ("throwSync" in spec) throw spec.throwSync;
		if ("reject" in spec) return Promise.reject(spec.reject);
		if ("returnValue" in spec) return spec.returnValue;

		const stream = impl.createAssistantMessageEventStream();
		const timestamp = spec.timestamp === "now" ? Date.now() : (spec.timestamp ?? 1000 + index);
		const { steps, stopReason, finalize } = buildEvents(spec, model, timestamp);
		const signal = options?.signal;
		const honour = spec.honourSignal !== false;
		const timing = spec.timing ?? "sync";
		let ended = false;

		const pushEv = (i, ev) => {
			if (spec.beforeEvent) spec.beforeEvent(i, ev, callInfo);
			stream.push(ev);
		};
		const abortEnd = () => {
			const final = finalize("aborted", "Request was aborted");
			stream.push({ type: "error", reason: "aborted", error: final });
			ended = true;
		};
		const terminate = () => {
			const mode = spec.terminal ?? "auto";
			const isErr = stopReason === "error" || stopReason === "aborted";
			const final = finalize(stopReason, spec.errorMessage ?? (isErr ? "scripted failure" : undefined));
			if (mode === "end-result") stream.end(final);
			else if (mode === "end-bare") stream.end();
			else if (mode === "error" || (mode === "auto" && isErr)) stream.push({ type: "error", reason: stopReason, error: final });
			else stream.push({ type: "done", reason: stopReason, message: final });
			ended = true;
		};

		const runSync = () => {
			for (let i = 0; i < steps.length; i++) {
				if (honour && signal?.aborted) return abortEnd();
				pushEv(i, steps[i]());
			}
			if (honour && signal?.aborted) return abortEnd();
			if (spec.hang) return false;
			terminate();
			return true;
		};
		const waitAbort = () =>
			new Promise((resolve) => {
				if (!signal) return; // hangs forever by design: the test timeout reports it
				if (signal.aborted) return resolve();
				signal.addEventListener("abort", () => resolve(), { once: true });
			});

		if (timing === "sync") {
			const done = runSync();
			if (done === false) waitAbort().then(() => !ended && abortEnd());
		} else {
			const pause = timing === "timer" ? () => sleep(spec.delayMs ?? 0) : () => Promise.resolve();
			(async () => {
				for (let i = 0; i < steps.length; i++) {
					await pause();
					if (honour && signal?.aborted) return abortEnd();
					pushEv(i, steps[i]());
				}
				await pause();
				if (honour && signal?.aborted) return abortEnd();
				if (spec.hang) {
					await waitAbort();
					if (!ended) abortEnd();
					return;
				}
				terminate();
			})().catch((e) => {
				// a bug in a script must not vanish
				stream.push({ type: "error", reason: "error", error: { ...finalize("error", `script bug: ${e?.message}`) } });
			});
		}

		let out = stream;
		if (spec.wrap === "eventstream") {
			const es = new impl.EventStream(
				(e) => e.type === "done" || e.type === "error",
				(e) => (e.type === "done" ? e.message : e.error),
			);
			(async () => {
				for await (const e of stream) es.push(e);
				es.end(await stream.result());
			})();
			out = es;
		} else if (spec.wrap === "iterable") {
			out = {
				[Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
				result: () => stream.result(),
			};
		}
		return spec.async ? Promise.resolve(out) : out;
	};
	streamFn.calls = calls;
	return streamFn;
}

/**
 * Every context a scripted stream function receives must be acceptable to a strict provider (see
 * tests/support/strict-transcript.mjs), with whichever implementation. A violation fails the test
 * that is running twice over: the stream function throws it (the run fails), and it is thrown again
 * as an uncaught exception, so a test that only looks at the events still fails. A test that shows
 * 1.4.0's or 1.6.0's invalid contexts passes `{ strict: false }` and checks them itself.
 */
export function strictCheck(context) {
	try {
		assertStrictContext(context);
	} catch (error) {
		setTimeout(() => {
			throw error;
		}, 0);
		throw error;
	}
}

/** Deferred promise. */
export function deferred() {
	let resolve, reject;
	const promise = new Promise((res, rej) => {
		resolve = res;
		reject = rej;
	});
	return { promise, resolve, reject };
}

export { sleep };

/** Rejects after `ms` with a labelled timeout error (the timer is cleared when `p` settles). */
export function withTimeout(p, ms, label) {
	let timer;
	const t = new Promise((_, rej) => {
		timer = setTimeout(() => rej(new Error(`timeout after ${ms} ms: ${label}`)), ms);
	});
	return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** A simple tool whose execute is recorded into `tr`. */
export function makeTool(tr, name, opts = {}) {
	const tool = {
		name,
		label: opts.label ?? name.toUpperCase(),
		description: opts.description ?? `${name} tool`,
		parameters: opts.parameters ?? { type: "object", properties: {} },
		async execute(toolCallId, params, signal, onUpdate) {
			tr?.hook(`execute:${name}`, { toolCallId, params: snap(params), signal: signalState(signal), hasOnUpdate: typeof onUpdate === "function" });
			if (opts.execute) return opts.execute(toolCallId, params, signal, onUpdate);
			return { content: [{ type: "text", text: `${name} ok ${toolCallId}` }], details: { id: toolCallId } };
		},
	};
	for (const k of ["executionMode", "prepareArguments", "constrainedSampling", "outputSchema", "replay"]) {
		if (k in opts) tool[k] = opts[k];
	}
	return tool;
}

export { errorText };
