// The session log format (js/session/log.js, pure): round trip, a torn tail at every byte,
// corruption, other versions, and the restore it leads to.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  INTERRUPTED_STREAM,
  INTERRUPTED_TOOL,
  SessionLogError,
  foldLog,
  logHeader,
  logLine,
  numberLine,
  readLog,
  restoreFrom,
} from "../../../js/session/log.js";

const user = (text, timestamp = 1) => ({ role: "user", content: [{ type: "text", text }], timestamp });
const call = (id, name, args = {}) => ({ type: "toolCall", id, name, arguments: args });
const assistant = (content, stopReason = "stop") => ({
  role: "assistant", content, api: "x", provider: "p", model: "m", usage: {}, stopReason, timestamp: 2,
});

const RECORDS = [
  { t: "m", m: { role: "system", content: "be brief", timestamp: 0 } },
  { t: "c", model: { provider: "p", id: "m" }, thinkingLevel: "low" },
  { t: "m", m: user("héllo ✓ \u2028 \n newline") },
  { t: "q", s: [user("steer me", 5)], f: [user("later", 6)] },
  { t: "a", m: assistant([], "stop") },
  { t: "d", e: [["T", 0], ["text", 0, "Once upon a time — 🦀"]] },
];
// A streamed answer: its first part written as deltas, then the finished answer's record, which
// starts from those 9 characters and carries the rest of the text (and its thinking) as raw text.
const STREAMED = [
  { t: "m", m: user("hi") },
  { t: "a", m: assistant([]) },
  { t: "d", e: [["T", 0], ["text", 0, "Once\nupon"], ["K", 1], ["thinking", 1, ""]] },
  { t: "m", m: assistant([{ type: "text", text: "" }, { type: "thinking", thinking: "" }]), s: [[0, 9, " a time — 🦀\n\u2028"], [1, 0, 'hm\n"m"\\']] },
];
const encode = (records) => logHeader() + records.map((r) => logLine(r)).join("");
// As the session writes a log: each record numbered with its position.
const numbered = (records, first = 1) => records.map((r, k) => numberLine(logLine(r), first + k));
const encodeNumbered = (records) => logHeader() + numbered(records).join("");

test("round trip: every record comes back, nothing dropped", () => {
  for (const records of [RECORDS, STREAMED]) {
    const log = readLog(encode(records));
    assert.equal(log.header, true);
    assert.equal(log.dropped, 0);
    assert.deepEqual(log.records, records);
  }
});

test("numbered records round trip; a record missing in the middle stops the reading there, and says which", () => {
  const all = [...RECORDS, ...STREAMED];
  const log = readLog(encodeNumbered(all));
  assert.deepEqual(log.records, all, "the numbers are not part of the records read");
  assert.equal(log.dropped, 0);
  assert.equal(log.damage, undefined);
  const lines = numbered(all);
  for (const [gone, damage] of [[[4], "record 5 is missing"], [[2, 3, 4], "records 3 to 5 are missing"], [[0], "record 1 is missing"]]) {
    const kept = lines.filter((_, k) => !gone.includes(k));
    const text = logHeader() + kept.join("");
    const read = readLog(text);
    assert.deepEqual(read.records, all.slice(0, gone[0]), damage);
    assert.equal(read.damage, damage);
    assert.equal(read.dropped, kept.slice(gone[0]).join("").length);
  }
  // A record twice (a write repeated) is out of place.
  const twice = readLog(logHeader() + lines.slice(0, 3).join("") + lines[2] + lines.slice(3).join(""));
  assert.deepEqual(twice.records, all.slice(0, 3));
  assert.equal(twice.damage, "record 4 is out of place");
});

