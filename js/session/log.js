// The session log of pi-agent-wasm/session: its text format and the pure restore from it.
//
// A log is text: JSON records, each on one line ended by "\n", appended and never rewritten.
// The first record is the header `{"pi":"session","v":1}`. Each record after it carries its
// position `i` (1, 2, …), first in its line: a record missing in the middle (a deleted row of a
// store) or out of place is found where the numbers jump, and the reader keeps what precedes it.
// (Logs written before records were numbered have no `i`: they read as before, without that
// check. A reader that ignores `i` reads a numbered log, so the version is still 1.) A record cut
// short by a tab killed mid-write (or garbled) ends the readable part: the reader keeps every
// record before it, so a damaged log loses at most what follows the damage; the damage is in the
// middle when a numbered record follows it (`damage`), else it is the log's torn tail. (A cut
// JSON object is never a valid JSON text, and JSON.stringify never writes a raw newline.)
//
// Answer text is not JSON: a record with `n` (a `d` record, an `m` record with `s`) is followed
// by `n` characters (UTF-16 code units) of raw text and a "\n", and its raw-text entries give
// the length of their part of that text. Escaping a long answer into JSON costs the main thread
// more than the rest of writing it. A cut anywhere in the raw text or before its "\n" ends the
// log at that record, as a cut line does; a store must give back the text it was given (a
// store that encodes to UTF-8 keeps the framing, a lone surrogate becoming U+FFFD).
//
// Records, by `t`:
//   m   {m, s?, n?}  a message appended to the transcript; each `s` entry [index, prefix,
//                    length] gives that block's text (or thinking), left "" in `m`: the first
//                    `prefix` characters streamed into the block by earlier `d` records (the
//                    answer's text is not written twice), then `length` raw characters
//   r   {m}          the transcript replaced by the app (reset, `state.messages = …`)
//   c   {model, thinkingLevel}
//   q   {s, f}       the steering and follow-up queues
//   a   {m}          an assistant message started streaming (its first partial)
//   d   {e, n}       stream events of that message since the last write, coalesced:
//                    [kind, contentIndex, payload] with kinds text and thinking (payload: the
//                    length of its text in the raw text after the line), T/K/C (a text,
//                    thinking or tool-call block started; C's payload is {id, name}) and E (a
//                    tool call finished; payload the call). Tool-call argument deltas are not
//                    kept: a call cut mid-stream is dropped on restore, a finished one is in E.
//   ts  {id}         tool_execution_start
//   tw  {id}         the call entered beforeToolCall
//   tg  {id, ok}     beforeToolCall settled (ok: the call may run)
//   te  {id, r, e}   tool_execution_end: its result and isError
//   x   {}           the run ended (agent_end)
//   k   {at}         the transcript's messages from index `at` on are kept as a version (branches.js)
//                    when the next `r` record moves the transcript; a reader without branches skips it

import { createTree } from "./branches.js";

/** The version this reader writes and reads. */
export const SESSION_LOG_VERSION = 1;

/** A log this version cannot read (another version, or not a session log). */
export class SessionLogError extends Error {
  constructor(message) {
    super(message);
    this.name = "SessionLogError";
  }
}

/** The header line a new log starts with. */
export const logHeader = () => JSON.stringify({ pi: "session", v: SESSION_LOG_VERSION }) + "\n";

/** One record as log text, without its position: a JSON line, followed by its raw text if it has any. */
export function logLine(record) {
  const out = [];
  pushRecord(record, out);
  return out.join("");
}

/** A record's text made by `logLine`, given position `i` in the log. */
export const numberLine = (text, i) => `{"i":${i},${text.slice(1)}`;

const RAW_KINDS = new Set(["text", "thinking"]);

/**
 * The entries of `record` whose third element is raw text: a `d` record's text and thinking
 * entries, an `m` record's `s` entries.
 */
function rawEntries(record) {
  if (record.t === "d" && Array.isArray(record.e)) return record.e.filter((e) => Array.isArray(e) && RAW_KINDS.has(e[0]));
  if (record.t === "m" && Array.isArray(record.s)) return record.s.filter(Array.isArray);
  return undefined;
}

