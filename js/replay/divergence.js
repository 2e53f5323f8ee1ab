// How a replay tells that it went another way than the recorded run: a hash of each context
// message (a log keeps the hashes of every request's context, and the messages only once), and
// the report of the first difference.

/** A replay that went another way than the log; `message` names the first difference. */
export class ReplayDivergenceError extends Error {
  /**
   * `request` is the number of the request the replay was at, counted from 1 as the message
   * says ("Replay diverged at request 2: …"), or `undefined` before the first request.
   */
  constructor(message, request) {
    super(message);
    this.name = "ReplayDivergenceError";
    this.request = request;
  }
}

// FNV-1a over the message's JSON without its timestamps and durations (they change from run to run).
const noTimestamp = (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value);
export function hashMessage(message) {
  let text;
  try {
    text = JSON.stringify(message, noTimestamp) ?? "";
  } catch {
    text = String(message);
  }
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/** A message in a few words: its role and the start of its text. */
export function preview(message) {
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

export const modelKey = (model) => `${model?.provider}/${model?.id}`;

/** The hashes of a request's context, and how many it shares with the previous request's. */
export function contextHashes(messages, previous) {
  const h = messages.map(hashMessage);
  let from = 0;
  if (previous) while (from < previous.length && from < h.length && previous[from] === h[from]) from++;
  return { h, from };
}

/** Request `k`'s context as the log has it (each request keeps the messages added since the previous one). */
function recordedContext(requests, k) {
  const full = [];
  for (let r = 0; r <= k; r++) {
    const q = requests[r];
    full.length = q.from;
    full.push(...q.added);
  }
  return full;
}

/** The first difference between request `k` (its model and context messages) and the log's, or undefined. */
export function contextDifference(requests, k, model, messages) {
  const rec = requests[k];
  if (!rec) return `the log has ${requests.length} request(s); got request ${k + 1}`;
  if (rec.model !== modelKey(model)) return `model: recorded ${rec.model}, got ${modelKey(model)}`;
  const n = Math.min(rec.h.length, messages.length);
  let full;
  for (let i = 0; i < n; i++) {
    if (rec.h[i] !== hashMessage(messages[i])) {
      full = recordedContext(requests, k);
      return `context.messages[${i}]: recorded ${preview(full[i])}, got ${preview(messages[i])}`;
    }
  }
  if (rec.h.length !== messages.length) {
    full = recordedContext(requests, k);
    const extra = rec.h.length > messages.length ? `recorded ${preview(full[n])}, got nothing` : `recorded nothing, got ${preview(messages[n])}`;
    return `context.messages has ${messages.length} message(s), recorded ${rec.h.length}: context.messages[${n}]: ${extra}`;
  }
  return undefined;
}
