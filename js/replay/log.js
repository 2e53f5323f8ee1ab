// The replay log: its format, and the reader that checks a log's whole shape before anything plays.
//
// A log is JSON: { pi: "replay", v, agent?, running?, tools, initial?, requests, calls, decisions,
// inputs, steps }. `requests`, `calls`, `decisions` and `inputs` hold what each part did (a
// request's context and the events the loop read, a tool call's updates and outcome, a
// `beforeToolCall` decision, a user's input). `steps` is the order in which it all happened, as
// the agent saw it; playback repeats that order exactly. Each step is an array whose first item
// says what happened:
//   ["s", r]         the loop called the stream function for request r (requests start in order)
//   ["o", r]         request r's stream function, which returned a promise, resolved it
//   ["e", r, n]      the loop read the next n items of request r's stream (its events, then the
//                    end of the stream or the error the stream threw, if the loop read that far)
//   ["x", r]         the loop stopped reading request r before its end (an abort the stream ignored)
//   ["c", k]         the loop called tool call k's `execute` (calls start in order)
//   ["u", k]         tool call k sent its next update
//   ["r", k]         tool call k settled
//   ["b", k]         the loop asked `beforeToolCall` for decision k (decisions start in order)
//   ["d", k]         decision k settled
//   ["i", n]         input n (prompt, steer, abort …) was made
//   ["a", type, id]  the agent emitted an event: its type, and the message's role or the tool call's id
// Steps the agent takes by itself ("s", "e", "x", "c", "b", "a") are checked on playback; the
// others are made by playback when their turn comes.

/** The version this module writes and reads. */
export const REPLAY_LOG_VERSION = 2;

/** A log this version cannot read: another version, or a field that is missing or malformed. `path` names the field. */
export class ReplayLogError extends Error {
  constructor(message, path) {
    super(message);
    this.name = "ReplayLogError";
    this.path = path;
  }
}

export const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
export const errorText = (err) => {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    return "a thrown value that cannot be converted to a string";
  }
};

/** The inputs a recorder records, and what each one carries. */
export const INPUT_OPS = ["prompt", "continue", "steer", "followUp", "abort", "clearSteeringQueue", "clearFollowUpQueue",
  "clearAllQueues", "reset", "messages", "model", "tools", "runToolCall", "lost"];
/**
 * Inputs made only while the agent is idle (a recorder writes the app's edits of the transcript and
 * model as it finds them before an input made while idle): playback waits for the agent to be idle
 * first. The tools may be set at any time.
 */
export const IDLE_OPS = new Set(["prompt", "continue", "reset", "messages", "model", "runToolCall"]);

/** What a step is, in words (for divergence reports). */
export function describeStep(step, log) {
  const [code, a, b] = step;
  switch (code) {
    case "s":
      return `request ${a + 1}`;
    case "o":
      return `request ${a + 1}'s stream`;
    case "e":
      return `${b} item(s) of request ${a + 1}'s stream`;
    case "x":
      return `the end of reading request ${a + 1}`;
    case "c":
      return `tool call ${log?.calls[a]?.id} (${log?.calls[a]?.name})`;
    case "u":
      return `an update of tool call ${log?.calls[a]?.id}`;
    case "r":
      return `the result of tool call ${log?.calls[a]?.id}`;
    case "b":
      return `beforeToolCall for ${log?.decisions[a]?.id}`;
    case "d":
      return `the decision for ${log?.decisions[a]?.id}`;
    case "i":
      return `input ${log?.inputs[a]?.op}`;
    case "a":
      return b === undefined ? `event ${a}` : `event ${a} (${b})`;
    default:
      return JSON.stringify(step);
  }
}

// ---- the reader --------------------------------------------------------------------------------

const bad = (path, what) => {
  throw new ReplayLogError(`${path}: expected ${what}`, path);
};
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
const join = (path, key) => (typeof key === "number" ? `${path}[${key}]` : path ? `${path}.${key}` : key);

function object(v, path, what = "an object") {
  if (!isObject(v)) bad(path, what);
  return v;
}
function array(v, path) {
  if (!Array.isArray(v)) bad(path, "an array");
  return v;
}
function field(o, key, path, check, optional = false) {
  const p = join(path, key);
  if (o[key] === undefined) {
    if (!optional) bad(p, check.what);
    return;
  }
  if (!check(o[key], p)) bad(p, check.what);
}
const described = (what, test) => Object.assign(test, { what });
const string = described("a string", (v) => typeof v === "string");
const number = described("a finite number", isNumber);
const count = described("a non-negative integer", isCount);
const boolean = described("a boolean", (v) => typeof v === "boolean");
const one = (...values) => described(`one of ${values.map((v) => JSON.stringify(v)).join(", ")}`, (v) => values.includes(v));
/** Anything JSON holds (what a clone of a result, an argument or an update is). */
const json = described("a JSON value", (v) => v !== undefined && typeof v !== "function" && typeof v !== "symbol" && typeof v !== "bigint");

