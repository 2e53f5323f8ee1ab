// The tool calls a reload left waiting (restore.js finds them: calls waiting for approval, calls
// that never started, `replay: "safe"` calls that were running), `resume()`, and what the agent's
// runs do while such calls wait, so that the next request is always valid for a strict provider
// (each tool call answered by its result before anything else):
//   prompt()    the user moved on: each waiting call gets an `isError` result saying so (a call
//               that resume() is asking about again is cancelled: its beforeToolCall's signal is
//               aborted), then the prompt runs;
//   continue()  runs the waiting calls as resume() does, then continues;
//   steer(), followUp()  queue as during a run: delivered once the calls have their results;
//   abort()     ends a resume() that runs: each call left gets an "Operation aborted" result;
//   reset()     forgets the waiting calls.
import { RUN_TOOL_CALL } from "../../src/agent/state.js";
import { toolResultMessage } from "./log.js";

/** The result of a call waiting for approval when the user sent a new message instead. */
export const MOVED_ON_APPROVAL = "Not run: the user sent a new message instead of approving this call";
/** The result of a restored call that had not run when the user sent a new message. */
export const MOVED_ON_CALL = "Not run: the user sent a new message before this call ran";

// The in-page Agent's own messages for a run asked for while one goes on.
const ALREADY_PROMPTING =
  "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
const ALREADY_CONTINUING = "Agent is already processing. Wait for completion before continuing.";

const errorResult = (text) => ({ content: [{ type: "text", text }], details: {} });

/**
 * The waiting calls of a session on `agent`. `notify()` tells the session's listeners that they
 * changed; `record(r)` adds a record to the log (a call started again); `flush()` writes.
 */
