// The session log of pi-agent-wasm/session: its text format and the pure restore from it.
//
// A log is text: one JSON record per line, each line ended by "\n", appended and never
// rewritten. The first record is the header `{"pi":"session","v":1}`. A line cut short by a
// tab killed mid-write (or garbled) is the log's end: the reader keeps every record before
// it, so a damaged log loses at most its unfinished tail. (A cut JSON object is never a
// valid JSON text, and JSON.stringify never writes a raw newline.)
//
// Records, by `t`:
//   m   {m}          a message appended to the transcript
//   r   {m}          the transcript replaced by the app (reset, `state.messages = …`)
//   c   {model, thinkingLevel}
//   q   {s, f}       the steering and follow-up queues
//   a   {m}          an assistant message started streaming (its first partial)
//   d   {e}          stream events of that message since the last write, coalesced:
//                    [kind, contentIndex, payload] with kinds text, thinking, call (argument
//                    text), T/K/C (a text, thinking or tool-call block started; C's payload
//                    is {id, name}) and E (a tool call finished; payload the call)
//   ts  {id}         tool_execution_start
//   tw  {id}         the call entered beforeToolCall
//   tg  {id, ok}     beforeToolCall settled (ok: the call may run)
//   te  {id, r, e}   tool_execution_end: its result and isError
//   x   {}           the run ended (agent_end)

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

/** One record as a log line. */
export const logLine = (record) => JSON.stringify(record) + "\n";

/**
 * The records of a log, oldest first. `dropped` counts the characters after the last good
 * record (a torn or corrupted tail). Throws `SessionLogError` only for a log of another
 * version; any other damage, even of the header, ends the readable part instead.
 */
export function readLog(text) {
  const records = [];
  let at = 0;
  let header = false;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) break;
    let record;
    try {
      record = JSON.parse(text.slice(at, end));
    } catch {
      break;
    }
    if (record === null || typeof record !== "object" || Array.isArray(record)) break;
    if (!header) {
      if (record.pi !== "session") break;
      if (record.v !== SESSION_LOG_VERSION) {
        throw new SessionLogError(
          `unsupported session log version ${JSON.stringify(record.v)}: this pi-agent-wasm reads version ${SESSION_LOG_VERSION}`,
        );
      }
      header = true;
    } else {
      if (typeof record.t !== "string") break;
      records.push(record);
    }
    at = end + 1;
  }
  return { records, header, dropped: text.length - at };
}

/** The text an interrupted streaming answer is marked with. */
export const INTERRUPTED_STREAM = "Interrupted: the page was closed or reloaded while this answer was streaming";
/** The text of the result given to a tool call that was running when the page went away. */
export const INTERRUPTED_TOOL = "Tool call interrupted before it finished (the page was closed or reloaded)";

const copyBlock = (b) => (b && typeof b === "object" ? { ...b } : b);

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
        if (block?.type === "text") block.text += String(payload);
        break;
      case "thinking":
        if (block?.type === "thinking") block.thinking += String(payload);
        break;
      default:
        // Argument text of a partial tool call: not needed, the call is dropped on restore.
        break;
    }
  }
}

/**
 * Folds records into what a session holds: the transcript, the model settings, the queues,
 * the assistant message streaming when the log ends (or undefined) and, per tool call id
 * of the current run, what is known of it.
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
    model: undefined,
    thinkingLevel: undefined,
    steering: [],
    followUp: [],
    streaming: undefined,
    calls: new Map(),
  };
  const call = (id) => {
    let c = state.calls.get(id);
    if (!c) state.calls.set(id, (c = {}));
    return c;
  };
  const apply = (r) => {
    switch (r.t) {
      case "m":
        if (r.m && typeof r.m === "object") {
          state.messages.push(r.m);
          if (r.m.role === "assistant") state.streaming = undefined;
        }
        break;
      case "r":
        if (Array.isArray(r.m)) state.messages = r.m.slice();
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
          state.streaming = { ...r.m, content: Array.isArray(r.m.content) ? r.m.content.map(copyBlock) : [] };
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
