// Helpers to drive the low-level loop entry points with a recording sink.
import { MODEL } from "./scripted.mjs";
import { Trace, errorText, signalState, snap } from "./trace.mjs";

export const LLM_ROLES = ["system", "user", "assistant", "toolResult"];

/** A convertToLlm that records its calls and keeps LLM roles (new array). */
export function recordingConvert(tr, map) {
	return function convertToLlm(messages) {
		tr.hook("convertToLlm", { count: messages.length, roles: messages.map((m) => m.role), argc: arguments.length });
		if (map) return map(messages);
		return messages.filter((m) => LLM_ROLES.includes(m.role));
	};
}

export function baseConfig(tr, extra = {}) {
	return { model: MODEL, convertToLlm: recordingConvert(tr), ...extra };
}

/** Records polls of the queues with what they return. `steer`/`follow` are arrays consumed one per poll. */
export function queuePolls(tr, { steer = [], follow = [] } = {}) {
	const s = steer.slice();
	const f = follow.slice();
	return {
		getSteeringMessages: async (...args) => {
			const out = s.length ? s.shift() : [];
			tr.hook("getSteeringMessages", { argc: args.length, returned: out.length });
			return out;
		},
		getFollowUpMessages: async (...args) => {
			const out = f.length ? f.shift() : [];
			tr.hook("getFollowUpMessages", { argc: args.length, returned: out.length });
			return out;
		},
	};
}

/**
 * Run one of the four entry points and record everything into a fresh (or given) Trace.
 * kind: "run" (runAgentLoop) | "continue" (runAgentLoopContinue) | "stream" (agentLoop) | "streamContinue"
 */
export async function runLoop(impl, opts) {
	const tr = opts.tr ?? new Trace();
	const { kind = "run", prompts = [], context, config, signal, streamFn, onEvent } = opts;
	const raw = [];
	try {
		if (kind === "run" || kind === "continue") {
			const sink = async (ev) => {
				raw.push(ev);
				tr.event(ev);
				if (onEvent) await onEvent(ev, tr);
			};
			const p =
				kind === "run"
					? impl.runAgentLoop(prompts, context, config, sink, signal, streamFn)
					: impl.runAgentLoopContinue(context, config, sink, signal, streamFn);
			tr.note("returnedPromise", p instanceof Promise);
			const result = await p;
			const end = raw.filter((e) => e.type === "agent_end").at(-1);
			tr.note("resultIsAgentEndMessages", end ? end.messages === result : "no agent_end");
			tr.note("resultIds", Array.isArray(result) ? result.map((m) => tr.id(m)) : snap(result));
		} else {
			tr.observational = true;
			const stream =
				kind === "stream"
					? impl.agentLoop(prompts, context, config, signal, streamFn)
					: impl.agentLoopContinue(context, config, signal, streamFn);
			tr.note("streamHasResult", typeof stream?.result === "function");
			for await (const ev of stream) {
				raw.push(ev);
				tr.event(ev);
				if (onEvent) await onEvent(ev, tr);
			}
			const result = await stream.result();
			const end = raw.filter((e) => e.type === "agent_end").at(-1);
			tr.note("resultIsAgentEndMessages", end ? end.messages === result : "no agent_end");
			tr.note("resultIds", Array.isArray(result) ? result.map((m) => tr.id(m)) : snap(result));
		}
	} catch (e) {
		tr.note("rejected", errorText(e));
	}
	tr.raw = raw;
	return tr;
}

export { signalState, snap, errorText, Trace };

/** Summary of an AgentTurnContext / PrepareNextTurnContext. */
export function turnSummary(tr, ctx) {
	if (!ctx || typeof ctx !== "object") return { value: snap(ctx) };
	return {
		keys: Object.keys(ctx),
		messageId: tr.id(ctx.message),
		stopReason: ctx.message?.stopReason,
		toolResultsId: tr.id(ctx.toolResults),
		toolResultIds: Array.isArray(ctx.toolResults) ? ctx.toolResults.map((m) => tr.id(m)) : snap(ctx.toolResults),
		newMessagesId: tr.id(ctx.newMessages),
		newMessages: ctx.newMessages?.length,
		contextId: tr.id(ctx.context),
		contextMessages: ctx.context?.messages?.length,
		contextTools: ctx.context?.tools?.map((t) => t.name),
	};
}

/**
 * Recording wrappers for the loop hooks. Each given function receives the original arguments and its
 * return value is passed through.
 */
export function recordedHooks(tr, { prepareNextTurn, prepareRequest, finishTurn, transformContext, getApiKey } = {}) {
	const out = {};
	if (prepareNextTurn) {
		out.prepareNextTurn = async function (ctx) {
			tr.hook("prepareNextTurn", { argc: arguments.length, ...turnSummary(tr, ctx) });
			return prepareNextTurn(ctx, arguments[1]);
		};
	}
	if (prepareRequest) {
		out.prepareRequest = async function (req, signal) {
			tr.hook("prepareRequest", {
				argc: arguments.length,
				keys: Object.keys(req),
				model: req.model?.id,
				thinkingLevel: req.thinkingLevel,
				contextId: tr.id(req.context),
				contextMessages: req.context?.messages?.map((m) => m.role),
				contextTools: req.context?.tools?.map((t) => t.name),
				signal: signalState(signal),
			});
			return prepareRequest(req, signal);
		};
	}
	if (finishTurn) {
		out.finishTurn = async function (turn, signal) {
			tr.hook("finishTurn", { argc: arguments.length, signal: signalState(signal), ...turnSummary(tr, turn) });
			return finishTurn(turn, signal);
		};
	}
	if (transformContext) {
		out.transformContext = async function (messages, signal) {
			tr.hook("transformContext", { argc: arguments.length, roles: messages.map((m) => m.role), messagesId: tr.id(messages), signal: signalState(signal) });
			return transformContext(messages, signal);
		};
	}
	if (getApiKey) {
		out.getApiKey = function (provider) {
			tr.hook("getApiKey", { argc: arguments.length, provider });
			return getApiKey(provider);
		};
	}
	return out;
}

/** Recording wrappers for beforeToolCall / afterToolCall. */
export function toolHooks(tr, { before, after } = {}) {
	const out = {};
	const common = (ctx) => ({
		keys: Object.keys(ctx),
		toolCallId: ctx.toolCall?.id,
		toolCallIsBlock: Array.isArray(ctx.assistantMessage?.content) ? ctx.assistantMessage.content.includes(ctx.toolCall) : false,
		args: snap(ctx.args),
		argsIsRaw: ctx.args === ctx.toolCall?.arguments,
		argsId: tr.id(ctx.args),
		assistantMessageId: tr.id(ctx.assistantMessage),
		contextId: tr.id(ctx.context),
		contextRoles: ctx.context?.messages?.map((m) => m.role),
	});
	if (before) {
		out.beforeToolCall = async function (ctx, signal) {
			tr.hook("beforeToolCall", { argc: arguments.length, signal: signalState(signal), ...common(ctx) });
			return before(ctx, signal);
		};
	}
	if (after) {
		out.afterToolCall = async function (ctx, signal) {
			tr.hook("afterToolCall", { argc: arguments.length, signal: signalState(signal), ...common(ctx), result: snap(ctx.result), resultId: tr.id(ctx.result), isError: ctx.isError });
			return after(ctx, signal);
		};
	}
	return out;
}