const CONTENT_ROLES = new Set(["user", "assistant", "toolResult", "system"]);
function message(v, path) {
  object(v, path, 'an object with a string "role"');
  if (typeof v.role !== "string") bad(join(path, "role"), "a string");
  const content = v.content;
  if (CONTENT_ROLES.has(v.role) && !(typeof content === "string" && v.role !== "assistant")) {
    array(content, join(path, "content"));
    content.forEach((block, i) => {
      if (!isObject(block) || typeof block.type !== "string") bad(join(join(path, "content"), i), 'an object with a string "type"');
    });
  }
  if (v.role === "toolResult" && typeof v.toolCallId !== "string") bad(join(path, "toolCallId"), "a string");
  return v;
}
function messages(v, path) {
  array(v, path).forEach((m, i) => message(m, join(path, i)));
  return v;
}
function model(v, path) {
  object(v, path, 'a model object with a string "provider" and "id"');
  field(v, "provider", path, string);
  field(v, "id", path, string);
}
function declarations(v, path) {
  array(v, path).forEach((d, i) => {
    const p = join(path, i);
    object(d, p, 'a tool declaration with a string "name"');
    field(d, "name", p, string);
    for (const key of ["label", "description", "executionMode", "replay"]) field(d, key, p, string, true);
    if (d.parameters !== undefined) object(d.parameters, join(p, "parameters"));
    field(d, "constrainedSampling", p, json, true);
  });
}

const BLOCK_EVENTS = new Set(["text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end",
  "toolcall_start", "toolcall_delta", "toolcall_end"]);
const BLOCK_STARTS = new Set(["text_start", "thinking_start", "toolcall_start"]);
function streamEvent(e, path) {
  object(e, path, 'an object with a string "type"');
  if (typeof e.type !== "string") bad(path, 'an object with a string "type"');
  if (BLOCK_EVENTS.has(e.type)) {
    field(e, "contentIndex", path, count);
    if (e.type.endsWith("_delta")) field(e, "delta", path, string);
  }
  if (e.type === "toolcall_start") {
    field(e, "id", path, string, true);
    field(e, "toolName", path, string, true);
  }
  if (e.type === "toolcall_end" && e.toolCall !== undefined) object(e.toolCall, join(path, "toolCall"));
  if (e.type === "start" && e.partial !== undefined) object(e.partial, join(path, "partial"));
  if (e.type === "done" || e.type === "error") {
    field(e, "reason", path, string);
    message(e.type === "done" ? e.message : e.error, join(path, e.type === "done" ? "message" : "error"));
  }
}

function request(q, path, previous) {
  object(q, path);
  field(q, "t", path, number);
  field(q, "model", path, string);
  const h = array(q.h, join(path, "h"));
  h.forEach((x, i) => typeof x !== "string" && bad(join(join(path, "h"), i), "a string"));
  const most = previous ? previous.h.length : 0;
  if (!isCount(q.from) || q.from > most) bad(join(path, "from"), `an integer from 0 to ${most}`);
  messages(q.added, join(path, "added"));
  if (q.from + q.added.length !== h.length) bad(join(path, "added"), `${h.length - q.from} message(s) (h has ${h.length}, from is ${q.from})`);
  array(q.events, join(path, "events")).forEach((entry, i) => {
    const p = join(join(path, "events"), i);
    if (!Array.isArray(entry) || entry.length < 2 || entry.length > 3) bad(p, "a [time, event] or [time, event, block] array");
    if (!isNumber(entry[0])) bad(join(p, 0), "a finite number");
    streamEvent(entry[1], join(p, 1));
    if (entry.length === 3) {
      if (!BLOCK_STARTS.has(entry[1].type)) bad(join(p, 2), "nothing: only a block's start event keeps the block");
      object(entry[2], join(p, 2), 'a content block with a string "type"');
      if (typeof entry[2].type !== "string") bad(join(p, 2), 'a content block with a string "type"');
    }
  });
  for (const key of ["async", "ended", "notStream"]) field(q, key, path, boolean, true);
  for (const key of ["thrown", "rejected", "finalError"]) field(q, key, path, string, true);
  field(q, "o", path, number, true);
  if (q.ended && q.thrown !== undefined) bad(join(path, "thrown"), 'nothing when "ended" is set');
  if (q.rejected !== undefined && (q.events.length > 0 || q.ended || q.thrown !== undefined)) {
    bad(join(path, "rejected"), "nothing when the stream has events");
  }
  if (q.final !== undefined) message(q.final, join(path, "final"));
  if (q.start !== undefined) message(q.start, join(path, "start"));
  if (q.cut !== undefined) {
    object(q.cut, join(path, "cut"));
    if (q.cut.partial !== undefined) object(q.cut.partial, join(join(path, "cut"), "partial"));
  }
}

