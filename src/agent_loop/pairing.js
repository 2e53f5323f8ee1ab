// The messages a request sends, with every assistant tool call answered at once by exactly one
// result, in the calls' order, whatever the transcript holds (request.js). A strict provider
// (OpenAI's and Anthropic's APIs) rejects anything else, and pi-ai's own conversion leaves some of
// it in place: it drops a failed answer (`stopReason` "error" or "aborted") but keeps the results
// after it, and keeps a result whose call is nowhere.
//
// - A failed answer's tool calls never reach a request (none of them ran): it is sent as a copy
//   without them, and results that follow it are left out.
// - A result that answers no call of the assistant message just before its run of results, or
//   answers one a second time, is left out; results out of order are put in the calls' order.
// - A call of a completed answer left without a result (a transcript the app assigned, a
//   `continue()` after it) is answered in the request by an error result, "No result provided"
//   (what pi-ai's conversion sends for it); the transcript is not changed.
// - A system message between an answer and its results is sent after the results.
//
// Messages are fed in order (`add`) and the pairing keeps only the open answer's calls, so an
// Agent's LLM view extends it by what each request adds (O(delta)); `close` gives what a request
// sends after the messages fed so far without changing the state. A transcript that needs none of
// this costs a few property reads per message.

const toolCall = (block) => block?.type === "toolCall";

/**
 * A pairing of the messages fed to it in order: `add(m, out)` pushes to `out` what is sent up to
 * `m`; `close(out)` pushes what closes the open answer now (its missing results, the held system
 * messages) without changing the state, and returns `out`; `changed()` tells whether anything fed
 * so far is sent differently from how it came.
 */
export function pairing() {
  // The open answer's tool calls (none open: `undefined`), the next one to answer, results that came
  // early, whether it failed (results after it are left out), system messages held until its results.
  let calls, next, early, failed, held;
  let changed = false;
  const close = (out) => {
    for (let k = next; !failed && k < calls?.length; k++) {
      const { id, name } = calls[k];
      const result = early?.get(id);
      changed ||= result === undefined;
      out.push(result ?? { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: "No result provided" }], isError: true, timestamp: Date.now() });
    }
    if (held) out.push(...held);
    return out;
  };
  const end = (out) => {
    if (calls) close(out);
    calls = early = held = undefined;
  };
  const add = (m, out) => {
    const role = m?.role;
    if (role === "toolResult") {
      const k = failed ? -1 : calls?.findIndex((c, i) => i >= next && c.id === m.toolCallId) ?? -1;
      if (k === next) {
        out.push(m);
        // Then the results that came early; the answer closes once every call is answered.
        while (++next < calls.length && early?.has(calls[next].id)) out.push(early.get(calls[next].id));
        if (next === calls.length) end(out);
        return;
      }
      changed = true;
      if (k > 0 && !early?.has(m.toolCallId)) (early ??= new Map()).set(m.toolCallId, m);
      return;
    }
    if (role === "system" && calls) {
      changed = true;
      (held ??= []).push(m);
      return;
    }
    end(out);
    if (role === "assistant" && Array.isArray(m.content) && m.content.some(toolCall)) {
      calls = m.content.filter(toolCall);
      next = 0;
      failed = m.stopReason === "error" || m.stopReason === "aborted";
      if (failed) {
        changed = true;
        m = { ...m, content: m.content.filter((block) => !toolCall(block)) };
      }
    }
    out.push(m);
  };
  return { add, close, changed: () => changed };
}

/**
 * `messages` as a request sends them (see above): the array itself when it needs no change, else a
 * new one. A value that is not an array, or whose messages cannot be read, is sent as it is.
 */
export function pairedMessages(messages) {
  try {
    const paired = pairing();
    const out = [];
    for (const m of messages) paired.add(m, out);
    paired.close(out);
    return paired.changed() ? out : messages;
  } catch {
    return messages;
  }
}
