// The strictest request a provider accepts, as a check that tests run on every context a stream
// function receives. OpenAI's and Anthropic's APIs reject a request in which an assistant tool call
// is not answered by its result at once, so here:
//   - the tool calls of an assistant message (whatever its stopReason) are answered by the messages
//     that follow it, one `toolResult` per call, in the calls' order, with nothing in between;
//   - a `toolResult` answers a call of the assistant message just before its run of results;
//   - tool-call ids are unique in the context.
// `strictProblems(messages)` lists what breaks these rules (empty when the context is valid);
// `assertStrictContext(context)` throws a `StrictTranscriptError` naming the first problem.

export class StrictTranscriptError extends Error {
	constructor(problems, messages) {
		super(`invalid context for a strict provider: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`);
		this.name = "StrictTranscriptError";
		this.problems = problems;
		this.roles = Array.isArray(messages) ? messages.map(describe) : [];
	}
}

const toolCallsOf = (m) => (Array.isArray(m?.content) ? m.content.filter((b) => b?.type === "toolCall") : []);

function describe(m) {
	const calls = toolCallsOf(m);
	if (m?.role === "assistant") return `assistant(${m.stopReason}${calls.length ? `, ${calls.map((c) => c.id).join(" ")}` : ""})`;
	if (m?.role === "toolResult") return `toolResult(${m.toolCallId})`;
	return String(m?.role);
}

/** What makes `messages` unacceptable to a strict provider; empty when nothing does. */
export function strictProblems(messages) {
	const problems = [];
	if (!Array.isArray(messages)) return ["context.messages is not an array"];
	const seen = new Set();
	let i = 0;
	while (i < messages.length) {
		const m = messages[i];
		if (m?.role === "toolResult") {
			problems.push(`messages[${i}]: a toolResult for ${JSON.stringify(m.toolCallId)} answers no tool call just before it`);
			i++;
			continue;
		}
		const calls = m?.role === "assistant" ? toolCallsOf(m) : [];
		for (const c of calls) {
			if (typeof c.id !== "string" || c.id === "") problems.push(`messages[${i}]: a tool call without an id`);
			else if (seen.has(c.id)) problems.push(`messages[${i}]: tool call id ${JSON.stringify(c.id)} is used twice`);
			seen.add(c.id);
		}
		i++;
		for (let k = 0; k < calls.length; k++, i++) {
			const r = messages[i];
			const want = calls[k].id;
			if (r?.role !== "toolResult") {
				const what = r === undefined ? "the end of the context" : describe(r);
				problems.push(`messages[${i - k - 1}]: tool call ${JSON.stringify(want)} (${calls[k].name}) is followed by ${what}, not by its result`);
				break;
			}
			if (r.toolCallId !== want) {
				problems.push(`messages[${i}]: toolResult for ${JSON.stringify(r.toolCallId)} where the result of ${JSON.stringify(want)} belongs`);
			}
		}
	}
	return problems;
}

/** Throws a `StrictTranscriptError` unless `context.messages` would be accepted by a strict provider. */
export function assertStrictContext(context) {
	const messages = context?.messages;
	const problems = strictProblems(messages);
	if (problems.length > 0) throw new StrictTranscriptError(problems, messages);
}

/**
 * `strictProblems` of a transcript that may still be running: the calls of its last assistant message
 * that no result answers yet, with only results after it, are allowed (they run, wait for approval, or
 * wait for a session's resume()). Everything before them must be valid.
 */
export function strictPrefixProblems(messages) {
	if (!Array.isArray(messages)) return strictProblems(messages);
	let last = messages.length - 1;
	while (last >= 0 && messages[last]?.role === "toolResult") last--;
	if (last < 0 || messages[last]?.role !== "assistant") return strictProblems(messages);
	const calls = toolCallsOf(messages[last]);
	const filled = [...messages];
	for (let k = messages.length - 1 - last; k < calls.length; k++) filled.push({ role: "toolResult", toolCallId: calls[k].id, content: [], isError: false, timestamp: 0 });
	return strictProblems(filled);
}

/**
 * What breaks the rule for the transcript an agent keeps (`state.messages`), which is looser than a request's:
 * an answer that failed (`stopReason` "error" or "aborted") may keep tool calls that never ran, with no result
 * after it (a request sends such an answer without its calls); with `running` (the default), the transcript
 * may end with its last answer's unanswered calls (`strictPrefixProblems`). Everything else as `strictProblems`.
 */
export function keptTranscriptProblems(messages, { running = true } = {}) {
	if (!Array.isArray(messages)) return strictProblems(messages);
	const kept = messages.map((m, i) => {
		const failed = m?.role === "assistant" && (m.stopReason === "error" || m.stopReason === "aborted");
		if (!failed || i === messages.length - 1 || messages[i + 1]?.role === "toolResult") return m;
		return { ...m, content: m.content.filter((b) => b?.type !== "toolCall") };
	});
	return running ? strictPrefixProblems(kept) : strictProblems(kept);
}
