// Restore: reading a session's log and putting its conversation into the agent, made valid for
// the next request (log.js `restoreFrom` decides what each cut call and answer becomes).
import { SessionLogError, foldLog, logHeader, readLog, restoreFrom } from "./log.js";
import { keepIdentity } from "./conflict.js";

/**
 * Reads session `id`'s log: `{ text, records, header, dropped }`. A store's failure is given to
 * `fail` and reads as an empty log; a log of another version gives `undefined`.
 */
export async function readSession(store, id, fail) {
  try {
    const text = String((await store.load(id)) ?? "");
    return { text, ...readLog(text) };
  } catch (err) {
    fail(err);
    return err instanceof SessionLogError ? undefined : { text: "", records: [], header: false, dropped: 0 };
  }
}

/**
 * What `log` holds, for the writer (writer.js `createWriter`'s `from`): its transcript, queues and
 * model settings as folded (`folded`), its length and records, and the text to repair it to when
 * it is new, torn or damaged in the middle (rewritten once, from what was read).
 */
export function writerStart(log, folded = foldLog(log.records)) {
  const from = { mirror: folded.messages, steering: [], followUps: [], length: log.text.length, count: log.records.length };
  if (!log.header || log.dropped > 0) from.repair = log.header ? log.text.slice(0, log.text.length - log.dropped) : logHeader();
  if (log.header) Object.assign(from, { steering: folded.steering, followUps: folded.followUp, model: folded.model, thinkingLevel: folded.thinkingLevel });
  return from;
}

/**
 * Puts the conversation of `log` into `agent`: transcript, model settings and queues, each when
 * the log has it (a log that holds no transcript, such as one just cleared, leaves the agent's as
 * it was configured). `replaySafe(name)` tells whether a tool may run again after a reload.
 * `keep`: messages of the agent whose objects are kept where the log has the same (a catch-up with
 * another writer, conflict.js). Returns what the session shows (`restored`, `interrupted`,
 * `pending`, `dropped`, `damage`), the tree of the conversation's versions (`tree`, branches.js)
 * and `from`, what the log holds once repaired, for the writer.
 */
export function restoreInto(agent, log, replaySafe, keep) {
  const folded = foldLog(log.records);
  if (keep) keepIdentity(folded.messages, keep);
  const out = { restored: false, interrupted: false, pending: [], dropped: log.dropped, damage: log.damage, from: writerStart(log, folded), tree: folded.tree };
  if (!log.header || log.records.length === 0) return out;
  out.restored = true;
  if (folded.transcript) {
    const restored = restoreFrom(folded, replaySafe);
    out.interrupted = restored.interrupted;
    out.pending = restored.pending;
    agent.state.messages = restored.messages;
  }
  if (folded.model !== undefined) agent.state.model = folded.model;
  if (folded.thinkingLevel !== undefined) agent.state.thinkingLevel = folded.thinkingLevel;
  agent.clearAllQueues();
  for (const m of folded.steering) agent.steer(m);
  for (const m of folded.followUp) agent.followUp(m);
  return out;
}
