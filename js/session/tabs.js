// Tabs on one session: one leads (a Web Lock per session id) and runs the agent and the writer;
// the others follow the leader's writes (told over a BroadcastChannel that the log grew, they
// read what was appended) and take over, restoring as after a reload, when the leader's tab closes.
import { createFold, copyPartial, readLog } from "./log.js";
import { REPLACED } from "./writer.js";
import { readSession } from "./restore.js";

/** The name of session `id`'s lock and channel. */
export const tabsName = (id) => `pi-agent-wasm-session:${id}`;

/** A BroadcastChannel, where there is one. */
export function openChannel(name) {
  if (typeof BroadcastChannel !== "function") return undefined;
  const c = new BroadcastChannel(name);
  c.unref?.(); // Node: an open channel must not keep the process alive
  return c;
}

/**
 * The session's lock (`locks`: `navigator.locks`). `tryLead()` resolves whether this tab got it
 * at once; `waitToLead(takeOver)` calls `takeOver()` once the tab holding it lets go, and keeps it
 * after; `release()` lets go of it, or stops waiting for it.
 */
export function tabLock(locks, name) {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const waiting = new AbortController();
  return {
    tryLead: () =>
      new Promise((resolve) => {
        locks
          .request(name, { ifAvailable: true }, (lock) => {
            resolve(lock !== null);
            return lock ? held : undefined;
          })
          .catch(() => resolve(true));
      }),
    waitToLead(takeOver) {
      locks
        .request(name, { signal: waiting.signal }, () => takeOver()?.then(() => held))
        .catch(() => {});
    },
    release() {
      waiting.abort();
      release();
    },
  };
}

/**
 * A following tab's view of the leader's log. `show()` reads what the leader wrote since the last
 * read and shows it in `agent` (`following()` false stops it: the tab took over or detached);
 * `replaced()` says the leader rewrote the log (it is read from its start next); `streaming` is the
 * answer streaming in the leader's tab. `notify()` is called after each change shown.
 */
export function createFollower({ agent, store, id, fail, notify, following }) {
  let remoteStreaming;
  let reading = false;
  let readAgain = false;
  // The leader's log as read so far: its fold, how many characters and records it holds; `replacements`
  // counts the leader's rewrites, after which it is read again from its start.
  let followed;
  let replacements = 0;
  // What this tab last assigned to its agent from the fold, so that it assigns only what changed.
  const shown = {};

  /**
   * What the leader's log holds now. Reads only what was appended since the last read when the
   * store can (`loadFrom`), else the whole log again; gives the fold's state, or undefined when
   * the read failed or the log was replaced while it ran.
   */
  async function readFollowed() {
    const f = followed;
    const seen = replacements;
    if (f !== undefined && store.loadFrom) {
      let text;
      try {
        text = String((await store.loadFrom(id, f.at)) ?? "");
      } catch (err) {
        fail(err);
        return undefined;
      }
      if (replacements !== seen) return undefined;
      const { records, dropped } = readLog(text, true, f.count);
      for (const r of records) f.fold.apply(r);
      f.at += text.length - dropped;
      f.count += records.length;
      return f.fold.state;
    }
    const log = await readSession(store, id, fail);
    if (!log || replacements !== seen) return undefined;
    const fold = createFold();
    for (const r of log.records) fold.apply(r);
    followed = { fold, at: log.text.length - log.dropped, count: log.records.length };
    return fold.state;
  }

  /**
   * Shows the log as the leader wrote it. Only its new records are applied, so the messages shown
   * keep their identity (a transcript rendered by identity does not redraw, a WorkerAgent's
   * worker is not sent it again).
   */
  async function show() {
    if (reading) return void (readAgain = true);
    reading = true;
    do {
      readAgain = false;
      const folded = await readFollowed();
      if (!following()) break;
      if (!folded) continue;
      // A log that holds no transcript (just cleared) leaves the agent's as it is.
      if (folded.transcript && (folded.messages !== shown.array || folded.messages.length !== shown.length)) {
        agent.state.messages = folded.messages;
        shown.array = folded.messages;
        shown.length = folded.messages.length;
      }
      if (folded.model !== undefined && folded.model !== shown.model) agent.state.model = shown.model = folded.model;
      if (folded.thinkingLevel !== undefined && folded.thinkingLevel !== shown.thinkingLevel) {
        agent.state.thinkingLevel = shown.thinkingLevel = folded.thinkingLevel;
      }
      // A copy: the fold goes on extending its blocks' text in place.
      const s = folded.streaming;
      remoteStreaming = s && copyPartial(s);
      notify();
    } while (readAgain && following());
    reading = false;
  }

  return {
    show,
    /** Handles a message of the leader's channel. */
    heard(message) {
      if (message === REPLACED) {
        followed = undefined;
        replacements++;
      }
      if (following()) show();
    },
    /** The versions of the conversation as the leader's log has them (branches.js), once it was read. */
    get tree() {
      return followed?.fold.state.tree;
    },
    get streaming() {
      return remoteStreaming;
    },
    /** Whether this tab shows a transcript read from the log. */
    get showing() {
      return shown.array !== undefined;
    },
    /** The length of the log read so far (0 before the first read). */
    get length() {
      return followed?.at ?? 0;
    },
    stop() {
      remoteStreaming = undefined;
    },
    /** Forgets what was read and shown: the next `show()` reads the log from its start (following it again, after leading). */
    restart() {
      followed = undefined;
      replacements++;
      for (const key of Object.keys(shown)) delete shown[key];
    },
  };
}
