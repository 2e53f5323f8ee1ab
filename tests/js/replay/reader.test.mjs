// The reader names the first bad field of a log, by its path, before anything plays.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, MODEL, REPLAY_LOG_VERSION, ReplayLogError, createRecorder, createReplay, readReplayLog, scripted } from "./support.mjs";

const recorder = createRecorder();
const agent = recorder.attach(new Agent({ initialState: { systemPrompt: "sys", model: MODEL }, streamFn: scripted([{ text: "hi" }, { text: "again" }]) }));
await agent.prompt("one");
await agent.prompt("two");
const log = recorder.log();

const refused = (edit, path, message) => {
  const copy = structuredClone(log);
  edit(copy);
  for (const read of [() => readReplayLog(copy), () => createReplay(copy), () => createReplay(JSON.stringify(copy))]) {
    assert.throws(read, (e) => e instanceof ReplayLogError && e.path === path && e.message === `${path}: ${message}`, path);
  }
};

test("a recorded log reads as it is", () => {
  assert.equal(log.v, REPLAY_LOG_VERSION);
  assert.deepEqual(readReplayLog(JSON.stringify(log)), log);
});

test("bad events, inputs and steps are named by their path", () => {
  refused((l) => (l.requests[1].events = "abc"), "requests[1].events", "expected an array");
  refused((l) => (l.requests[1].events = [[0, null]]), "requests[1].events[0][1]", 'expected an object with a string "type"');
  refused((l) => (l.requests[0].events[2][1].delta = 5), "requests[0].events[2][1].delta", "expected a string");
  refused((l) => (l.requests[0].events[0] = [0]), "requests[0].events[0]", "expected a [time, event] or [time, event, block] array");
  refused((l) => (l.inputs = [null]), "inputs[0]", "expected an object");
  refused((l) => (l.inputs[0].op = "dance"), "inputs[0].op", 'expected one of "prompt", "continue", "steer", "followUp", "abort", "clearSteeringQueue", "clearFollowUpQueue", "clearAllQueues", "reset", "messages", "model", "tools", "runToolCall", "lost"');
  refused((l) => (l.requests[1].from = 9), "requests[1].from", "expected an integer from 0 to 2");
  refused((l) => l.requests[1].added.pop(), "requests[1].added", "expected 2 message(s) (h has 4, from is 2)");
  refused((l) => (l.requests[0].added[0].role = 3), "requests[0].added[0].role", "expected a string");
  refused((l) => (l.steps[0] = "i"), "steps[0]", "expected an array starting with a step code");
  refused((l) => l.steps.push(["e", 0, 1]), `steps[${log.steps.length}][2]`, "expected at most 0 (request 0 has 5 stream item(s))");
  refused((l) => l.steps.push(["i", 0]), `steps[${log.steps.length}][1]`, "expected an input not made before (input 0 is at an earlier step)");
  // Without its "s" step, request 1's first read comes one step earlier, before it started.
  const read = log.steps.findIndex((s) => s[0] === "e" && s[1] === 1) - 1;
  refused((l) => l.steps.splice(l.steps.findIndex((s) => s[0] === "s" && s[1] === 1), 1), `steps[${read}][1]`, "expected the index of one of the 1 requests started so far");
  refused((l) => l.steps.splice(l.steps.findIndex((s) => s[0] === "i" && s[1] === 1), 1), "inputs[1]", "expected a step for it");
});

test("another version, another document, text that is not JSON", () => {
  assert.throws(() => readReplayLog({ ...log, v: 1 }), { name: "ReplayLogError", path: "v", message: "unsupported replay log version 1: this pi-agent-wasm reads version 2" });
  assert.throws(() => readReplayLog({ ...log, pi: undefined }), { name: "ReplayLogError", path: "pi", message: 'not a replay log (no "pi": "replay")' });
  assert.throws(() => readReplayLog("[]"), { name: "ReplayLogError", path: "pi" });
  assert.throws(() => readReplayLog("{"), (e) => e instanceof ReplayLogError && e.path === "" && /^not a replay log: /.test(e.message));
});
