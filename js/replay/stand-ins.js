// The stand-ins a replay gives the agent: a stream function, tools and a `beforeToolCall` that
// answer from the log. During `play()` each tells the player (player.js) of the step the agent took
// by calling it, and gives what the log recorded when the player makes that step's answer; outside
// it, each answers at once (with the recorded delays, when timed).
import { clone } from "./log.js";
import { contextDifference } from "./divergence.js";
import { ReadStream, applyEvent, emptyMessage, errorStream, handled, replaceFields } from "./stream.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const noop = () => {};
const PARTIAL_EVENTS = new Set(["start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta",
  "thinking_end", "toolcall_start", "toolcall_delta", "toolcall_end"]);

/**
 * The stand-ins of `data` (a read log). `player` is the walk they report to: `strict()` (playing),
 * `divergence()`, `lost()` (a run the recording lost the end of), `diverge(what)`, `call(step)` (a
 * stand-in called: walks what happened during the call) and `mark(step)` (the loop read an item, or
 * stopped reading). Returns them with `streams`, `calls` and `decisions`: per request, call and
 * decision asked so far, its pending part (`release()`/`open()`, `update()`/`settle()`, `fail(error)`).
 */
export function createStandIns(data, player, { timed, pace }) {
  const streams = [];
  const calls = [];
  const decisions = [];
  let callsMade = 0;
  let decisionsMade = 0;
  /** Request `k`'s stream, fed from the log as its steps come (or all at once outside `play`). */
  function standInStream(k, model) {
    const q = data.requests[k];
    const partial = emptyMessage(model);
    const raw = [];
    const items = q.events.map(([, event, block]) => ({ value: event, block }));
    if (q.ended) items.push({ done: true });
    else if (q.thrown !== undefined) items.push({ thrown: true, text: q.thrown });
    let terminal;
    let resolveOpen;
    const stream = new ReadStream(
      (item) => {
        if (item.value !== undefined) {
          const event = item.value;
          applyEvent(partial, raw, event, item.block);
          if (event.type === "done") terminal = event.message;
          else if (event.type === "error") terminal = event.error;
        }
        player.mark(["e", k, 1]);
      },
      () => {
        if (q.cut?.partial) replaceFields(partial, clone(q.cut.partial));
        player.mark(["x", k]);
      },
      () => {
        if (q.finalError !== undefined) return Promise.reject(new Error(q.finalError));
        if (q.final !== undefined) return Promise.resolve(clone(q.final));
        if (terminal !== undefined) return Promise.resolve(terminal);
        // Read to its end without a final message: the loop reports it as it did in the recording.
        return new Promise(noop);
      },
    );
    const s = {
      stream,
      released: 0,
      opened: undefined,
      /** Hands the loop the next recorded item. */
      release() {
        const item = items[this.released++];
        if (item === undefined) return;
        if (item.thrown) return stream.push({ thrown: true, error: new Error(item.text) });
        if (item.done) return stream.push(item);
        const event = clone(item.value);
        // The message the provider began with, as the agent copied it (or as the event had it).
        const started = event.type === "start" ? (q.start !== undefined ? clone(q.start) : event.partial) : undefined;
        if (started !== null && typeof started === "object") replaceFields(partial, started);
        if (PARTIAL_EVENTS.has(event.type)) event.partial = partial;
        stream.push({ value: event, block: item.block });
      },
      open() {
        if (q.rejected !== undefined) resolveOpen?.(Promise.reject(new Error(q.rejected)));
        else resolveOpen?.(stream);
      },
      fail(error) {
        stream.push({ value: { type: "error", reason: "error", error: { ...partial, stopReason: "error", errorMessage: error.message } } });
        stream.push({ done: true });
        resolveOpen?.(errorStream(model, error.message));
      },
      result() {
        if (!q.async) return stream;
        return new Promise((resolve) => (resolveOpen = resolve));
      },
    };
    return s;
  }

  function streamFn(model, context) {
    // The rest of a run the recording lost is not in the log: it ends as aborted.
    if (player.lost()) return errorStream(model, "Request was aborted", "aborted");
    const k = streams.length;
    const divergence = player.divergence();
    if (divergence) {
      streams.push(undefined);
      return errorStream(model, divergence.message);
    }
    const messages = Array.isArray(context?.messages) ? context.messages : [];
    const q = data.requests[k];
    const s = q ? standInStream(k, model) : undefined;
    streams.push(s);
    const out = s?.result();
    const strict = player.strict();
    if (strict && !player.call(["s", k])) return errorStream(model, player.divergence().message);
    const diff = contextDifference(data.requests, k, model, messages);
    if (diff !== undefined) return errorStream(model, player.diverge(diff).message);
    if (q.notStream) return {};
    if (q.rejected !== undefined && !q.async) throw new Error(q.rejected);
    if (!strict) {
      // Outside `play`: the whole recorded stream at once (with its recorded delays).
      (async () => {
        let last = 0;
        for (let j = 0; j < q.events.length + 1; j++) {
          const t = q.events[Math.min(j, q.events.length - 1)]?.[0] ?? 0;
          if (timed && t > last) await sleep((t - last) / pace);
          last = t;
          if (player.divergence()) return;
          if (q.cut !== undefined && j >= q.events.length) return;
          s.release();
        }
      })();
      if (q.async) s.open();
    }
    return out;
  }

  /** Tool call `k`'s stand-in while it runs; `entry` is its log entry. */
  function pendingCall(k, entry, onUpdate) {
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
    const c = {
      sent: 0,
      done: false,
      promise,
      update() {
        const u = entry.updates[this.sent++];
        if (u !== undefined) onUpdate?.(clone(u[1]));
      },
      settle() {
        this.done = true;
        if (entry.ok) resolve(clone(entry.result));
        else reject(new Error(entry.error));
      },
      fail(error) {
        if (!this.done) reject(error);
        this.done = true;
      },
    };
    handled(promise);
    return c;
  }

  /** The outcome of a stand-in as the recorded part gave it: at once when it settled during the call. */
  function outcome(c, entry) {
    if (entry.async || !c.done) return c.promise;
    if (entry.ok) return clone(entry.result);
    throw new Error(entry.error);
  }

  const byId = (list, id, used) => list.findIndex((x, k) => x.id === id && !used.has(k));
  const usedCalls = new Set();
  const usedDecisions = new Set();

  function standIn(d) {
    return {
      ...clone(d),
      execute(toolCallId, params, signal, onUpdate) {
        if (player.lost()) throw new Error("Operation aborted");
        const k = callsMade++;
        if (player.divergence()) throw player.divergence();
        const strict = player.strict();
        const at = strict ? k : byId(data.calls, toolCallId, usedCalls);
        const entry = data.calls[at];
        if (!entry) throw player.diverge(`tool call ${toolCallId} (${d.name}) is not in the log`);
        usedCalls.add(at);
        if (entry.id !== String(toolCallId) || entry.name !== d.name || JSON.stringify(entry.args) !== JSON.stringify(params)) {
          throw player.diverge(`tool call ${entry.id}: recorded ${entry.name}(${JSON.stringify(entry.args)}), got ${toolCallId}: ${d.name}(${JSON.stringify(params)})`);
        }
        const c = pendingCall(at, entry, onUpdate);
        calls[at] = c;
        if (strict) {
          if (!player.call(["c", at])) throw player.divergence();
          return outcome(c, entry);
        }
        return (async () => {
          let last = 0;
          for (const [t] of entry.updates) {
            if (timed && t > last) await sleep((t - last) / pace);
            last = t;
            c.update();
          }
          if (timed && (entry.ms ?? 0) > last) await sleep(((entry.ms ?? 0) - last) / pace);
          if (entry.ok === undefined) return new Promise(noop);
          c.settle();
          return c.promise;
        })();
      },
    };
  }
  const standIns = (declared) => declared.map(standIn);
  const tools = standIns(data.tools);

  function beforeToolCall(context) {
    if (player.lost()) throw new Error("Operation aborted");
    const k = decisionsMade++;
    if (player.divergence()) throw player.divergence();
    const strict = player.strict();
    const id = context?.toolCall?.id;
    const at = strict ? k : byId(data.decisions, id, usedDecisions);
    const entry = data.decisions[at];
    if (!entry) {
      if (strict) throw player.diverge(`beforeToolCall for ${id} is not in the log`);
      return undefined;
    }
    usedDecisions.add(at);
    if (entry.id !== id) throw player.diverge(`beforeToolCall: recorded ${entry.id}, got ${id}`);
    let resolve;
    let reject;
    const promise = handled(new Promise((res, rej) => ((resolve = res), (reject = rej))));
    const pending = {
      done: false,
      promise,
      settle() {
        this.done = true;
        if (entry.ok) resolve(entry.r == null ? undefined : clone(entry.r));
        else reject(new Error(entry.error));
      },
      fail(error) {
        if (!this.done) reject(error);
        this.done = true;
      },
    };
    decisions[at] = pending;
    if (strict) {
      if (!player.call(["b", at])) throw player.divergence();
      if (entry.async || !pending.done) return promise;
      if (entry.ok) return entry.r == null ? undefined : clone(entry.r);
      throw new Error(entry.error);
    }
    if (entry.ok === undefined) return new Promise(noop);
    return (async () => {
      if (timed && entry.ms > 0) await sleep(entry.ms / pace);
      pending.settle();
      return promise;
    })();
  }

  return { streams, calls, decisions, streamFn, standIns, tools, beforeToolCall };
}
