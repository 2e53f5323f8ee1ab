// The player: `play(agent)` gives the agent the log's stand-ins (stand-ins.js) and walks the log's
// steps (log.js) in order: each step the agent takes by
// itself (a request, a read of its stream, a tool call, an event) is awaited and checked, and
// each step the world took (a stream item, a tool's update or result, a decision, a user's input)
// is made when its turn comes, before anything after it. So an input lands between the same two
// things as in the recorded run, and a tool's result that came after an abort comes after it again.
import { RUN_TOOL_CALL } from "../../src/agent/state.js";
import { IDLE_OPS, clone, describeStep, errorText } from "./log.js";
import { ReplayDivergenceError } from "./divergence.js";
import { createStandIns } from "./stand-ins.js";
import { WORKER_SEAM, attachInWorker, playInWorker } from "./workers.js";

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
  // The signals of the restored tool calls running (`runToolCall`): an `abort` input aborts them, as
  // the recording's session aborted its own when the user aborted or moved on, and so does `lost`.
  const callRuns = new Set();
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));

  const request = () => (streams.length > 0 ? streams.length : undefined);
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
          const controller = new AbortController();
          callRuns.add(controller);
          track(Promise.resolve(agent[RUN_TOOL_CALL](clone(x.toolCall), message, controller.signal)).finally(() => callRuns.delete(controller)));
          break;
        }
        case "abort":
          agent.abort();
          for (const c of callRuns) c.abort();
          onAbort?.();
          break;
        case "lost":
          // The recording's worker ended: its queues went with it (the page queues what they held
          // again, as inputs the log has after this one), and the rest of its run is lost: the
          // replay's run ends here, and what it emits meanwhile is not in the log.
          agent.clearAllQueues();
          for (const c of callRuns) c.abort();
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
  const { streams, calls, decisions, streamFn, standIns, tools, beforeToolCall } = createStandIns(data, {
    strict: () => strict,
    divergence: () => divergence,
    lost: () => lost,
    diverge: (what) => diverge(what),
    call,
    mark,
  }, { timed, pace });

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