/** A tool call's or a decision's outcome: `ok` once it settled, then its value (`keep`) or its `error`. */
function outcome(x, path, value) {
  field(x, "ok", path, boolean, true);
  field(x, "error", path, string, true);
  if (x.ok === false && x.error === undefined) bad(join(path, "error"), 'a string when "ok" is false');
  if (x.ok !== false && x.error !== undefined) bad(join(path, "error"), 'nothing unless "ok" is false');
  if (x.ok !== true && x[value] !== undefined) bad(join(path, value), 'nothing unless "ok" is true');
}

function call(c, path) {
  object(c, path);
  field(c, "id", path, string);
  field(c, "name", path, string);
  field(c, "args", path, json, true);
  field(c, "t", path, number);
  field(c, "ms", path, number, true);
  field(c, "async", path, boolean, true);
  field(c, "result", path, json, true);
  outcome(c, path, "result");
  array(c.updates, join(path, "updates")).forEach((u, i) => {
    const p = join(join(path, "updates"), i);
    if (!Array.isArray(u) || u.length !== 2 || !isNumber(u[0])) bad(p, "a [time, update] pair");
  });
}

function decision(d, path) {
  object(d, path);
  field(d, "id", path, string);
  field(d, "t", path, number);
  field(d, "ms", path, number, true);
  field(d, "async", path, boolean, true);
  if (d.r !== undefined && d.r !== null) object(d.r, join(path, "r"), "an object or null");
  outcome(d, path, "r");
}

function input(x, path) {
  object(x, path);
  field(x, "t", path, number);
  field(x, "op", path, one(...INPUT_OPS));
  field(x, "busy", path, boolean, true);
  field(x, "inCall", path, boolean, true);
  switch (x.op) {
    case "prompt":
      if (x.text !== undefined) {
        field(x, "text", path, string);
        if (x.images !== undefined) array(x.images, join(path, "images"));
      } else if (Array.isArray(x.m)) messages(x.m, join(path, "m"));
      else message(x.m, join(path, "m"));
      break;
    case "steer":
    case "followUp":
      message(x.m, join(path, "m"));
      break;
    case "messages":
      field(x, "keep", path, count);
      messages(x.add, join(path, "add"));
      break;
    case "model":
      if (x.model !== undefined) model(x.model, join(path, "model"));
      field(x, "thinkingLevel", path, string, true);
      break;
    case "tools":
      declarations(x.tools, join(path, "tools"));
      break;
    case "runToolCall": {
      const p = join(path, "toolCall");
      object(x.toolCall, p, 'a tool call with a string "id" and "name"');
      field(x.toolCall, "id", p, string);
      field(x.toolCall, "name", p, string);
      if (x.m !== undefined) message(x.m, join(path, "m"));
      else field(x, "a", path, count);
      break;
    }
    default:
      break;
  }
}

