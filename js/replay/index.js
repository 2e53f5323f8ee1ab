// pi-agent-wasm/replay: record a run (every request, each event its stream produced, every tool
// call and approval decision, and the user's inputs) into a versioned JSON log, and play a log
// back deterministically: a stream function and tool stand-ins that answer from the log, and a
// driver that repeats the inputs at the same points of the stream.
//
// Positions: an input is tagged with [requests started, events of the last request], and
// playback performs it just before that event (or after that request's last event).
import { createAssistantMessageEventStream } from "../index.js";

/** The version this module writes and reads. */
export const REPLAY_LOG_VERSION = 1;

/** A log this version cannot read. */
export class ReplayLogError extends Error {
  constructor(message) {
    super(message);
    this.name = "ReplayLogError";
  }
}

/** A replay that received another request than the log recorded; `message` names the first difference. */
export class ReplayDivergenceError extends Error {
  constructor(message, request) {
    super(message);
    this.name = "ReplayDivergenceError";
    this.request = request;
  }
}

// FNV-1a over the message's JSON without its timestamps and durations (they change from run to run).
const noTimestamp = (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value);
function hashMessage(message) {
  const text = JSON.stringify(message, noTimestamp) ?? "";
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

function preview(message) {
  const c = message?.content;
  let text = typeof c === "string" ? c : "";
  if (Array.isArray(c)) {
    for (const b of c) {
      if (b?.type === "text") text += b.text;
      else if (b?.type === "toolCall") text += `[${b.name}]`;
      else if (b?.type === "thinking") text += "[thinking]";
    }
  }
  const short = text.length > 60 ? text.slice(0, 57) + "..." : text;
  return `${message?.role ?? "?"} ${JSON.stringify(short)}`;
}

const modelKey = (model) => `${model?.provider}/${model?.id}`;
const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
const errorText = (err) => (err instanceof Error ? err.message : String(err));

/**
 * A recorder. `attach(agent)` records everything an agent does; `streamFn(fn)` and
 * `tools(list)` wrap the parts by hand. `log()` is the log so far, `export()` its JSON text.
 */
export function createRecorder({ now = () => Date.now() } = {}) {
  const t0 = now();
  const requests = [];
  const calls = [];
  const decisions = {};
  const inputs = [];
  let declared = [];
  let events = 0;
  const at = () => [requests.length, events];
  const dt = () => now() - t0;

  function streamFn(inner) {
    return async (model, context, options) => {
      const messages = Array.isArray(context?.messages) ? context.messages : [];
      const previous = requests[requests.length - 1];
      const hashes = messages.map(hashMessage);
      let from = 0;
      if (previous) while (from < previous.h.length && from < hashes.length && previous.h[from] === hashes[from]) from++;
      const request = { t: dt(), model: modelKey(model), h: hashes, from, added: clone(messages.slice(from)), events: [] };
      requests.push(request);
      events = 0;
      const out = createAssistantMessageEventStream();
      let source;
      try {
        source = await inner(model, context, options);
      } catch (err) {
        // A stream function must not throw; recorded as the error event a well-behaved one sends.
        source = errorStream(model, errorText(err), options?.signal?.aborted ? "aborted" : "error");
      }
      (async () => {
        try {
          for await (const event of source) {
            if (requests[requests.length - 1] === request) events++;
            request.events.push([dt() - request.t, recordEvent(event)]);
            out.push(event);
          }
        } catch (err) {
          const e = errorStream(model, errorText(err), "error");
          for await (const event of e) {
            request.events.push([dt() - request.t, recordEvent(event)]);
            out.push(event);
          }
        }
        out.end();
      })();
      return out;
    };
  }

  function tools(list) {
    declared = list.map(declaration);
    return list.map((tool) => ({
      ...tool,
      execute: async (toolCallId, params, signal, onUpdate) => {
        const call = { id: toolCallId, name: tool.name, args: clone(params), t: dt(), updates: [] };
        calls.push(call);
        const update = (partial) => {
          call.updates.push([dt() - call.t, clone(partial)]);
          onUpdate?.(partial);
        };
        try {
          const result = await tool.execute(toolCallId, params, signal, onUpdate ? update : undefined);
          call.result = clone(result);
          return result;
        } catch (err) {
          call.error = errorText(err);
          throw err;
        } finally {
          call.ms = dt() - call.t;
        }
      },
    }));
  }

  let initial;
  const input = (op, m) => inputs.push(m === undefined ? { at: at(), op } : { at: at(), op, m: clone(m) });

  /** Records `agent`'s requests, tools, approval decisions and inputs (prompt, steer, followUp, abort, continue). */
  function attach(agent) {
    agent.streamFunction = streamFn(agent.streamFunction);
    agent.state.tools = tools(agent.state.tools);
    const hook = agent.beforeToolCall;
    if (typeof hook === "function") {
      agent.beforeToolCall = async (context, signal) => {
        const started = dt();
        const result = await hook(context, signal);
        decisions[context.toolCall.id] = { t: dt() - started, r: clone(result) ?? null };
        return result;
      };
    }
    for (const op of ["prompt", "steer", "followUp", "abort", "continue"]) {
      const original = agent[op];
      agent[op] = function (...args) {
        // The transcript the first run starts from (a restored session's, for instance).
        if (initial === undefined) initial = clone(agent.state.messages);
        input(op, op === "prompt" ? (typeof args[0] === "string" ? { text: args[0], images: args[1] } : args[0]) : args[0]);
        return original.apply(agent, args);
      };
    }
    return agent;
  }

  const log = () => {
    const out = { pi: "replay", v: REPLAY_LOG_VERSION, tools: declared, requests, calls, decisions, inputs };
    if (initial !== undefined) out.initial = initial;
    return out;
  };
  return { streamFn, tools, attach, log, export: () => JSON.stringify(log()) };
}

function declaration(tool) {
  const d = { name: tool.name, label: tool.label, description: tool.description, parameters: clone(tool.parameters) };
  if (tool.replay) d.replay = tool.replay;
  if (tool.executionMode) d.executionMode = tool.executionMode;
  return d;
}

/** A stream event without its `partial` (rebuilt on playback); `done`/`error` keep their message. */
function recordEvent(event) {
  if (!event || typeof event !== "object" || !("partial" in event)) return clone(event);
  const { partial, ...rest } = event;
  return clone(rest);
}

function emptyMessage(model, reason = "stop") {
  return {
    role: "assistant",
    content: [],
    api: model?.api,
    provider: model?.provider,
    model: model?.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: reason,
    timestamp: Date.now(),
  };
}

function errorStream(model, text, reason) {
  const s = createAssistantMessageEventStream();
  const message = { ...emptyMessage(model, reason), errorMessage: text };
  s.push({ type: "error", reason, error: message });
  s.end();
  return s;
}

/** Reads a log (its JSON text or the parsed object); throws `ReplayLogError` for another version or shape. */
export function readReplayLog(log) {
  let value = log;
  if (typeof log === "string") {
    try {
      value = JSON.parse(log);
    } catch (err) {
      throw new ReplayLogError(`not a replay log: ${errorText(err)}`);
    }
  }
  if (!value || typeof value !== "object" || value.pi !== "replay") throw new ReplayLogError('not a replay log (no "pi": "replay")');
  if (value.v !== REPLAY_LOG_VERSION) {
    throw new ReplayLogError(`unsupported replay log version ${JSON.stringify(value.v)}: this pi-agent-wasm reads version ${REPLAY_LOG_VERSION}`);
  }
  for (const key of ["tools", "requests", "calls", "inputs"]) {
    if (!Array.isArray(value[key])) throw new ReplayLogError(`malformed replay log: "${key}" is not an array`);
  }
  return value;
}

/** The partial message a stream event leaves, applied in place (text, thinking and tool-call blocks). */
function applyEvent(partial, raw, event) {
  const i = event.contentIndex;
  switch (event.type) {
    case "text_start":
      partial.content[i] = { type: "text", text: "" };
      break;
    case "text_delta":
      partial.content[i].text += event.delta;
      break;
    case "thinking_start":
      partial.content[i] = { type: "thinking", thinking: "" };
      break;
    case "thinking_delta":
      partial.content[i].thinking += event.delta;
      break;
    case "toolcall_start":
      partial.content[i] = { type: "toolCall", id: event.id ?? "", name: event.toolName ?? "", arguments: {} };
      raw[i] = "";
      break;
    case "toolcall_delta":
      raw[i] += event.delta;
      try {
        partial.content[i].arguments = JSON.parse(raw[i]);
      } catch {
        // An incomplete argument text keeps the last complete arguments.
      }
      break;
    case "toolcall_end":
      if (event.toolCall) partial.content[i] = clone(event.toolCall);
      break;
    default:
      break;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Plays a log back. `timing: "instant"` (default) answers at full speed; `"recorded"` waits the
 * recorded delays, divided by `speed`. Returns `{ streamFn, tools, beforeToolCall, attach(agent),
 * play(agent), divergence }`: `play` attaches and repeats the recorded inputs, resolving when the
 * agent is idle after the last one; it rejects with a `ReplayDivergenceError` if the replay diverged.
 */
export function createReplay(log, { timing = "instant", speed = 1, onDivergence } = {}) {
  const data = readReplayLog(log);
  const recorded = timing === "recorded";
  const wait = (ms) => (recorded && ms > 0 ? sleep(ms / speed) : undefined);
  let next = 0;
  let divergence;
  let position = [0, 0];
  const wake = new Set();
  const advance = (k, j) => {
    position = [k, j];
    for (const w of wake) w();
  };
  const reached = (p) => position[0] > p[0] || (position[0] === p[0] && position[1] >= p[1]);
  let pendingInput = () => false;

  const diverge = (message, request) => {
    if (!divergence) {
      divergence = new ReplayDivergenceError(message, request);
      try {
        onDivergence?.(divergence);
      } catch (err) {
        console.error("pi-agent-wasm/replay onDivergence:", err);
      }
    }
    for (const w of wake) w();
    return divergence;
  };

  /** The first difference between a request and the recorded one, or undefined. */
  function difference(k, model, messages) {
    const rec = data.requests[k];
    if (!rec) return `the log has ${data.requests.length} request(s); got request ${k + 1}`;
    if (rec.model !== modelKey(model)) return `model: recorded ${rec.model}, got ${modelKey(model)}`;
    const full = [];
    for (let r = 0; r <= k; r++) {
      const q = data.requests[r];
      full.length = q.from;
      full.push(...q.added);
    }
    const n = Math.min(rec.h.length, messages.length);
    for (let i = 0; i < n; i++) {
      if (rec.h[i] !== hashMessage(messages[i])) {
        return `context.messages[${i}]: recorded ${preview(full[i])}, got ${preview(messages[i])}`;
      }
    }
    if (rec.h.length !== messages.length) {
      const extra = rec.h.length > messages.length ? `recorded ${preview(full[n])}, got nothing` : `recorded nothing, got ${preview(messages[n])}`;
      return `context.messages has ${messages.length} message(s), recorded ${rec.h.length}: context.messages[${n}]: ${extra}`;
    }
    return undefined;
  }

  const streamFn = (model, context) => {
    const k = next++;
    const messages = Array.isArray(context?.messages) ? context.messages : [];
    const diff = difference(k, model, messages);
    if (diff !== undefined) {
      const err = diverge(`Replay diverged at request ${k + 1}: ${diff}`, k);
      return errorStream(model, err.message, "error");
    }
    const events = data.requests[k].events;
    const out = createAssistantMessageEventStream();
    const partial = emptyMessage(model);
    const raw = [];
    (async () => {
      let last = 0;
      for (let j = 0; j < events.length; j++) {
        const [t, recordedEvent] = events[j];
        await wait(t - last);
        last = t;
        advance(k + 1, j);
        if (pendingInput()) await tick();
        const event = clone(recordedEvent);
        if (event.type === "start") Object.assign(partial, clone(event.partial) ?? {});
        applyEvent(partial, raw, event);
        if (event.type === "done" || event.type === "error") out.push(event);
        else out.push({ ...event, partial });
      }
      advance(k + 1, events.length);
      out.end();
    })();
    return out;
  };

  const byId = new Map(data.calls.map((c) => [c.id, c]));
  const tools = data.tools.map((d) => ({
    ...d,
    execute: async (toolCallId, params, signal, onUpdate) => {
      const call = byId.get(toolCallId);
      if (!call) throw diverge(`Replay diverged: tool call ${toolCallId} (${d.name}) is not in the log`);
      if (call.name !== d.name || JSON.stringify(call.args) !== JSON.stringify(params)) {
        throw diverge(`Replay diverged: tool call ${toolCallId}: recorded ${call.name}(${JSON.stringify(call.args)}), got ${d.name}(${JSON.stringify(params)})`);
      }
      let last = 0;
      for (const [t, partial] of call.updates ?? []) {
        await wait(t - last);
        last = t;
        onUpdate?.(clone(partial));
      }
      await wait((call.ms ?? 0) - last);
      if (call.error !== undefined) throw new Error(call.error);
      return clone(call.result);
    },
  }));

  const beforeToolCall = async ({ toolCall }) => {
    const d = data.decisions?.[toolCall.id];
    if (!d) return undefined;
    await wait(d.t);
    return clone(d.r) ?? undefined;
  };

  function attach(agent) {
    agent.streamFunction = streamFn;
    agent.state.tools = tools;
    if (data.decisions && Object.keys(data.decisions).length > 0) agent.beforeToolCall = beforeToolCall;
    return agent;
  }

  async function play(agent) {
    attach(agent);
    if (Array.isArray(data.initial)) agent.state.messages = clone(data.initial);
    const inputs = data.inputs;
    let i = 0;
    pendingInput = () => i < inputs.length && reached(inputs[i].at) && !["prompt", "continue"].includes(inputs[i].op);
    const runs = [];
    for (; i < inputs.length; i++) {
      const { at, op, m } = inputs[i];
      while (!reached(at) && !divergence) await new Promise((resolve) => wake.add(resolve)).then(() => wake.clear());
      if (divergence) break;
      if (op === "prompt" || op === "continue") {
        await agent.waitForIdle();
        const run = op === "continue" ? agent.continue() : typeof m?.text === "string" ? agent.prompt(m.text, m.images) : agent.prompt(m);
        runs.push(run.catch(() => {}));
      } else if (op === "abort") agent.abort();
      else agent[op](m);
    }
    await Promise.all(runs);
    await agent.waitForIdle();
    if (divergence) throw divergence;
  }

  return {
    streamFn,
    tools,
    beforeToolCall,
    attach,
    play,
    get divergence() {
      return divergence;
    },
  };
}