test("a damaged record with numbered records after it is damage in the middle; a torn tail is not", () => {
  const all = [...RECORDS, ...STREAMED];
  const lines = numbered(all);
  const garbled = lines.slice();
  garbled[3] = garbled[3].slice(0, 9) + "\u0000#" + garbled[3].slice(9);
  const read = readLog(logHeader() + garbled.join(""));
  assert.deepEqual(read.records, all.slice(0, 3));
  assert.equal(read.damage, "record 4 is damaged");
  // Raw text that lost characters (a row of it deleted) damages its record.
  const cutRaw = lines.slice();
  const last = cutRaw.length - 1;
  cutRaw[last - 1] = cutRaw[last - 1].replace("Once\nupon", "Once");
  const raw = readLog(logHeader() + cutRaw.join(""));
  assert.equal(raw.records.length, last - 1);
  assert.equal(raw.damage, `record ${last} is damaged`);
  // Cut at the end (a torn last write), the same log has no damage: only its tail is dropped.
  const text = logHeader() + lines.join("");
  for (const cut of [3, 20, lines[last].length - 1]) {
    const torn = readLog(text.slice(0, text.length - cut));
    assert.deepEqual(torn.records, all.slice(0, last));
    assert.equal(torn.damage, undefined);
  }
});

test("a log written before records were numbered reads as before, and is checked from the first numbered record on", () => {
  const old = encode(RECORDS);
  const grown = old + numbered(STREAMED, RECORDS.length + 1).join("");
  assert.deepEqual(readLog(grown).records, [...RECORDS, ...STREAMED]);
  const lines = numbered(STREAMED, RECORDS.length + 1);
  const gap = readLog(old + lines[0] + lines.slice(2).join(""));
  assert.deepEqual(gap.records, [...RECORDS, STREAMED[0]]);
  assert.equal(gap.damage, `record ${RECORDS.length + 2} is missing`);
  // What a following tab reads after the records it has: numbered from there.
  const rest = readLog(lines.slice(1).join(""), true, RECORDS.length + 1);
  assert.deepEqual(rest.records, STREAMED.slice(1));
  assert.equal(readLog(lines.slice(2).join(""), true, RECORDS.length + 1).damage, `record ${RECORDS.length + 2} is missing`);
});

test("a log read in parts (what a following tab does): each appended part reads as the rest of the records, and folds to the same state", () => {
  const whole = encode(STREAMED);
  const cut = logHeader().length + logLine(STREAMED[0]).length + logLine(STREAMED[1]).length;
  const first = readLog(whole.slice(0, cut));
  const rest = readLog(whole.slice(cut), true);
  assert.equal(rest.header, true);
  assert.equal(rest.dropped, 0);
  assert.deepEqual([...first.records, ...rest.records], STREAMED);
  assert.deepEqual(foldLog([...first.records, ...rest.records]), foldLog(readLog(whole).records));
  // A part cut inside its last record keeps the records before it; the cut one is counted as dropped.
  const torn = readLog(whole.slice(cut, whole.length - 3), true);
  assert.deepEqual(torn.records, STREAMED.slice(2, 3));
  assert.equal(torn.dropped, whole.length - 3 - cut - logLine(STREAMED[2]).length);
});

test("answer text is raw after its record's line, not JSON, and the finished answer is whole again", () => {
  const text = encode(STREAMED);
  assert.ok(text.includes("Once\nupon"), "a streamed delta's text is in the log as it is");
  assert.ok(text.includes(' a time — 🦀\n\u2028'), "the rest of the finished answer too");
  assert.equal(text.split("Once").length, 2, "the streamed part is written once");
  const { messages } = foldLog(readLog(text).records);
  assert.deepEqual(messages[1].content, [{ type: "text", text: "Once\nupon a time — 🦀\n\u2028" }, { type: "thinking", thinking: 'hm\n"m"\\' }]);
  // Deltas given as arrays of parts (as a session batches them) are written as their join.
  assert.equal(logLine({ t: "d", e: [["text", 0, ["a", "b\n", "c"]]] }), logLine({ t: "d", e: [["text", 0, "ab\nc"]] }));
});