/** Checks `steps` against the parts they refer to, as playback will walk them. */
function steps(list, log) {
  array(list, "steps");
  const units = log.requests.map((q) => q.events.length + (q.ended || q.thrown !== undefined ? 1 : 0));
  const read = log.requests.map(() => 0);
  const opened = new Set();
  const cut = new Set();
  const updates = log.calls.map(() => 0);
  const settled = new Set();
  const decided = new Set();
  const made = new Set();
  let started = 0;
  let called = 0;
  let asked = 0;
  list.forEach((step, i) => {
    const path = `steps[${i}]`;
    if (!Array.isArray(step) || typeof step[0] !== "string") bad(path, "an array starting with a step code");
    const [code, a, b] = step;
    const index = (n, what) => {
      if (!isCount(a) || a >= n) bad(`${path}[1]`, `the index of one of the ${n} ${what}`);
      return a;
    };
    switch (code) {
      case "s":
        if (a !== started || started >= log.requests.length) bad(`${path}[1]`, `${started} (requests start in order, ${log.requests.length} in the log)`);
        started++;
        break;
      case "o":
        index(started, "requests started so far");
        if (!log.requests[a].async || opened.has(a)) bad(path, `no "o" step: request ${a} is not an asynchronous stream function, or it resolved already`);
        opened.add(a);
        break;
      case "e": {
        index(started, "requests started so far");
        const q = log.requests[a];
        if (!isCount(b) || b === 0) bad(`${path}[2]`, "a positive integer");
        if (q.async && !opened.has(a)) bad(path, `no stream items of request ${a} before its "o" step`);
        if (cut.has(a)) bad(path, `no stream items of request ${a} after its "x" step`);
        if (read[a] + b > units[a]) bad(`${path}[2]`, `at most ${units[a] - read[a]} (request ${a} has ${units[a]} stream item(s))`);
        read[a] += b;
        break;
      }
      case "x":
        index(started, "requests started so far");
        if (log.requests[a].cut === undefined || cut.has(a)) bad(path, `no "x" step: request ${a} has no "cut", or it was cut already`);
        cut.add(a);
        break;
      case "c":
        if (a !== called || called >= log.calls.length) bad(`${path}[1]`, `${called} (calls start in order, ${log.calls.length} in the log)`);
        called++;
        break;
      case "u":
        index(called, "calls started so far");
        if (updates[a] >= log.calls[a].updates.length) bad(path, `no more than ${log.calls[a].updates.length} update step(s) for call ${a}`);
        updates[a]++;
        break;
      case "r": {
        index(called, "calls started so far");
        const c = log.calls[a];
        if (settled.has(a) || c.ok === undefined) bad(path, `no "r" step: call ${a} has no outcome, or it settled already`);
        settled.add(a);
        break;
      }
      case "b":
        if (a !== asked || asked >= log.decisions.length) bad(`${path}[1]`, `${asked} (decisions start in order, ${log.decisions.length} in the log)`);
        asked++;
        break;
      case "d": {
        index(asked, "decisions asked so far");
        const d = log.decisions[a];
        if (decided.has(a) || d.ok === undefined) bad(path, `no "d" step: decision ${a} has no outcome, or it settled already`);
        decided.add(a);
        break;
      }
      case "i":
        index(log.inputs.length, "inputs");
        if (made.has(a)) bad(`${path}[1]`, `an input not made before (input ${a} is at an earlier step)`);
        made.add(a);
        break;
      case "a":
        if (typeof a !== "string") bad(`${path}[1]`, "an event type");
        if (b !== undefined && typeof b !== "string") bad(`${path}[2]`, "a string");
        break;
      default:
        bad(`${path}[0]`, 'one of "s", "o", "e", "x", "c", "u", "r", "b", "d", "i", "a"');
    }
  });
  // Everything the parts recorded has its step: nothing in the log is left out of playback.
  const missing = (path, what) => bad(path, `a step for ${what}`);
  if (started < log.requests.length) missing(`requests[${started}]`, "it");
  log.requests.forEach((q, r) => {
    if (q.async && q.rejected === undefined && units[r] > 0 && !opened.has(r)) missing(`requests[${r}]`, "its resolution");
    if (read[r] < units[r]) missing(`requests[${r}].events`, `each of its ${units[r]} stream item(s) (${read[r]} read)`);
    if (q.cut !== undefined && !cut.has(r)) missing(`requests[${r}].cut`, "it");
  });
  if (called < log.calls.length) missing(`calls[${called}]`, "it");
  log.calls.forEach((c, k) => {
    if (updates[k] < c.updates.length) missing(`calls[${k}].updates[${updates[k]}]`, "it");
    if (c.ok !== undefined && !settled.has(k)) missing(`calls[${k}]`, "its outcome");
  });
  if (asked < log.decisions.length) missing(`decisions[${asked}]`, "it");
  log.decisions.forEach((d, k) => d.ok !== undefined && !decided.has(k) && missing(`decisions[${k}]`, "its outcome"));
  log.inputs.forEach((_, n) => !made.has(n) && missing(`inputs[${n}]`, "it"));
}

