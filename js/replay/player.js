// The player: a stream function, tool stand-ins and a `beforeToolCall` that answer from a log,
// and `play(agent)`, which walks the log's steps (log.js) in order: each step the agent takes by
// itself (a request, a read of its stream, a tool call, an event) is awaited and checked, and
// each step the world took (a stream item, a tool's update or result, a decision, a user's input)
// is made when its turn comes, before anything after it. So an input lands between the same two
// things as in the recorded run, and a tool's result that came after an abort comes after it again.
import { RUN_TOOL_CALL } from "../../src/agent/state.js";
import { IDLE_OPS, clone, describeStep, errorText } from "./log.js";
import { ReplayDivergenceError, contextDifference } from "./divergence.js";
import { ReadStream, applyEvent, emptyMessage, errorStream, handled, replaceFields } from "./stream.js";
import { WORKER_SEAM, attachInWorker, playInWorker } from "./workers.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const PARTIAL_EVENTS = new Set(["start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta",
  "thinking_end", "toolcall_start", "toolcall_delta", "toolcall_end"]);
/** Steps the world takes, which playback makes (the others it waits for). */
const RELEASES = new Set(["o", "u", "r", "d", "i"]);
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const noop = () => {};

/** Inputs a WorkerAgent's main thread makes (it holds the runs and the transcript). */
const MAIN_THREAD_INPUTS = new Set(["prompt", "continue", "messages", "reset"]);

/**
 * Plays a log (read by `readReplayLog`) back. `timing: "instant"` (default) answers at full speed;
 * `"recorded"` waits the recorded delays, divided by `speed`. Returns `{ streamFn, tools,
 * beforeToolCall, attach(agent), play(agent), divergence }`.
 */