test("an empty log or a log of something else holds nothing", () => {
  assert.deepEqual(readLog(""), { records: [], header: false, dropped: 0, damage: undefined });
  const other = readLog('{"hello":1}\n{"t":"m"}\n');
  assert.equal(other.header, false);
  assert.deepEqual(other.records, []);
});

test("a last record torn at every byte loses only that record (UTF-8 bytes, as a file store would cut them)", () => {
  // The last records: a `d` record and a finished answer, both with raw text.
  for (const records of [RECORDS, STREAMED]) {
    const bytes = Buffer.from(encode(records));
    const before = Buffer.from(encode(records.slice(0, -1))).length;
    for (let cut = before; cut < bytes.length; cut++) {
      const text = new TextDecoder().decode(bytes.subarray(0, cut));
      const log = readLog(text);
      assert.deepEqual(log.records, records.slice(0, -1), `cut at byte ${cut}`);
      assert.equal(log.dropped, text.length - encode(records.slice(0, -1)).length, `cut at byte ${cut}`);
    }
  }
});

test("raw text whose framing does not add up ends the readable part", () => {
  const good = encode(STREAMED.slice(0, 2));
  const line = '{"t":"d","e":[["T",0],["text",0,3]],"n":3}\n';
  for (const bad of [
    '{"t":"d","e":[["text",0,3]],"n":4}\nabc\n', // n longer than the text before the "\n"
    '{"t":"d","e":[["text",0,3]],"n":2}\nabc\n', // n shorter: no "\n" where it ends
    '{"t":"d","e":[["text",0,2]],"n":3}\nabc\n', // entries do not add up to n
    '{"t":"d","e":[["text",0,"abc"]],"n":3}\nabc\n', // a length that is not a number
    '{"t":"d","e":[["text",0,3]],"n":-3}\nabc\n',
    '{"t":"x","n":3}\nabc\n', // raw text on a record that has none
  ]) {
    const log = readLog(good + line + "abc\n" + bad + logLine({ t: "x" }));
    assert.equal(log.records.length, 3, bad);
    assert.deepEqual(log.records[2], { t: "d", e: [["T", 0], ["text", 0, "abc"]] });
    assert.equal(log.dropped, bad.length + logLine({ t: "x" }).length, bad);
  }
});

test("a header torn at any byte is an empty log, never a throw", () => {
  const header = logHeader();
  for (let cut = 0; cut < header.length; cut++) {
    const log = readLog(header.slice(0, cut));
    assert.equal(log.header, false);
    assert.deepEqual(log.records, []);
  }
});

test("a corrupted record ends the readable part: the records before it are kept", () => {
  const lines = encode(RECORDS).split("\n");
  lines[3] = lines[3].slice(0, 5) + "\u0000garbage" + lines[3].slice(5);
  const log = readLog(lines.join("\n"));
  assert.deepEqual(log.records, RECORDS.slice(0, 2));
  assert.ok(log.dropped > 0);
  // Valid JSON that is not a record also ends it.
  assert.deepEqual(readLog(logHeader() + logLine(RECORDS[0]) + "[1,2]\n" + logLine(RECORDS[1])).records, RECORDS.slice(0, 1));
});

test("a log of another version is rejected with a clear SessionLogError", () => {
  const text = '{"pi":"session","v":2}\n' + logLine(RECORDS[0]);
  assert.throws(() => readLog(text), (err) => {
    assert.ok(err instanceof SessionLogError);
    assert.equal(err.name, "SessionLogError");
    assert.match(err.message, /unsupported session log version 2: this pi-agent-wasm reads version 1/);
    return true;
  });
  assert.throws(() => readLog('{"pi":"session","v":"1"}\n'), SessionLogError);
});