/** Reads a log (its JSON text or the parsed object), checking all of it; throws a `ReplayLogError` naming the first bad field. */
export function readReplayLog(log) {
  let value = log;
  if (typeof log === "string") {
    try {
      value = JSON.parse(log);
    } catch (err) {
      throw new ReplayLogError(`not a replay log: ${errorText(err)}`, "");
    }
  }
  if (!isObject(value) || value.pi !== "replay") throw new ReplayLogError('not a replay log (no "pi": "replay")', "pi");
  if (value.v !== REPLAY_LOG_VERSION) {
    throw new ReplayLogError(`unsupported replay log version ${JSON.stringify(value.v) ?? "undefined"}: this pi-agent-wasm reads version ${REPLAY_LOG_VERSION}`, "v");
  }
  if (value.agent !== undefined) {
    const a = object(value.agent, "agent");
    if (a.model !== undefined) model(a.model, "agent.model");
    field(a, "thinkingLevel", "agent", string, true);
    field(a, "steeringMode", "agent", one("all", "one-at-a-time"), true);
    field(a, "followUpMode", "agent", one("all", "one-at-a-time"), true);
    field(a, "toolExecution", "agent", one("parallel", "sequential"), true);
  }
  field(value, "running", "", boolean, true);
  declarations(value.tools, "tools");
  if (value.initial !== undefined) messages(value.initial, "initial");
  array(value.requests, "requests").forEach((q, r) => request(q, `requests[${r}]`, value.requests[r - 1]));
  array(value.calls, "calls").forEach((c, k) => call(c, `calls[${k}]`));
  array(value.decisions, "decisions").forEach((d, k) => decision(d, `decisions[${k}]`));
  array(value.inputs, "inputs").forEach((x, n) => input(x, `inputs[${n}]`));
  steps(value.steps, value);
  return value;
}

// ---- writing a log -------------------------------------------------------------------------------

/**
 * A log being written, changed only by `apply(op)`: a recorder next to the agent's loop writes it
 * through operations, and a recorder on the main thread holds a copy by applying the same
 * operations (a WorkerAgent's loop runs in its worker). Operations:
 *   ["agent", info, initial, tools]     the agent's settings, transcript and tools when attached
 *   ["running", bool]                   a run started or ended
 *   ["q", request]  ["qs", r, key, v]  ["ev", r, entry]               a request, a field of it, a stream item read
 *   ["c", call]     ["cs", k, key, v]  ["cu", k, update]              a tool call, a field, an update
 *   ["d", decision] ["ds", k, key, v]                                 a decision, a field
 *   ["i", input]    ["is", n, key, v]                                 an input, a field
 *   ["st", step]    ["rd", r]          ["mv", from, to]               a step, one more read of request r, a step moved
 */
export function createLogStore(from) {
  const log = { pi: "replay", v: REPLAY_LOG_VERSION, tools: [], requests: [], calls: [], decisions: [], inputs: [], steps: [] };
  let running = false;
  // A log written on from where another writer left it (a fresh worker goes on with the log).
  if (from !== undefined) {
    const copy = clone(from);
    for (const key of ["requests", "calls", "decisions", "inputs", "steps"]) log[key].push(...copy[key]);
    for (const key of ["agent", "initial", "tools"]) if (copy[key] !== undefined) log[key] = copy[key];
    running = copy.running === true;
  }
  const lists = { qs: log.requests, cs: log.calls, ds: log.decisions, is: log.inputs };
  function apply(op) {
    const [code, a, b, c] = op;
    switch (code) {
      case "agent":
        log.agent = a;
        log.initial = b;
        log.tools = c;
        break;
      case "running":
        running = a;
        break;
      case "q":
        log.requests.push(a);
        break;
      case "ev":
        log.requests[a].events.push(b);
        break;
      case "c":
        log.calls.push(a);
        break;
      case "cu":
        log.calls[a].updates.push(b);
        break;
      case "d":
        log.decisions.push(a);
        break;
      case "i":
        log.inputs.push(a);
        break;
      case "st":
        log.steps.push(a);
        break;
      case "rd": {
        const last = log.steps[log.steps.length - 1];
        if (last !== undefined && last[0] === "e" && last[1] === a) last[2]++;
        else log.steps.push(["e", a, 1]);
        break;
      }
      case "mv": {
        const [step] = log.steps.splice(a, 1);
        log.steps.splice(b, 0, step);
        break;
      }
      default:
        if (lists[code]) lists[code][a][b] = c;
    }
  }
  /** A copy of the log as it stands (JSON). */
  function snapshot() {
    const out = { pi: log.pi, v: log.v };
    if (log.agent !== undefined) out.agent = log.agent;
    if (running) out.running = true;
    out.tools = log.tools;
    if (log.initial !== undefined) out.initial = log.initial;
    for (const key of ["requests", "calls", "decisions", "inputs", "steps"]) out[key] = log[key];
    return clone(out);
  }
  return { log, apply, snapshot };
}
