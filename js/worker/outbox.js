// The worker's posts to the page (host.js): events wait in a batch that is posted at least a
// frame after the last post while they stream, and runs of text and thinking deltas cross as one
// string and one transferred array of lengths. The page reads them back in index.js (`#deltas`).
import { TAG, EXPLICIT } from "./protocol.js";

// Each post costs the page a task (about as much as a few hundred deltas): while events keep coming, posts
// are at least a frame apart. A call into the page, the end of a run and anything else flushes at once.
const FRAME_MS = 16;

/** The outbox of `scope` (the worker's global, or a port). */
export function createOutbox(scope) {
  let batch = [];
  // The batch's runs of text and thinking deltas (see `delta`): the text they append, joined into one
  // string at the flush, and per delta the length it appends and the length of its `delta`. One string and
  // one transferred array per post: a string or a number per delta would each cost the page a step of
  // structured-clone reading.
  let texts = [];
  let lens = [];
  // The run being extended (its code and block), the text appended to that block that no delta has covered
  // yet, and the blocks of the streaming message that had a delta. A stream that mutates its partial before
  // the loop reads its events runs ahead of them: the text it ran ahead by is what its next deltas are, so
  // they need not cross again. The page keeps the same state from the same items (index.js, `#deltas`).
  let runCode = 0;
  let runBlock = -1;
  let ahead = "";
  let streamed = new Set();
  let flushScheduled = false;
  let lastFlush = -Infinity;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => flush();
  // Node (serveAgent on a port of its own): this channel must not keep the process alive.
  channel.port1.unref?.();

  function flush() {
    flushScheduled = false;
    if (!batch.length) return;
    lastFlush = performance.now();
    const msg = { op: "ev", events: batch };
    batch = [];
    if (lens.length === 0) return void scope.postMessage({ [TAG]: msg });
    msg.text = texts.join("");
    msg.lens = new Uint32Array(lens);
    texts = [];
    lens = [];
    scope.postMessage({ [TAG]: msg }, [msg.lens.buffer]);
  }
  const schedule = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    const wait = lastFlush + FRAME_MS - performance.now();
    if (wait > 0) setTimeout(flush, wait);
    else channel.port2.postMessage(0);
  };

  return {
    /** Posts `msg` now, after the events batched before it. */
    post(msg) {
      if (batch.length) flush();
      scope.postMessage({ [TAG]: msg });
    },
    /** Adds an event (or a change of state) to the batch. */
    event(item) {
      runCode = 0;
      ahead = "";
      batch.push(item);
      schedule();
    },
    /**
     * Adds a text (code 1) or thinking (code 2) delta of block `ci` to a run: the block grew by `appended`
     * (from `before`). Per delta, `lens` gets the length appended and the delta's length, plus EXPLICIT when
     * the delta is not the next part of the text the run ran ahead by and crosses in `text` itself.
     */
    delta(code, ci, before, appended, delta) {
      const first = streamed.size === 0;
      if (runCode !== code || runBlock !== ci) {
        runCode = code;
        runBlock = ci;
        // A block that no delta covered yet (a stream that filled it before its first event) is all ahead.
        ahead = streamed.has(ci) ? "" : before;
      }
      streamed.add(ci);
      const next = ahead === "" ? appended : appended === "" ? ahead : ahead + appended;
      let length = delta.length;
      if (next.startsWith(delta)) ahead = next.length === length ? "" : next.slice(length);
      else {
        ahead = "";
        length += EXPLICIT;
      }
      if (appended !== "") texts.push(appended);
      if (length >= EXPLICIT) texts.push(delta);
      lens.push(appended.length, length);
      const last = batch[batch.length - 1];
      if (last !== undefined && last[0] === code && last[1] === ci) last[2]++;
      else {
        batch.push([code, ci, 1]);
        schedule();
      }
      // The answer's first text goes at the end of this task, not a frame after the last post (its
      // message_start): the first token on screen waits for no timer.
      if (first) {
        flushScheduled = true;
        channel.port2.postMessage(0);
      }
    },
    /** A message started streaming: none of its blocks had a delta yet. */
    newMessage() {
      streamed = new Set();
    },
    /** Block `ci` of the streaming message had a delta that crossed as a change. */
    streamed(ci) {
      streamed.add(ci);
    },
  };
}
