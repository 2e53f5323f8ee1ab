// Two writers of one session log: the same user's session open in two browsers or on two
// devices, each with its own agent writing to one server store. Each append names the length of
// the log it extends (`append(id, text, { length })`); a store that checks it refuses a stale
// append with a SessionConflictError carrying the log's length now, so the log is never torn or
// interleaved. The writer that was refused catches up: it stops its own run (whose answer was
// built on a transcript the log no longer ends with), reads the log as it is, shows it in the
// agent as a reload would, and prompts again with the user messages it had not written.

/** A store refused an append or a replace: the log is `length` characters long, not the length the writer gave. */
export class SessionConflictError extends Error {
  constructor(length, message) {
    super(message ?? `pi-agent-wasm/session: another writer extended the session log (it has ${length} characters now)`);
    this.name = "SessionConflictError";
    this.length = length;
  }
}

/** By name, so that a store of another copy of the package (or the app's own) is understood too. */
export const isSessionConflict = (error) => error?.name === "SessionConflictError" && Number.isInteger(error.length);

/** For a store in memory: throws the conflict when `options.length` is given and is not `current`. */
export function checkLength(current, options) {
  const expected = options?.length;
  if (expected !== undefined && expected !== current) throw new SessionConflictError(current);
}

/**
 * Keeps the agent's own message objects where the log's restored transcript has the same
 * message (by value), so a transcript rendered by identity redraws only what changed.
 */
export function keepIdentity(restored, local) {
  const n = Math.min(restored.length, local?.length ?? 0);
  for (let i = 0; i < n; i++) {
    if (restored[i] === local[i]) continue;
    if (JSON.stringify(restored[i]) !== JSON.stringify(local[i])) break;
    restored[i] = local[i];
  }
}

/** More conflicts than this in a row, with no write between them: the store is reported as failing. */
const MAX_CONFLICTS = 8;

/**
 * Catches a session up with another writer. `session` gives what only the session knows:
 * - `pause()` stops its writes and event handling (what the agent does meanwhile is not written);
 * - `writtenMessages()` the number of the agent's messages the log held after the last write that landed;
 * - `restore(keep)` reads the log and puts it into the agent as a reload does (`keep`: the
 *   agent's messages, whose objects are kept where the log has them);
 * - `resume()` writes again from there (the repairs of a reload first);
 * - `prompt(messages)` starts a run as the app's own `prompt` would;
 * - `fail(error)` reports a store that keeps conflicting;
 * - `grew()` whether the log has more than the session read or wrote (another writer appended).
 * Resolves once the agent shows the log and the session writes again.
 */
export function createCatchUp(agent, session) {
  let running; // the catch-up in progress
  let again = false;
  let conflicts = 0;
  async function catchUp() {
    session.pause();
    // A run going on here is stopped: what it added after the last write is not kept.
    if (agent.state.isStreaming) {
      agent.abort();
      await agent.waitForIdle();
    }
    const local = agent.state.messages;
    const unsent = local.slice(session.writtenMessages()).filter((m) => m?.role === "user");
    await session.restore(local);
    const shown = new Set(agent.state.messages);
    const resend = unsent.filter((m) => !shown.has(m));
    await session.resume();
    return resend;
  }
  const start = () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let resend = [];
      do {
        again = false;
        resend = [...resend, ...(await catchUp())];
      } while (again);
      running = undefined;
      if (resend.length > 0) session.prompt(resend);
    })().catch((err) => {
      running = undefined;
      session.fail(err);
    });
    return running;
  };
  return {
    /** A write was refused with `error`: catch up (once for conflicts that arrive while it runs). */
    conflict(error) {
      if (++conflicts > MAX_CONFLICTS) return session.fail(error);
      return start();
    },
    /**
     * Catches up if another writer extended the log (asked when the page becomes visible again, so
     * a browser the user comes back to shows what was written elsewhere without writing first).
     */
    async check() {
      if (running || agent.state.isStreaming || !(await session.grew())) return;
      if (!agent.state.isStreaming) await start();
    },
    /** A write landed: the conflicts so far are settled. */
    written() {
      conflicts = 0;
    },
    /** Resolves when no catch-up is running (a run asked for meanwhile waits for this). */
    settled: () => running ?? Promise.resolve(),
  };
}
