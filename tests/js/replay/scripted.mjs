// A scripted stream function and an event trace, for the replay tests in Node and in Chromium
// (no Node API here): `makeScripted(createAssistantMessageEventStream)` gives `scripted(script)`.
import { assertStrictContext } from "../../support/strict-transcript.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/**
 * A stream function answering from `script`, one entry per request: `{ text, thinking, calls,
 * final, error, gate, ignoreAbort }`. Every context it receives must pass the strict-provider
 * check (`fn.violations` lists the ones that did not). Between events it yields a macrotask, so
 * an abort can land anywhere; `gate(k, j)` may return a promise request `k`'s stream waits on
 * before its event `j`. A stream honours the abort (an `aborted` error event at its next event)
 * unless `ignoreAbort` is set: it then goes on to its end (at once with `"burst"`).
 */
export const makeScripted = (createAssistantMessageEventStream) => function scripted(script, { gate } = {}) {
  let n = 0;
  const fn = (model, context, options) => {
    const spec = (typeof script === "function" ? script(n, context) : script[n]) ?? { text: "done" };
    const k = n++;
    try {
      assertStrictContext(context);
    } catch (err) {
      fn.violations.push(err.message);
      throw err;
    }
    fn.contexts.push(context.messages.slice());
    const s = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 10 + k };
    const events = [];
    events.push(() => ({ type: "start", partial }));
    if (spec.thinking) {
      const i = 0;
      events.push(() => (partial.content.push({ type: "thinking", thinking: "" }), { type: "thinking_start", contentIndex: i, partial }));
      for (const ch of spec.thinking.match(/.{1,3}/g)) events.push(() => ((partial.content[i].thinking += ch), { type: "thinking_delta", contentIndex: i, delta: ch, partial }));
      events.push(() => ({ type: "thinking_end", contentIndex: i, content: partial.content[i].thinking, partial }));
    }
    if (spec.text) {
      let i;
      events.push(() => ((i = partial.content.length), partial.content.push({ type: "text", text: "" }), { type: "text_start", contentIndex: i, partial }));
      for (const ch of spec.text.match(/.{1,4}/g)) events.push(() => ((partial.content[i].text += ch), { type: "text_delta", contentIndex: i, delta: ch, partial }));
      events.push(() => ({ type: "text_end", contentIndex: i, content: partial.content[i].text, partial }));
    }
    for (const c of spec.calls ?? []) {
      let i;
      let block;
      const json = JSON.stringify(c.args ?? {});
      events.push(() => {
        i = partial.content.length;
        block = { type: "toolCall", id: c.id, name: c.name, arguments: {} };
        partial.content.push(block);
        return { type: "toolcall_start", contentIndex: i, partial };
      });
      for (const piece of json.match(/.{1,5}/g)) events.push(() => ({ type: "toolcall_delta", contentIndex: i, delta: piece, partial }));
      events.push(() => ((block.arguments = c.args ?? {}), { type: "toolcall_end", contentIndex: i, toolCall: block, partial }));
    }
    (async () => {
      await sleep(0);
      for (let j = 0; j < events.length; j++) {
        await gate?.(k, j);
        if (options?.signal?.aborted && !spec.ignoreAbort) {
          partial.stopReason = "aborted";
          return s.push({ type: "error", reason: "aborted", error: { ...partial, errorMessage: "Request was aborted" } });
        }
        s.push(events[j]());
        // A stream that ignores the abort and has the rest at hand sends it at once.
        if (!(spec.ignoreAbort === "burst" && options?.signal?.aborted)) await sleep(0);
      }
      if (spec.error) {
        partial.stopReason = "error";
        return s.push({ type: "error", reason: "error", error: { ...partial, errorMessage: spec.error } });
      }
      if (spec.calls?.length) partial.stopReason = "toolUse";
      const message = spec.final === undefined ? partial : { ...partial, content: [{ type: "text", text: spec.final }] };
      s.push({ type: "done", reason: partial.stopReason, message });
    })();
    return s;
  };
  fn.contexts = [];
  fn.violations = [];
  return fn;
};

// A copy of a value without its timestamps (they change from run to run).
const noTimes = (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value);
const copy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v, noTimes)));

/**
 * What an agent's events show, copied as they are delivered (a streaming message changes later).
 * With `partials: false`, a `message_update` keeps its stream event but not the streaming message:
 * playback rebuilds that message from the events the loop read, so a stream that runs ahead of
 * the loop (changing its message before the loop reads the events that say so) shows its text
 * event by event on playback.
 */
export function trace(agent, { partials = true } = {}) {
  const out = [];
  agent.subscribe((e) => {
    switch (e.type) {
      case "message_start":
      case "message_end":
        out.push([e.type, copy(e.message)]);
        break;
      case "message_update": {
        const { partial, ...ame } = e.assistantMessageEvent;
        // A streaming tool call's arguments are rebuilt on playback from the argument text (the
        // last complete parse of it): how a provider parses an incomplete text is not recorded.
        const message = copy(e.message);
        for (const block of message.content ?? []) if (block.type === "toolCall" && ame.type !== "toolcall_end") delete block.arguments;
        out.push(partials ? [e.type, copy(ame), message] : [e.type, copy(ame)]);
        break;
      }
      case "tool_execution_start":
        out.push([e.type, e.toolCallId, e.toolName, copy(e.args)]);
        break;
      case "tool_execution_update":
        out.push([e.type, e.toolCallId, copy(e.partialResult)]);
        break;
      case "tool_execution_end":
        out.push([e.type, e.toolCallId, copy(e.result), e.isError]);
        break;
      case "turn_end":
        out.push([e.type, copy(e.message), copy(e.toolResults)]);
        break;
      case "agent_end":
        out.push([e.type, copy(e.messages)]);
        break;
      default:
        out.push([e.type]);
    }
  });
  return out;
}

export const transcript = (agent) => copy(agent.state.messages);