export function createWaiting(agent, { notify, record, flush }) {
  let pending = [];
  // The resume() that runs: { controller, promise, calls, moved, dropped, current }.
  let job;
  // A prompt() giving the waiting calls their results before it runs.
  let movingOn;
  // Ids of the calls waiting in beforeToolCall now, and of those it was called for (see `track`).
  const asking = new Set();
  const asked = new Set();
  // The agent's methods as they were when the session wrapped them (`wrap`).
  const original = {};

  /** Adds `results` to the transcript, when the calls they answer are still in it. */
  function answer(calls, results) {
    const messages = agent.state.messages;
    const keep = results.filter((_, i) => messages.includes(calls[i].assistantMessage));
    if (keep.length > 0) agent.state.messages = [...messages, ...keep];
  }
  const movedOn = ({ toolCall, approval }) =>
    toolResultMessage(toolCall, errorResult(approval || asking.has(toolCall.id) ? MOVED_ON_APPROVAL : MOVED_ON_CALL), true);

  async function runCalls(current, signal) {
    for (let i = 0; i < current.calls.length; i++) {
      const call = current.calls[i];
      if (current.dropped) return;
      if (current.moved) {
        answer([call], [movedOn(call)]);
        continue;
      }
      const { toolCall, assistantMessage } = call;
      record({ t: "ts", id: toolCall.id });
      asked.delete(toolCall.id);
      current.call = call;
      let outcome;
      try {
        outcome = await agent[RUN_TOOL_CALL](toolCall, assistantMessage, signal);
      } catch (err) {
        outcome = { result: errorResult(err instanceof Error ? err.message : String(err)), isError: true };
      }
      current.call = undefined;
      if (current.dropped) return;
      // The user moved on before this call ran (while it was asked about again, or before it was): it did not run.
      const message = current.movedBeforeRun
        ? movedOn({ toolCall, approval: call.approval || current.movedWhileAsking })
        : toolResultMessage(toolCall, outcome.result, outcome.isError);
      answer([call], [message]);
    }
  }

  /** Runs the waiting calls (through beforeToolCall again), adds their results, then continues the run. */
  function resume({ signal } = {}) {
    if (job) return job.promise;
    const calls = pending;
    pending = [];
    const controller = new AbortController();
    const current = (job = { controller, calls, moved: false, movedWhileAsking: false, movedBeforeRun: false, dropped: false });
    const onAbort = () => controller.abort(signal.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    notify();
    current.promise = (async () => {
      try {
        await runCalls(current, controller.signal);
      } finally {
        signal?.removeEventListener("abort", onAbort);
        if (job === current) job = undefined;
        flush();
      }
      if (current.moved || current.dropped || controller.signal.aborted) return;
      const last = agent.state.messages[agent.state.messages.length - 1];
      if (calls.length > 0 || last?.role === "toolResult") await original.continue.call(agent);
    })();
    return current.promise;
  }

  /** The user moved on: every waiting call gets its result now (a call asked about again is cancelled). */
  async function moveOn() {
    const declined = pending;
    pending = [];
    if (declined.length > 0) answer(declined, declined.map(movedOn));
    const current = job;
    if (current) {
      current.moved = true;
      const id = current.call?.toolCall.id;
      current.movedWhileAsking = id !== undefined && asking.has(id);
      // A prompt() right after resume() can come before beforeToolCall is asked: the call has not run either.
      current.movedBeforeRun = current.movedWhileAsking || (id !== undefined && !asked.has(id) && typeof agent.beforeToolCall === "function");
      current.controller.abort();
      await current.promise.catch(() => {});
    }
    notify();
    flush();
  }

  return {
    get pending() {
      return pending;
    },
    /** Whether resume() (or a prompt() giving the waiting calls their results) runs now. */
    get running() {
      return job !== undefined || movingOn !== undefined;
    },
    /** The transcript moved (a branch): the calls of an answer it no longer holds wait no more. */
    forget() {
      const messages = agent.state.messages;
      const kept = pending.filter((call) => messages.includes(call.assistantMessage));
      if (kept.length === pending.length) return;
      pending = kept;
      notify();
    },
    /** The calls restore found waiting. */
    set(calls) {
      pending = calls;
    },
    resume,
    /** The beforeToolCall runs call, wrapped so that the session knows which calls wait in it. */
    track: (hook) =>
      typeof hook !== "function"
        ? hook
        : async (context, signal) => {
            const id = context?.toolCall?.id;
            asking.add(id);
            asked.add(id);
            try {
              return await hook(context, signal);
            } finally {
              asking.delete(id);
            }
          },
    /**
     * The agent's methods while calls wait (`own`: own.js `ownMethods`). `gate(again)` may hold a
     * run back: it gives a promise for what the run gives (a rejection while the tab does not lead,
     * `again()` once a catch-up with another writer is over), or undefined to run it now.
     */
    wrap(own, gate) {
      for (const name of ["prompt", "continue", "reset", "abort", "waitForIdle"]) original[name] = agent[name];
      own.set("prompt", function prompt(...args) {
        const held = gate(() => prompt.apply(this, args));
        if (held) return held;
        if (movingOn) return Promise.reject(new Error(ALREADY_PROMPTING));
        if (!job && pending.length === 0) return original.prompt.apply(agent, args);
        const run = (movingOn = moveOn().then(() => {
          movingOn = undefined;
          return original.prompt.apply(agent, args);
        }));
        return run;
      });
      own.set("continue", function run() {
        const held = gate(() => run.call(this));
        if (held) return held;
        if (movingOn || job) return Promise.reject(new Error(ALREADY_CONTINUING));
        if (pending.length > 0) return resume();
        return original.continue.call(agent);
      });
      own.set("reset", function () {
        const out = original.reset.call(agent);
        if (job) {
          job.dropped = true;
          job.controller.abort();
        }
        if (pending.length > 0 || job) {
          pending = [];
          notify();
        }
        return out;
      });
      own.set("abort", function () {
        job?.controller.abort();
        return original.abort.call(agent);
      });
      own.set("waitForIdle", async function () {
        while (job || movingOn) await (job?.promise ?? movingOn).catch(() => {});
        return original.waitForIdle.call(agent);
      });
    },
  };
}