/**
 * Pushes the pieces of `record`'s log text onto `out`, for the caller to join once (so a long
 * text is copied once): its line, then the raw text of its entries (each a string, or an array
 * of strings: the deltas, in order) and a "\n". `i`: the record's position in the log.
 */
export function pushRecord(record, out, i) {
  const raw = rawEntries(record);
  if (raw === undefined) return void out.push(JSON.stringify(i === undefined ? record : { i, ...record }) + "\n");
  const at = out.push("") - 1;
  const lengths = new Map();
  let n = 0;
  for (const entry of raw) {
    const p = entry[2];
    let length = 0;
    if (Array.isArray(p)) {
      for (const part of p) {
        out.push(part);
        length += part.length;
      }
    } else if (typeof p === "string") {
      out.push(p);
      length = p.length;
    }
    lengths.set(entry, length);
    n += length;
  }
  const withLengths = (entries) => entries.map((e) => (lengths.has(e) ? [e[0], e[1], lengths.get(e)] : e));
  const line = record.t === "d" ? { i, ...record, e: withLengths(record.e), n } : { i, ...record, s: withLengths(record.s), n };
  out[at] = JSON.stringify(line) + "\n";
  out.push("\n");
}

/**
 * The records of a log, oldest first (a `d` record's text entries carry their text). `dropped`
 * counts the characters after the last good record. `damage` says what is wrong when the reading
 * stopped in the middle of the log (records missing, or a damaged record followed by later ones);
 * it is undefined for a whole log or a torn tail. Throws `SessionLogError` only for a log of
 * another version; any other damage, even of the header, ends the readable part instead. With
 * `continued`, `text` is what was appended to a log after the part already read (it has no
 * header), and `before` the number of records in that part (their positions are checked from it).
 */
export function readLog(text, continued = false, before) {
  const records = [];
  let at = 0;
  let header = continued;
  let position = before ?? 0;
  const checked = !continued || before !== undefined;
  let damage;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) break;
    let record;
    try {
      record = JSON.parse(text.slice(at, end));
    } catch {
      record = undefined;
    }
    const isObject = record !== null && typeof record === "object" && !Array.isArray(record);
    let next = end + 1;
    if (!header) {
      if (!isObject || record.pi !== "session") break;
      if (record.v !== SESSION_LOG_VERSION) {
        throw new SessionLogError(
          `unsupported session log version ${JSON.stringify(record.v)}: this pi-agent-wasm reads version ${SESSION_LOG_VERSION}`,
        );
      }
      header = true;
    } else {
      const i = isObject ? record.i : undefined;
      if (checked && i !== undefined && i !== position + 1) {
        damage = Number.isInteger(i) && i > position + 1 ? missing(position + 1, i - 1) : `record ${position + 1} is out of place`;
        break;
      }
      if (isObject && typeof record.t === "string" && record.n !== undefined) next = rawText(text, record, next);
      if (!isObject || typeof record.t !== "string" || next < 0) {
        if (checked && laterRecord(text, end + 1, position)) damage = `record ${position + 1} is damaged`;
        break;
      }
      if (i !== undefined) delete record.i;
      records.push(record);
      position++;
    }
    at = next;
  }
  return { records, header, dropped: text.length - at, damage };
}

const missing = (from, to) => (from === to ? `record ${from} is missing` : `records ${from} to ${to} are missing`);

/** Whether a numbered record after `position` starts a line of `text` at or after `from`. */
function laterRecord(text, from, position) {
  for (let at = text.indexOf('{"i":', from); at >= 0; at = text.indexOf('{"i":', at + 1)) {
    if (at > 0 && text.charCodeAt(at - 1) !== 10) continue;
    const end = text.indexOf("\n", at);
    try {
      const r = JSON.parse(text.slice(at, end < 0 ? text.length : end));
      if (Number.isInteger(r?.i) && r.i > position && typeof r.t === "string") return true;
    } catch {}
  }
  return false;
}

/**
 * Gives the raw-text entries of `record` their part of the raw text starting at `from`;
 * returns where the next record starts, or -1 when the raw text is cut or does not add up.
 */
