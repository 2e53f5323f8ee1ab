// The recorder: wraps an agent's stream function, tools, `beforeToolCall` and input methods, and
// writes what each did, and in which order the agent saw it all, into a replay log (log.js). The
// log is written through operations (`createLogStore`), so that a recorder running next to a
// WorkerAgent's loop, in its worker, keeps the main thread's copy of the log (workers.js).
import { RUN_TOOL_CALL } from "../../src/agent/state.js";
import { finalResult } from "../../src/js/glue.js";
import { clone, createLogStore, errorText } from "./log.js";
import { contextHashes, hashMessage, modelKey } from "./divergence.js";
import { Tap, isThenable, recordEvent, startsBlock } from "./stream.js";
import { WORKER_SEAM, recordInWorker } from "./workers.js";

/** A copy JSON can hold, or `undefined` when the value cannot be written as JSON. */
const safeClone = (v) => {
  try {
    return clone(v);
  } catch {
    return undefined;
  }
};
const isObject = (v) => v !== null && typeof v === "object";

/** What a log keeps of a tool: everything but `execute`. */
export function declaration(tool) {
  const d = { name: String(tool?.name) };
  for (const key of ["label", "description", "executionMode", "replay"]) if (typeof tool?.[key] === "string") d[key] = tool[key];
  if (isObject(tool?.parameters)) d.parameters = safeClone(tool.parameters);
  if (tool?.constrainedSampling !== undefined) d.constrainedSampling = safeClone(tool.constrainedSampling);
  return d;
}

const QUEUES = ["steer", "followUp"];
/** The queues each input empties. */
const CLEARS = { clearSteeringQueue: ["steer"], clearFollowUpQueue: ["followUp"], clearAllQueues: QUEUES, reset: QUEUES };
const OPS = ["prompt", "continue", "steer", "followUp", "abort", "clearSteeringQueue", "clearFollowUpQueue", "clearAllQueues", "reset"];
const BUSY = "Agent is already processing";

/**
 * A recorder. `attach(agent)` records everything an agent does; `streamFn(fn)` and `tools(list)`
 * wrap the parts by hand. `log()` is the log so far, `export()` its JSON text. `onWrite(op)`
 * (internal) is told each change of the log.
 */