test("restore: an answer cut mid-stream is kept, aborted, marked interrupted; its unfinished tool call dropped", () => {
  const records = [
    { t: "m", m: user("hi") },
    { t: "a", m: assistant([]) },
    { t: "d", e: [["K", 0], ["thinking", 0, "hmm"], ["T", 1], ["text", 1, "Hel"], ["text", 1, "lo"], ["C", 2, { id: "c1", name: "calc" }], ["call", 2, '{"a":']] },
  ];
  const { messages, pending, interrupted } = restoreFrom(foldLog(records));
  assert.equal(interrupted, true);
  assert.deepEqual(pending, []);
  assert.equal(messages.length, 2);
  const last = messages[1];
  assert.equal(last.stopReason, "aborted");
  assert.equal(last.errorMessage, INTERRUPTED_STREAM);
  assert.deepEqual(last.content, [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Hello" }]);
});

test("restore: a finished answer closes the stream; queues, model and thinking level are kept", () => {
  const done = assistant([{ type: "text", text: "Hello" }]);
  const folded = foldLog([...RECORDS, { t: "m", m: done }]);
  const { messages, interrupted } = restoreFrom(folded);
  assert.equal(interrupted, false);
  assert.equal(messages[messages.length - 1], done);
  assert.deepEqual(folded.steering, [user("steer me", 5)]);
  assert.deepEqual(folded.followUp, [user("later", 6)]);
  assert.equal(folded.thinkingLevel, "low");
});

test("restore: each tool call without a result gets exactly one, or is pending", () => {
  const a = assistant([call("ran", "calc"), call("done", "calc"), call("answered", "calc"), call("asking", "fetch"), call("never", "calc"), call("safe", "time")], "toolUse");
  const answered = { role: "toolResult", toolCallId: "answered", toolName: "calc", content: [], isError: false, timestamp: 3 };
  const records = [
    { t: "m", m: user("go") },
    { t: "m", m: a },
    { t: "ts", id: "ran" }, { t: "ts", id: "done" }, { t: "ts", id: "answered" }, { t: "ts", id: "asking" }, { t: "ts", id: "safe" },
    { t: "tw", id: "asking" },
    { t: "te", id: "done", r: { content: [{ type: "text", text: "42" }], details: { n: 42 } }, e: false },
    { t: "te", id: "answered", r: { content: [], details: {} }, e: false },
    { t: "m", m: answered },
  ];
  const { messages, pending, interrupted } = restoreFrom(foldLog(records), (name) => name === "time");
  assert.equal(interrupted, true);
  const results = messages.filter((m) => m.role === "toolResult");
  const byId = Object.fromEntries(results.map((m) => [m.toolCallId, m]));
  assert.equal(results.length, 3, "answered, done, ran: one result each");
  assert.equal(byId.answered, answered);
  assert.deepEqual(byId.done.content, [{ type: "text", text: "42" }]);
  assert.equal(byId.done.isError, false);
  assert.equal(byId.ran.isError, true);
  assert.deepEqual(byId.ran.content, [{ type: "text", text: INTERRUPTED_TOOL }]);
  assert.deepEqual(pending.map((p) => [p.toolCall.id, p.approval]), [["asking", true], ["never", false], ["safe", false]]);
});

test("restore never throws on a damaged log (random cuts and byte flips of a real log)", () => {
  const a = assistant([call("c", "calc")], "toolUse");
  const text = encode([...RECORDS, { t: "m", m: a }, { t: "ts", id: "c" }, { t: "tw", id: "c" }, { t: "x" }, ...STREAMED]);
  let seed = 7;
  const rand = (n) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (let i = 0; i < 2000; i++) {
    const chars = [...text.slice(0, rand(text.length + 1))];
    for (let k = rand(3); k > 0 && chars.length; k--) chars[rand(chars.length)] = String.fromCharCode(rand(128));
    try {
      const log = readLog(chars.join(""));
      restoreFrom(foldLog(log.records));
    } catch (err) {
      if (!(err instanceof SessionLogError)) throw err;
    }
  }
});
