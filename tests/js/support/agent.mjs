// Helpers for Agent scenarios: construction with a scripted stream and a recording listener.
import { MODEL, scripted } from "./scripted.mjs";
import { Trace, signalState, snap } from "./trace.mjs";

/** State facts at the moment a listener sees an event. */
export function stateFacts(agent, ev, signal, tr) {
	const st = agent.state;
	const facts = {
		isStreaming: st.isStreaming,
		messages: st.messages.length,
		pending: [...st.pendingToolCalls],
		pendingSetId: tr.id(st.pendingToolCalls),
		streaming: st.streamingMessage === undefined ? "none" : st.streamingMessage === ev.message ? "event.message" : `other:${st.streamingMessage?.role}`,
		errorMessage: st.errorMessage,
		signal: signalState(signal),
		signalIsAgentSignal: signal === agent.signal,
	};
	if (ev.type === "message_end") facts.lastIsEventMessage = st.messages.at(-1) === ev.message;
	return facts;
}

/** Subscribe a listener that records every event with state facts. Returns the unsubscribe function. */
export function recordAgent(agent, tr, onEvent) {
	return agent.subscribe(async (ev, signal) => {
		tr.event(ev, { st: stateFacts(agent, ev, signal, tr) });
		if (onEvent) await onEvent(ev, signal);
	});
}

/** new impl.Agent with a scripted streamFn. `responses` as for scripted(). */
export function makeAgent(impl, tr, responses, options = {}) {
	const streamFn = scripted(impl, responses, { tr });
	const agent = new impl.Agent({ initialState: { model: MODEL }, streamFn, ...options });
	return { agent, streamFn };
}

/** Final Agent state as plain data. */
export function finalState(agent, tr) {
	const st = agent.state;
	return {
		keys: Object.keys(st),
		systemPrompt: st.systemPrompt,
		model: st.model?.id,
		thinkingLevel: st.thinkingLevel,
		tools: st.tools.map((t) => t.name),
		messages: snap(st.messages),
		messageIds: st.messages.map((m) => tr.id(m)),
		isStreaming: st.isStreaming,
		streamingMessage: snap(st.streamingMessage),
		pending: [...st.pendingToolCalls],
		errorMessage: st.errorMessage,
		signal: signalState(agent.signal),
		hasQueued: agent.hasQueuedMessages(),
		peek: snap(agent.peekQueuedMessages()),
	};
}

export async function settleRun(p) {
	try {
		await p;
		return { resolved: true };
	} catch (e) {
		return { rejected: e instanceof Error ? { name: e.name, message: e.message } : { thrown: snap(e) } };
	}
}

export { Trace };
