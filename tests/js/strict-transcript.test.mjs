// The strict-provider check that tests run on the contexts their stream functions receive
// (tests/support/strict-transcript.mjs): what it accepts and what it names.
import test from "node:test";
import assert from "node:assert/strict";
import { assertStrictContext, keptTranscriptProblems, strictPrefixProblems, strictProblems, StrictTranscriptError } from "../support/strict-transcript.mjs";

const user = (text) => ({ role: "user", content: text, timestamp: 1 });
const call = (id, name = "t") => ({ type: "toolCall", id, name, arguments: {} });
const assistant = (calls, stopReason = calls.length ? "toolUse" : "stop") => ({ role: "assistant", content: [{ type: "text", text: "x" }, ...calls], stopReason });
const result = (id) => ({ role: "toolResult", toolCallId: id, toolName: "t", content: [], isError: false, timestamp: 1 });

test("accepts calls answered at once and in order", () => {
	assert.deepEqual(strictProblems([user("a"), assistant([call("1"), call("2")]), result("1"), result("2"), assistant([]), user("b")]), []);
	assertStrictContext({ messages: [] });
});

test("names each way a context breaks a strict provider", () => {
	const cases = [
		[[user("a"), assistant([call("1")]), user("b")], /tool call "1" \(t\) is followed by user, not by its result/],
		[[user("a"), assistant([call("1")], "aborted")], /followed by the end of the context/],
		[[user("a"), assistant([call("1"), call("2")]), result("2"), result("1")], /toolResult for "2" where the result of "1" belongs/],
		[[user("a"), result("9")], /a toolResult for "9" answers no tool call/],
		[[user("a"), assistant([call("1")]), result("1"), result("1")], /answers no tool call/],
		[[assistant([call("1")]), result("1"), assistant([call("1")]), result("1")], /"1" is used twice/],
	];
	for (const [messages, want] of cases) {
		assert.throws(() => assertStrictContext({ messages }), (err) => err instanceof StrictTranscriptError && want.test(err.message), JSON.stringify(messages.map((m) => m.role)));
	}
});

test("a running transcript may end with its last answer's unanswered calls, nothing else", () => {
	assert.deepEqual(strictPrefixProblems([user("a"), assistant([call("1"), call("2")])]), []);
	assert.deepEqual(strictPrefixProblems([user("a"), assistant([call("1"), call("2")]), result("1")]), []);
	assert.match(strictPrefixProblems([user("a"), assistant([call("1"), call("2")]), result("2")])[0], /toolResult for "2" where the result of "1" belongs/);
	assert.match(strictPrefixProblems([user("a"), assistant([call("1")]), user("b"), assistant([call("2")])])[0], /tool call "1" \(t\) is followed by user/);
	assert.match(strictPrefixProblems([user("a"), assistant([call("1")]), user("b")])[0], /followed by user/);
});

test("a kept transcript may hold a failed answer's calls that never ran, not a completed answer's", () => {
	assert.deepEqual(keptTranscriptProblems([user("a"), assistant([call("1")], "aborted"), user("b"), assistant([])]), []);
	assert.deepEqual(keptTranscriptProblems([user("a"), assistant([call("1"), call("2")], "error"), user("b")]), []);
	assert.match(keptTranscriptProblems([user("a"), assistant([call("1")], "toolUse"), user("b")])[0], /followed by user/);
	assert.match(keptTranscriptProblems([user("a"), assistant([call("1"), call("2")], "aborted"), result("2")])[0], /where the result of "1" belongs/);
	assert.deepEqual(keptTranscriptProblems([user("a"), assistant([call("1")], "toolUse")]), [], "calls in flight");
	assert.match(keptTranscriptProblems([user("a"), assistant([call("1")], "toolUse")], { running: false })[0], /followed by the end/);
});