export function createPlayer(data, options = {}) {
  const { timing = "instant", speed = 1, onDivergence, stallMs = 10_000 } = options;
  // Internal, for the worker half of a WorkerAgent's playback (in-worker.js): `delegate(input, n)`
  // makes a main-thread input there and resolves when its run ended, `onAbort` tells it of an
  // abort made here, `applied` says it has set the agent's settings and transcript.
  const { delegate, onAbort, applied } = options;
  const steps = data.steps;
  const timed = timing === "recorded";
  const pace = speed > 0 ? speed : 1;
  let divergence;
  let agent;
  /** `play()` walks the steps; otherwise every part answers from the log at once. */
  let strict = false;
  let i = 0;
  let requestsMade = 0;
  let callsMade = 0;
  let decisionsMade = 0;
  /** Per request, its stand-in stream; per call and decision, its pending stand-in. */
  const streams = [];
  const calls = [];
  const decisions = [];
  /** Items of the current "e" step the loop has still to read. */
  let reading = 0;
  /** A release waiting for its recorded delay, or an input for the agent to be idle. */
  let held = false;
  /** Waiting for the agent to be idle before an input (the stall watch applies). */
  let idling = false;
  /** A run the recording lost the end of, ending on the replaying agent. */
  let lost = false;
  /** The recorded time of the last release made (for `timing: "recorded"`). */
  let clock;
  /** Runs (and restored calls) playback started and the agent has not finished. */
  let runs = 0;
  const started = [];
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));

  const request = () => (requestsMade > 0 ? requestsMade : undefined);
  const diverge = (what, at = request()) => {
    if (divergence) return divergence;
    divergence = new ReplayDivergenceError(`Replay diverged${at === undefined ? "" : ` at request ${at}`}: ${what}`, at);
    try {
      onDivergence?.(divergence);
    } catch (err) {
      console.error("pi-agent-wasm/replay onDivergence:", err);
    }
    failPending();
    finish();
    return divergence;
  };

  // ---- the walk ------------------------------------------------------------------------------
  let walking = false;
  let again = false;
  function advance() {
    if (walking) {
      again = true;
      return;
    }
    walking = true;
    try {
      do {
        again = false;
        walk();
      } while (again);
    } finally {
      walking = false;
    }
    watch();
  }

  function walk() {
    while (strict && !divergence && !held && i < steps.length) {
      const step = steps[i];
      const code = step[0];
      if (inside !== undefined && !withinCall(step)) {
        // Made after the loop's call returned (the recording had it from another task): after it returns here too.
        deferred = true;
        return;
      }
      if (code === "e") {
        if (reading === 0) release(step);
        return;
      }
      if (!RELEASES.has(code)) return;
      if (code === "i") {
        if (!input(step)) return;
      } else release(step);
    }
    if (strict && !divergence && !held && i >= steps.length) end();
  }

  /** The stand-in call running now (`[code, k]` of its step), while the loop waits for it to return. */
  let inside;
  let deferred = false;
  /** Whether `step` happened during the call running now: the call's own update or synchronous outcome, an input made in it, a stream item queued. */
  function withinCall(step) {
    const [code, a] = step;
    if (!RELEASES.has(code) || code === "e") return true;
    if (code === "i") return data.inputs[a].inCall === true;
    const [callCode, k] = inside;
    if (callCode === "c") return a === k && (code === "u" || (code === "r" && !data.calls[k].async));
    if (callCode === "b") return a === k && code === "d" && !data.decisions[k].async;
    return false;
  }
  /** Marks the stand-in call `step` (a request, a tool call, a decision asked) and walks what happened during it. */
  function call(step) {
    const outer = inside;
    inside = step;
    try {
      return mark(step);
    } finally {
      inside = outer;
      if (deferred && inside === undefined) {
        deferred = false;
        queueMicrotask(advance);
      }
    }
  }

  /** The recorded time of a release step (the next item, for an "e" step). */
  function timeOf(step) {
    const [code, a] = step;
    if (code === "e") {
      const q = data.requests[a];
      const j = Math.min(streams[a].released, q.events.length - 1);
      return q.t + (j >= 0 ? q.events[j][0] : 0);
    }
    if (code === "o") return data.requests[a].t + (data.requests[a].o ?? 0);
    if (code === "u") return data.calls[a].t + data.calls[a].updates[calls[a].sent][0];
    if (code === "r") return data.calls[a].t + (data.calls[a].ms ?? 0);
    if (code === "d") return data.decisions[a].t + (data.decisions[a].ms ?? 0);
    return data.inputs[a].t;
  }

  /** Waits the recorded delay before `step` (none after an abort: what settled on it must still beat the loop's giving up). */
  function delayed(step, then) {
    if (!timed) return false;
    const t = timeOf(step);
    const delay = clock === undefined || agent?.signal?.aborted ? 0 : (t - clock) / pace;
    clock = Math.max(clock ?? t, t);
    if (!(delay > 0)) return false;
    held = true;
    setTimeout(() => {
      held = false;
      if (divergence) return;
      then();
      advance();
    }, delay);
    return true;
  }

  function release(step) {
    const [code, a, n] = step;
    if (code === "e") {
      // Handed over one by one (each after its recorded delay); the loop's reads complete the step.
      reading = n;
      let left = n;
      const hand = () => {
        streams[a].release();
        left--;
      };
      const more = () => {
        while (left > 0) {
          if (delayed(step, () => (hand(), more()))) return;
          hand();
        }
      };
      more();
      return;
    }
    const make = () => {
      i++;
      if (code === "o") streams[a].open();
      else if (code === "u") calls[a].update();
      else if (code === "r") calls[a].settle();
      else if (code === "d") decisions[a].settle();
    };
    if (!delayed(step, make)) make();
  }

  /**
   * A step the agent takes by itself happened: the next step must be it. Returns whether the
   * replay goes on (false once it diverged).
   */
  function mark(got) {
    if (!strict || divergence) return !divergence;
    if (lost) return true;
    const want = steps[i];
    if (want !== undefined && want[0] === "e" && got[0] === "e" && want[1] === got[1] && reading > 0) {
      if (--reading === 0) {
        i++;
        advance();
      }
      return true;
    }
    if (want === undefined || !same(want, got)) {
      const now = want === undefined ? "nothing more" : describeStep(want, data);
      diverge(`recorded ${now}, got ${describeStep(got, data)} (step ${i})`);
      return false;
    }
    i++;
    advance();
    return true;
  }

  // ---- inputs --------------------------------------------------------------------------------
  /** Makes input step `step`; false while it waits for the agent to be idle. */
  function input(step) {
    const x = data.inputs[step[1]];
    if (x.busy) {
      i++;
      return true;
    }
    if (delayed(step, noop)) return false;
    if (IDLE_OPS.has(x.op) || lost) {
      held = idling = true;
      Promise.resolve(agent.waitForIdle()).then(() => {
        held = idling = false;
        if (divergence) return;
        i++;
        perform(x, step[1]);
        advance();
      });
      return false;
    }
    i++;
    perform(x, step[1]);
    return true;
  }

  function perform(x, n) {
    if (delegate && MAIN_THREAD_INPUTS.has(x.op)) return track(delegate(x, n));
    try {
      switch (x.op) {
        case "prompt":
          track(x.text !== undefined ? agent.prompt(x.text, clone(x.images)) : agent.prompt(clone(x.m)));
          break;
        case "continue":
          track(agent.continue());
          break;
        case "steer":
        case "followUp":
          agent[x.op](clone(x.m));
          break;
        case "messages": {
          const now = agent.state.messages;
          if (x.keep > now.length) return void diverge(`the app's edit of the transcript keeps ${x.keep} message(s); the replay has ${now.length}`);
          agent.state.messages = [...now.slice(0, x.keep), ...clone(x.add)];
          break;
        }
        case "model":
          if (x.model !== undefined) agent.state.model = clone(x.model);
          if (x.thinkingLevel !== undefined) agent.state.thinkingLevel = x.thinkingLevel;
          break;
        case "tools":
          agent.state.tools = standIns(x.tools);
          break;
        case "runToolCall": {
          const message = x.m !== undefined ? clone(x.m) : agent.state.messages[x.a];
          if (message?.role !== "assistant") return void diverge(`a restored tool call's assistant message is transcript message ${x.a}, a ${message?.role ?? "missing"} message in the replay`);
          track(agent[RUN_TOOL_CALL](clone(x.toolCall), message));
          break;
        }
        case "abort":
          agent.abort();
          onAbort?.();
          break;
        case "lost":
          // The recording lost the rest of this run (its worker ended): the replay's run ends here,
          // and what it emits meanwhile is not in the log.
          if (agent.signal === undefined) break;
          lost = true;
          agent.abort();
          onAbort?.();
          Promise.resolve(agent.waitForIdle()).then(() => {
            lost = false;
            advance();
          });
          break;
        default:
          agent[x.op]();
      }
    } catch (err) {
      diverge(`${x.op}() threw: ${errorText(err)}`);
    }
  }

  /** A run (or a restored call) under way: once it ends with the log still expecting the agent to act, the replay is stuck. */
  function track(promise) {
    runs++;
    started.push(
      Promise.resolve(promise)
        .catch(noop)
        .then(() => agent.waitForIdle())
        .then(() => {
          runs--;
          stuck();
        }),
    );
  }
  function stuck() {
    if (divergence || runs > 0 || held || i >= steps.length) return;
    const step = steps[i];
    if (!RELEASES.has(step[0])) diverge(`recorded ${describeStep(step, data)}, but the agent is idle (step ${i})`);
  }

  let stallTimer;
  let stallAt = -1;
  /** Nothing happens for `stallMs` while the log waits on the agent: the replay would hang; it diverges instead. */
  function watch() {
    const waiting = idling || (!held && i < steps.length && !RELEASES.has(steps[i][0]));
    if (!strict || divergence || !waiting) {
      clearTimeout(stallTimer);
      stallTimer = undefined;
      return;
    }
    if (stallTimer !== undefined && stallAt === i) return;
    clearTimeout(stallTimer);
    stallAt = i;
    const at = i;
    stallTimer = setTimeout(() => {
      stallTimer = undefined;
      if (divergence || i !== at || (held && !idling)) return;
      const what = idling ? `the agent to be idle for ${describeStep(steps[at], data)}` : describeStep(steps[at], data);
      diverge(`recorded ${what} next, but nothing happened for ${stallMs} ms (step ${at})`);
      // The agent waits on something that will not come: the abort ends its run (the loop gives up
      // on what ignores it), so that play() settles.
      agent.abort();
    }, stallMs);
  }

  function end() {
    clearTimeout(stallTimer);
    finish();
  }

  /** After a divergence nothing waits on the log: pending parts fail at once with it. */
  function failPending() {
    clearTimeout(stallTimer);
    for (const s of streams) s?.fail(divergence);
    for (const c of calls) c?.fail(divergence);
    for (const d of decisions) d?.fail(divergence);
  }

  // ---- the stand-ins -------------------------------------------------------------------------
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
        mark(["e", k, 1]);
      },
      () => {
        if (q.cut?.partial) replaceFields(partial, clone(q.cut.partial));
        mark(["x", k]);
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
    if (lost) return errorStream(model, "Request was aborted", "aborted");
    const k = requestsMade++;
    if (divergence) return errorStream(model, divergence.message);
    const messages = Array.isArray(context?.messages) ? context.messages : [];
    const q = data.requests[k];
    const s = q ? standInStream(k, model) : undefined;
    streams[k] = s;
    const out = s?.result();
    if (strict && !call(["s", k])) return errorStream(model, divergence.message);
    const diff = contextDifference(data.requests, k, model, messages);
    if (diff !== undefined) return errorStream(model, diverge(diff).message);
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
          if (divergence) return;
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
        if (lost) throw new Error("Operation aborted");
        const k = callsMade++;
        if (divergence) throw divergence;
        const at = strict ? k : byId(data.calls, toolCallId, usedCalls);
        const entry = data.calls[at];
        if (!entry) throw diverge(`tool call ${toolCallId} (${d.name}) is not in the log`);
        usedCalls.add(at);
        if (entry.id !== String(toolCallId) || entry.name !== d.name || JSON.stringify(entry.args) !== JSON.stringify(params)) {
          throw diverge(`tool call ${entry.id}: recorded ${entry.name}(${JSON.stringify(entry.args)}), got ${toolCallId}: ${d.name}(${JSON.stringify(params)})`);
        }
        const c = pendingCall(at, entry, onUpdate);
        calls[at] = c;
        if (strict) {
          if (!call(["c", at])) throw divergence;
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
    if (lost) throw new Error("Operation aborted");
    const k = decisionsMade++;
    if (divergence) throw divergence;
    const id = context?.toolCall?.id;
    const at = strict ? k : byId(data.decisions, id, usedDecisions);
    const entry = data.decisions[at];
    if (!entry) {
      if (strict) throw diverge(`beforeToolCall for ${id} is not in the log`);
      return undefined;
    }
    usedDecisions.add(at);
    if (entry.id !== id) throw diverge(`beforeToolCall: recorded ${entry.id}, got ${id}`);
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
      if (!call(["b", at])) throw divergence;
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

  // ---- attaching and playing -----------------------------------------------------------------
  /** Sets the agent's stream function, tools and (when the log has decisions) `beforeToolCall`. */
  function attach(target) {
    if (!delegate && typeof target?.[WORKER_SEAM] === "function") return attachInWorker(target, data, workerOptions());
    agent = target;
    agent.streamFunction = streamFn;
    agent.state.tools = tools;
    if (data.decisions.length > 0) agent.beforeToolCall = beforeToolCall;
    return agent;
  }

  function listener(event) {
    const type = event?.type;
    if (typeof type !== "string" || type === "message_update" || type === "tool_execution_update") return;
    const id = type === "message_start" || type === "message_end" ? event.message?.role : event.toolCallId;
    mark(typeof id === "string" ? ["a", type, id] : ["a", type]);
  }

  /** The options a worker half can take (functions do not cross). */
  const workerOptions = () => ({ timing, speed, stallMs });

  let played = false;
  async function play(target) {
    if (played) throw new Error("pi-agent-wasm/replay: a replay plays once; create another to play again");
    played = true;
    if (!delegate && typeof target?.[WORKER_SEAM] === "function") {
      // A WorkerAgent: its loop, and so the playback, runs in its worker.
      agent = target;
      return playInWorker(target, data, workerOptions(), (e) => {
        divergence ??= e;
        try {
          onDivergence?.(e);
        } catch (err) {
          console.error("pi-agent-wasm/replay onDivergence:", err);
        }
      });
    }
    attach(target);
    agent.beforeToolCall = data.decisions.length > 0 ? beforeToolCall : undefined;
    const settings = data.agent ?? {};
    if (!applied) {
      for (const key of ["steeringMode", "followUpMode", "toolExecution"]) if (settings[key] !== undefined) agent[key] = settings[key];
      if (settings.model !== undefined) agent.state.model = clone(settings.model);
      if (settings.thinkingLevel !== undefined) agent.state.thinkingLevel = settings.thinkingLevel;
      if (data.initial !== undefined) agent.state.messages = clone(data.initial);
    }
    const unsubscribe = agent.subscribe(listener, { deltas: false });
    strict = true;
    advance();
    try {
      await finished;
      // A log exported mid-run ends there: the agent is left where the recorded one was.
      if (!divergence && !data.running) {
        await Promise.all(started);
        await agent.waitForIdle();
      }
      if (divergence) {
        await agent.waitForIdle();
        throw divergence;
      }
    } finally {
      clearTimeout(stallTimer);
      if (divergence || !data.running) unsubscribe();
    }
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