function rawText(text, record, from) {
  const n = record.n;
  const to = from + n;
  const raw = rawEntries(record);
  if (raw === undefined || !Number.isInteger(n) || n < 0) return -1;
  if (to >= text.length || text.charCodeAt(to) !== 10) return -1;
  let at = from;
  for (const entry of raw) {
    const length = entry[2];
    if (!Number.isInteger(length) || length < 0 || at + length > to) return -1;
    entry[2] = text.slice(at, at + length);
    at += length;
  }
  if (at !== to) return -1;
  delete record.n;
  return to + 1;
}

/** The text an interrupted streaming answer is marked with. */
export const INTERRUPTED_STREAM = "Interrupted: the page was closed or reloaded while this answer was streaming";
/** The text of the result given to a tool call that was running when the page went away. */
export const INTERRUPTED_TOOL = "Tool call interrupted before it finished (the page was closed or reloaded)";

const copyBlock = (b) => (b && typeof b === "object" ? { ...b } : b);
/** A partial assistant message with its own content blocks (a fold extends a block's text in place). */
export const copyPartial = (m) => ({ ...m, content: Array.isArray(m.content) ? m.content.map(copyBlock) : [] });

/** Applies a `d` record's entries to a partial assistant message (blocks copied on first write). */
function applyDeltas(partial, entries) {
  const content = partial.content;
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (!Array.isArray(entry)) continue;
    const [kind, i, payload] = entry;
    if (!Number.isInteger(i) || i < 0 || i > content.length) continue;
    const block = content[i];
    switch (kind) {
      case "T":
        content[i] = { type: "text", text: "" };
        break;
      case "K":
        content[i] = { type: "thinking", thinking: "" };
        break;
      case "C":
        content[i] = { type: "toolCall", id: String(payload?.id ?? ""), name: String(payload?.name ?? ""), arguments: {}, partial: true };
        break;
      case "E":
        if (payload && typeof payload === "object") content[i] = payload;
        break;
      case "text":
        if (block?.type === "text" && typeof payload === "string") block.text += payload;
        break;
      case "thinking":
        if (block?.type === "thinking" && typeof payload === "string") block.thinking += payload;
        break;
      default:
        break;
    }
  }
}

/**
 * A finished message whose `s` entries [index, prefix, text] give a block's text (or thinking):
 * the first `prefix` characters streamed into that block of `partial`, then `text`.
 */
function withText(message, s, partial) {
  if (!Array.isArray(message.content)) return message;
  const content = message.content.slice();
  for (const [i, prefix, text] of s) {
    const block = content[i];
    const key = block?.type === "text" ? "text" : block?.type === "thinking" ? "thinking" : undefined;
    if (key === undefined) continue;
    const from = partial?.content[i];
    const head = Number.isInteger(prefix) && prefix > 0 && from?.type === block.type ? String(from[key]).slice(0, prefix) : "";
    content[i] = { ...block, [key]: head + (typeof text === "string" ? text : "") };
  }
  return { ...message, content };
}

/**
 * Folds records into what a session holds: the transcript (and `transcript`: whether any record
 * set it), the model settings, the queues, the assistant message streaming when the log ends (or
 * undefined) and, per tool call id of the current run, what is known of it.
 */
export function foldLog(records) {
  const fold = createFold();
  for (const r of records) fold.apply(r);
  return fold.state;
}