export function createRecorder({ now = () => Date.now(), onWrite, from, current = false } = {}) {
  const t0 = now();
  const dt = () => now() - t0;
  const store = createLogStore(from);
  const { requests, calls, decisions, inputs, steps } = store.log;
  const write = (op) => {
    store.apply(op);
    onWrite?.(op);
  };
  let running = false;
  /** Whether a stream function, tool or hook the loop called is running (synchronously) now. */
  let depth = 0;
  const within = (f) => {
    depth++;
    try {
      return f();
    } finally {
      depth--;
    }
  };
  /** A request the loop stopped reading, until the agent ends it. */
  let cutRequest;
  /**
   * A request whose `start` the loop just read, until the agent starts its message: a stream that
   * runs ahead of the loop may change its message between the two, and the agent's copy is what
   * the run showed.
   */
  let startRequest;

  function streamFn(inner) {
    return function recordedStreamFn(model, context, options) {
      const r = requests.length;
      const messages = Array.isArray(context?.messages) ? context.messages : [];
      const { h, from } = contextHashes(messages, requests[r - 1]?.h);
      const q = { t: dt(), model: modelKey(model), h, from, added: safeClone(messages.slice(from)) ?? [], events: [] };
      write(["q", q]);
      write(["st", ["s", r]]);
      let out;
      try {
        out = within(() => inner(model, context, options));
      } catch (err) {
        write(["qs", r, "rejected", errorText(err)]);
        throw err;
      }
      if (!isThenable(out)) return tap(r, out);
      write(["qs", r, "async", true]);
      return Promise.resolve(out).then(
        (source) => {
          write(["qs", r, "o", dt() - q.t]);
          write(["st", ["o", r]]);
          return tap(r, source);
        },
        (err) => {
          write(["qs", r, "o", dt() - q.t]);
          write(["qs", r, "rejected", errorText(err)]);
          write(["st", ["o", r]]);
          throw err;
        },
      );
    };
  }

  /**
   * The stream the loop reads instead of `source`: the same iterator results, taken from `source`
   * only when the loop asks (so a stream that builds its events lazily runs at the loop's pace),
   * each written down as the loop takes it.
   */
  function tap(r, source) {
    const make = source?.[Symbol.asyncIterator];
    if (typeof make !== "function") {
      write(["qs", r, "notStream", true]);
      return source;
    }
    const q = requests[r];
    let terminal;
    let partial;
    const took = (item) => {
      if (item.done) write(["qs", r, "ended", true]);
      else if (item.thrown) write(["qs", r, "thrown", errorText(item.error)]);
      else {
        const event = item.value;
        const entry = [dt() - q.t, recordEvent(event)];
        if (isObject(event)) {
          if ("partial" in event) partial = event.partial;
          if (event.type === "start") startRequest = r;
          if (event.type === "done") terminal = event.message;
          else if (event.type === "error") terminal = event.error;
          if (startsBlock(event.type)) {
            const block = partial?.content?.[event.contentIndex];
            if (isObject(block)) entry.push(safeClone(block) ?? {});
          }
        }
        write(["ev", r, entry]);
      }
      write(["rd", r]);
    };
    const cut = () => {
      // The loop gave up on a stream that ignored the abort: its message is the partial as it
      // stands. The loop reads the partial a little later (after a listener it awaits), and such
      // a stream may change it meanwhile: the message the agent ends the request with tells (an
      // attached recorder sees it).
      write(["qs", r, "cut", isObject(partial) ? { partial: safeClone(partial) } : {}]);
      write(["st", ["x", r]]);
      cutRequest = r;
    };
    const result = () => {
      const out = finalResult(source);
      Promise.resolve(out).then(
        (message) => {
          if (message !== terminal && isObject(message) && typeof message.role === "string") write(["qs", r, "final", safeClone(message)]);
        },
        (err) => write(["qs", r, "finalError", errorText(err)]),
      );
      return out;
    };
    return new Tap(make, source, took, cut, result);
  }

  const wrapped = new WeakMap();
  function recordTool(tool) {
    if (!isObject(tool) || typeof tool.execute !== "function") return tool;
    const known = wrapped.get(tool);
    if (known) return known;
    const execute = tool.execute;
    const out = {
      ...tool,
      execute(toolCallId, params, signal, onUpdate) {
        const k = calls.length;
        const t = dt();
        write(["c", { id: String(toolCallId), name: String(tool.name), args: safeClone(params), t, updates: [] }]);
        write(["st", ["c", k]]);
        const update = typeof onUpdate === "function"
          ? (partial) => {
            write(["cu", k, [dt() - t, safeClone(partial) ?? null]]);
            write(["st", ["u", k]]);
            return onUpdate(partial);
          }
          : onUpdate;
        return settled("cs", k, t, "r", () => execute.call(this, toolCallId, params, signal, update), (v) => {
          if (v !== undefined) write(["cs", k, "result", safeClone(v) ?? null]);
        });
      },
    };
    wrapped.set(tool, out);
    wrapped.set(out, out);
    return out;
  }
  const tools = (list) => (Array.isArray(list) ? list.map(recordTool) : list);

  /** Runs `f`, records how it settled (at once or later) and returns what it returned, as it returned it. */
  function settled(set, k, t, code, f, keep) {
    const settle = (ok, v) => {
      write([set, k, "ms", dt() - t]);
      write([set, k, "ok", ok]);
      if (ok) keep(v);
      else write([set, k, "error", errorText(v)]);
      write(["st", [code, k]]);
    };
    let out;
    try {
      out = within(f);
    } catch (err) {
      settle(false, err);
      throw err;
    }
    if (!isThenable(out)) {
      settle(true, out);
      return out;
    }
    write([set, k, "async", true]);
    return Promise.resolve(out).then(
      (v) => (settle(true, v), v),
      (err) => {
        settle(false, err);
        throw err;
      },
    );
  }

  const hooks = new WeakMap();
  function recordDecisions(hook) {
    if (typeof hook !== "function") return hook;
    if (hooks.has(hook)) return hooks.get(hook);
    const out = function recordedBeforeToolCall(context, signal) {
      const k = decisions.length;
      const t = dt();
      write(["d", { id: String(context?.toolCall?.id), t }]);
      write(["st", ["b", k]]);
      return settled("ds", k, t, "d", () => hook.call(this, context, signal), (v) => {
        if (v !== undefined) write(["ds", k, "r", isObject(v) ? safeClone(v) ?? null : null]);
      });
    };
    hooks.set(hook, out);
    hooks.set(out, out);
    return out;
  }

  // ---- an agent ------------------------------------------------------------------------------
  let agent;
  let known = [];
  let knownModel;
  let knownLevel;
  let runFirstRequest = 0;
  let lastRunInput = -1;
  let runInput = -1;
  /** Queued messages not delivered yet, by identity: the inputs that queued them, oldest first. */
  const queued = new Map();

  function input(op, fields) {
    const n = inputs.length;
    // Made by a tool, hook or stream function while the loop's call to it runs (playback makes it there too).
    if (depth > 0) fields.inCall = true;
    write(["i", { t: dt(), op, ...fields }]);
    write(["st", ["i", n]]);
    return n;
  }

  let unwatch = () => {};
  // From prompt() or continue() to the run's agent_start (and during reset()): the agent's own changes, not the app's.
  let starting = false;
  function watchIdle(on) {
    unwatch();
    unwatch = () => {};
    if (on && typeof agent.subscribeState === "function") unwatch = agent.subscribeState(() => void (!starting && idleChanges()), { coalesce: false });
  }

  /** What the app changed while the agent was idle (its transcript, model), as inputs before the next one. */
  function idleChanges() {
    if (running || !agent) return;
    const state = agent.state;
    const messages = state.messages;
    let keep = 0;
    while (keep < messages.length && keep < known.length && (messages[keep] === known[keep] || hashMessage(messages[keep]) === hashMessage(known[keep]))) keep++;
    if (keep < messages.length || keep < known.length) input("messages", { keep, add: safeClone(messages.slice(keep)) ?? [] });
    known = messages.slice();
    if ((state.model !== knownModel && JSON.stringify(state.model) !== JSON.stringify(knownModel)) || state.thinkingLevel !== knownLevel) {
      input("model", { model: safeClone(state.model), thinkingLevel: state.thinkingLevel });
    }
    knownModel = state.model;
    knownLevel = state.thinkingLevel;
  }

  /**
   * A queued message the agent just delivered. The loop takes its queues at points no event
   * marks (a poll between two events), so where the message was queued says little; where it
   * was delivered says all: playback queues it during the last request before that delivery
   * (no poll of the queue lies between the two), or just before the input that started the run.
   */
  function delivered(message) {
    const waiting = queued.get(message);
    if (!waiting) return;
    const n = waiting.shift();
    if (waiting.length === 0) queued.delete(message);
    let at = -1;
    for (let i = steps.length - 1; i >= 0 && at < 0; i--) {
      const s = steps[i];
      if (s[0] === "s" && s[1] >= runFirstRequest) at = i + 1;
      else if (s[0] === "i" && s[1] === runInput) at = i;
    }
    const from = steps.findLastIndex((s) => s[0] === "i" && s[1] === n);
    const op = inputs[n].op;
    // Never past a message queued after it on the same queue (the queue's order)…
    for (let j = from + 1; j < at; j++) {
      if (steps[j][0] === "i" && inputs[steps[j][1]].op === op) {
        at = j;
        break;
      }
    }
    // …and after the ones queued before it that were moved there.
    while (at < steps.length && steps[at][0] === "i" && steps[at][1] < n && QUEUES.includes(inputs[steps[at][1]].op)) at++;
    if (at <= from + 1) return;
    // `at` counts in the steps with this one; the move counts without it.
    write(["mv", from, at - 1]);
  }

  /**
   * Queued messages of `ops` ("steer", "followUp") not delivered now: their inputs move to the end
   * of the steps. The loop polls its queues at points no event marks, so a message queued between
   * two events may have come after a poll there; one that no poll took until now is made as late as
   * that on playback (after the run, or just before the input that clears it).
   */
  function undelivered(ops, drop) {
    const pending = [];
    for (const [message, list] of queued) {
      if (!ops.includes(inputs[list[0]].op)) continue;
      pending.push(...list);
      if (drop) queued.delete(message);
    }
    for (const n of pending.sort((x, y) => x - y)) {
      const from = steps.findLastIndex((s) => s[0] === "i" && s[1] === n);
      if (from < steps.length - 1) write(["mv", from, steps.length - 1]);
    }
  }

  function listener(event) {
    const type = event?.type;
    if (typeof type !== "string" || type === "message_update" || type === "tool_execution_update") return;
    const id = type === "message_start" || type === "message_end" ? event.message?.role : event.toolCallId;
    write(["st", typeof id === "string" ? ["a", type, id] : ["a", type]]);
    if (type === "message_start" && startRequest !== undefined && id === "assistant") {
      const message = safeClone(event.message);
      if (message !== undefined) write(["qs", startRequest, "start", message]);
      startRequest = undefined;
    }
    if (type === "message_end" && cutRequest !== undefined && id === "assistant") {
      const partial = safeClone(event.message);
      if (partial !== undefined) write(["qs", cutRequest, "cut", { partial }]);
      cutRequest = undefined;
    }
    if (type === "agent_start") {
      starting = false;
      watchIdle(false);
      running = true;
      write(["running", true]);
      runFirstRequest = requests.length;
      runInput = lastRunInput;
    } else if (type === "message_start") delivered(event.message);
    else if (type === "agent_end") {
      undelivered(QUEUES, false);
      running = false;
      write(["running", false]);
      known = agent.state.messages.slice();
      knownModel = agent.state.model;
      knownLevel = agent.state.thinkingLevel;
      watchIdle(true);
    }
  }

  /** Own accessors over `key` of `target`: reads give the app's value, writes store `wrap(value)` where the agent reads it. */
  function intercept(target, key, wrap, onSet) {
    let proto = target;
    let d;
    while (!d && proto) {
      d = Object.getOwnPropertyDescriptor(proto, key);
      proto = Object.getPrototypeOf(proto);
    }
    if (!d?.set) {
      target[key] = wrap(target[key]);
      return;
    }
    let own = d.get.call(target);
    d.set.call(target, wrap(own));
    Object.defineProperty(target, key, {
      configurable: true,
      enumerable: d.enumerable,
      get: () => (key === "tools" ? d.get.call(target) : own),
      set(value) {
        own = value;
        d.set.call(target, wrap(value));
        onSet?.(value);
      },
    });
  }

  /** Records `agent`'s requests, tools, approval decisions and inputs (prompt, steer, followUp, abort, continue …). */
  function attach(target) {
    if (agent) throw new Error("pi-agent-wasm/replay: a recorder records one agent");
    agent = target;
    // A WorkerAgent's loop runs in its worker: a recorder there writes the log, and this one holds a copy.
    if (typeof agent[WORKER_SEAM] === "function") return recordInWorker(agent, store);
    const state = agent.state;
    const info = {
      model: safeClone(state.model),
      thinkingLevel: state.thinkingLevel,
      steeringMode: agent.steeringMode,
      followUpMode: agent.followUpMode,
      toolExecution: agent.toolExecution,
    };
    for (const key of Object.keys(info)) if (info[key] === undefined) delete info[key];
    // Going on with a log another worker wrote: nothing of this transcript is known to it, unless the
    // log's last input set the transcript this agent starts with (`current`).
    known = from === undefined || current ? state.messages.slice() : [];
    knownModel = state.model;
    knownLevel = state.thinkingLevel;
    if (from === undefined) write(["agent", info, safeClone(known) ?? [], (state.tools ?? []).map(declaration)]);
    intercept(agent, "streamFunction", (f) => (typeof f === "function" ? streamFn(f) : f));
    intercept(agent, "beforeToolCall", recordDecisions);
    intercept(state, "tools", tools, (list) => {
      if (Array.isArray(list)) input("tools", { tools: list.map(declaration) });
    });
    agent.subscribe(listener, { deltas: false });
    // An edit made between runs is an input at once, not only before the next input: a transcript set
    // (a branch switched, a restore) and then nothing else before the log is exported is in the log too.
    // Watched between runs only (a run changes the state per token; its events say what it did).
    watchIdle(true);
    for (const op of OPS) {
      const original = agent[op];
      if (typeof original !== "function") continue;
      agent[op] = function (...args) {
        idleChanges();
        if (CLEARS[op]) undelivered(CLEARS[op], true);
        const fields = {};
        if (op === "prompt") {
          if (typeof args[0] === "string") {
            fields.text = args[0];
            if (args[1] !== undefined) fields.images = safeClone(args[1]);
          } else fields.m = safeClone(args[0]);
        } else if (QUEUES.includes(op)) fields.m = safeClone(args[0]);
        const n = input(op, fields);
        if (op === "prompt" || op === "continue") lastRunInput = n;
        if (QUEUES.includes(op) && isObject(args[0])) {
          if (!queued.has(args[0])) queued.set(args[0], []);
          queued.get(args[0]).push(n);
        }
        const own = op === "prompt" || op === "continue" || op === "reset";
        if (own) starting = true;
        let out;
        try {
          out = original.apply(agent, args);
        } finally {
          if (op === "reset" || !isThenable(out)) starting = false;
        }
        if (own && isThenable(out)) out.then(() => void (starting = false), () => void (starting = false));
        // The baseline `reset()` leaves is the agent's own doing, not an edit of the app's.
        if (op === "reset") known = agent.state.messages.slice();
        if ((op === "prompt" || op === "continue") && isThenable(out)) {
          // An input refused because a run was going on changed nothing: playback skips it.
          out.then(undefined, (err) => {
            if (errorText(err).startsWith(BUSY)) write(["is", n, "busy", true]);
          });
        }
        return out;
      };
    }
    const runToolCall = agent[RUN_TOOL_CALL];
    if (typeof runToolCall === "function") {
      // A session's `resume()` runs restored tool calls through this seam, outside any run.
      agent[RUN_TOOL_CALL] = function (toolCall, assistantMessage, signal) {
        idleChanges();
        const a = agent.state.messages.indexOf(assistantMessage);
        input("runToolCall", a >= 0 ? { toolCall: safeClone(toolCall), a } : { toolCall: safeClone(toolCall), m: safeClone(assistantMessage) });
        // The session aborts the call when the user aborts or moves on: playback aborts it at the same point.
        signal?.addEventListener("abort", () => void (inputs[inputs.length - 1]?.op !== "abort" && input("abort", {})), { once: true });
        return runToolCall.call(this, toolCall, assistantMessage, signal);
      };
    }
    return agent;
  }

  return { streamFn, tools, attach, log: () => store.snapshot(), export: () => JSON.stringify(store.snapshot()) };
}