/** `foldLog` one record at a time: `apply(record)` updates `state` (for a tab that follows another). */
export function createFold() {
  const state = {
    messages: [],
    transcript: false,
    model: undefined,
    thinkingLevel: undefined,
    steering: [],
    followUp: [],
    streaming: undefined,
    calls: new Map(),
  };
  // The versions of the conversation (its path is `messages`); not enumerable: a fold's state compares by its records' data.
  Object.defineProperty(state, "tree", { value: createTree() });
  const call = (id) => {
    let c = state.calls.get(id);
    if (!c) state.calls.set(id, (c = {}));
    return c;
  };
  const apply = (r) => {
    switch (r.t) {
      case "m":
        if (r.m && typeof r.m === "object") {
          state.transcript = true;
          const message = Array.isArray(r.s) ? withText(r.m, r.s.filter(Array.isArray), state.streaming) : r.m;
          state.messages.push(message);
          state.tree.append(message);
          if (r.m.role === "assistant") state.streaming = undefined;
        }
        break;
      case "r":
        if (Array.isArray(r.m)) {
          state.messages = r.m.slice();
          state.transcript = true;
          state.tree.sync(state.messages);
        }
        state.streaming = undefined;
        state.calls = new Map();
        break;
      case "c":
        if (r.model !== undefined) state.model = r.model;
        if (r.thinkingLevel !== undefined) state.thinkingLevel = r.thinkingLevel;
        break;
      case "q":
        state.steering = Array.isArray(r.s) ? r.s : [];
        state.followUp = Array.isArray(r.f) ? r.f : [];
        break;
      case "a":
        if (r.m && typeof r.m === "object") {
          state.streaming = copyPartial(r.m);
        }
        break;
      case "d":
        if (state.streaming) applyDeltas(state.streaming, r.e);
        break;
      case "ts":
        call(r.id).started = true;
        break;
      case "tw":
        call(r.id).waiting = true;
        break;
      case "tg":
        Object.assign(call(r.id), { waiting: false, allowed: r.ok === true });
        break;
      case "te":
        Object.assign(call(r.id), { ended: true, result: r.r, isError: r.e === true });
        break;
      case "x":
        state.streaming = undefined;
        state.calls = new Map();
        break;
      case "k":
        state.tree.keep(r.at);
        break;
      default:
        break;
    }
  };
  return { state, apply };
}

/** A tool result message, as the loop makes it from a tool call and its result. */
export function toolResultMessage(toolCall, result, isError, timestamp = Date.now()) {
  const message = {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    content: Array.isArray(result?.content) ? result.content : [],
    details: result?.details,
    isError,
    timestamp,
  };
  if (result?.structuredContent !== undefined) message.structuredContent = result.structuredContent;
  return message;
}

const errorResult = (text) => ({ content: [{ type: "text", text }], details: {} });

/**
 * What a restored agent starts from (pure): the transcript made valid for the next request,
 * and the tool calls of the last assistant message that still need to run (`pending`, in
 * source order, each `{ toolCall, assistantMessage, approval }`: `approval` when it was
 * waiting in `beforeToolCall`). `replaySafe(name)` tells whether a tool declared
 * `replay: "safe"`.
 *
 * - An answer cut off mid-stream is kept with its text and thinking, `stopReason: "aborted"`
 *   and an `errorMessage` saying it was interrupted; its unfinished tool calls are dropped
 *   (none of them ran).
 * - A call of the last assistant message without a result message gets its recorded result
 *   if it ended; if it was running, an `isError` "interrupted" result, unless its tool is
 *   replay-safe; a call that never ran, or was waiting for approval, is pending.
 */
export function restoreFrom(folded, replaySafe = () => false) {
  const messages = folded.messages.slice();
  let interrupted = false;
  if (folded.streaming) {
    const partial = folded.streaming;
    const content = partial.content.filter((b) => b && b.type !== "toolCall");
    messages.push({ ...partial, content, stopReason: "aborted", errorMessage: INTERRUPTED_STREAM });
    interrupted = true;
  }
  const pending = [];
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = messages[i]?.role;
    if (role === "assistant") {
      last = i;
      break;
    }
    if (role !== "toolResult") break;
  }
  const assistant = messages[last];
  if (assistant && !interrupted && assistant.stopReason === "toolUse" && Array.isArray(assistant.content)) {
    const answered = new Set();
    for (let i = last + 1; i < messages.length; i++) answered.add(messages[i].toolCallId);
    for (const block of assistant.content) {
      if (block?.type !== "toolCall" || answered.has(block.id)) continue;
      const known = folded.calls.get(block.id) ?? {};
      if (known.ended) {
        messages.push(toolResultMessage(block, known.result, known.isError));
      } else if (known.waiting) {
        pending.push({ toolCall: block, assistantMessage: assistant, approval: true });
      } else if (!known.started || replaySafe(block.name)) {
        pending.push({ toolCall: block, assistantMessage: assistant, approval: false });
      } else {
        messages.push(toolResultMessage(block, errorResult(INTERRUPTED_TOOL), true));
        interrupted = true;
      }
    }
  }
  return { messages, pending, interrupted };
}
