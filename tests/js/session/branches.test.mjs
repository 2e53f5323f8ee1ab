// session.branches in Node, on pkg/, with an Agent and with a WorkerAgent (served over a MessageChannel in
// this process): edit and regenerate keep the earlier version, switchTo moves between them, the versions
// survive a reload (a new agent attached to the same store), a log read without them still gives the
// transcript shown, and every context the stream function receives is valid for a strict provider.
// The browser tests (tests/browser/session/branches.browser.test.mjs) do the same across real reloads and tabs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { assertStrictContext } from "../../support/strict-transcript.mjs";
import { MODEL, channelWorker, ok, sleep, textOf, tool, usage } from "../support/fixtures.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
// A missing build fails the tests instead of skipping them.
if (!existsSync(new URL("session/branches.js", PKG))) throw new Error("pkg/ has no session/branches.js (run node scripts/build.mjs)");
const { Agent, createAssistantMessageEventStream } = await import(new URL("index.js", PKG));
const { attachSession, memoryStore } = await import(new URL("session/index.js", PKG));
const { WorkerAgent } = await import(new URL("worker/index.js", PKG));
const { serveAgent } = await import(new URL("worker/host.js", PKG));

const look = tool("look", async () => ok("seen"));

let answers = 0;
/**
 * Answers "re: <last user text> #n" (n counts every answer, so a regenerated one differs); "look …" calls
 * the `look` tool first; after a tool result, "after <result> #n". Each context must suit a strict provider.
 */
function streamFn(model, context) {
  assertStrictContext(context);
  const s = createAssistantMessageEventStream();
  const last = context.messages.at(-1);
  const n = ++answers;
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 1000 + n };
  (async () => {
    await sleep(0);
    s.push({ type: "start", partial });
    if (last.role === "user" && textOf(last).startsWith("look")) {
      const block = { type: "toolCall", id: `look-${n}`, name: "look", arguments: {} };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: 0, partial });
      s.push({ type: "toolcall_end", contentIndex: 0, toolCall: block, partial });
      partial.stopReason = "toolUse";
    } else {
      const text = last.role === "toolResult" ? `after ${textOf(last)} #${n}` : `re: ${textOf(last)} #${n}`;
      partial.content.push({ type: "text", text });
      s.push({ type: "text_start", contentIndex: 0, partial });
      s.push({ type: "text_delta", contentIndex: 0, delta: text, partial });
      s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    }
    s.push({ type: "done", reason: partial.stopReason, message: partial });
  })();
  return s;
}

let stamp = 0;
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ++stamp });

const KINDS = {
  Agent: () => new Agent({ initialState: { systemPrompt: "test", model: MODEL, tools: [look] }, streamFn }),
  WorkerAgent: () =>
    new WorkerAgent({
      initialState: { systemPrompt: "test", model: MODEL, tools: [look] },
      worker: channelWorker(serveAgent, { streamFn }),
    }),
};

// The transcript without its system message (index 0 of `agent.state.messages`).
const texts = (agent) => agent.state.messages.slice(1).map((m) => `${m.role[0]}:${textOf(m) || m.toolCallId || ""}`);

for (const [kind, make] of Object.entries(KINDS)) {
  test(`${kind}: edit and regenerate keep the earlier versions; switchTo moves between them; a reload keeps them`, async (t) => {
    const store = memoryStore();
    const agent = make();
    t.after(() => agent.terminate?.());
    const session = await attachSession(agent, { id: "b", store, tabs: false });
    const { branches } = session;
    assert.deepEqual(branches.points, []);
    await agent.prompt(user("one"));
    await agent.prompt(user("two"));
    const before = agent.state.messages.slice();
    const a1 = texts(agent)[1];

    const seen = [];
    const off = branches.subscribe((p) => seen.push(p));
    await branches.edit(3, user("two, edited"));
    assert.deepEqual(texts(agent).slice(0, 3), ["u:one", a1, "u:two, edited"]);
    assert.match(texts(agent)[3], /^a:re: two, edited #\d+$/);
    assert.deepEqual(branches.points, [{ index: 3, version: 1, count: 2 }]);
    assert.equal(branches.points, branches.getSnapshot(), "the same array until the points change");
    assert.deepEqual(branches.at(3), { index: 3, version: 1, count: 2 });
    assert.equal(branches.at(2), undefined);

    await branches.regenerate(4);
    const regenerated = texts(agent)[3];
    assert.notEqual(regenerated, `a:re: two, edited #${answers - 1}`);
    assert.deepEqual(branches.points, [
      { index: 3, version: 1, count: 2 },
      { index: 4, version: 1, count: 2 },
    ]);

    await branches.switchTo(3, 0);
    assert.deepEqual(texts(agent), before.slice(1).map((m) => `${m.role[0]}:${textOf(m)}`));
    assert.ok(agent.state.messages.every((m, i) => m === before[i]), "the earlier version's own messages come back");
    assert.deepEqual(branches.points, [{ index: 3, version: 0, count: 2 }]);
    await branches.switchTo(3, 1);
    assert.equal(texts(agent)[3], regenerated, "a version comes back as it was last shown");
    assert.deepEqual(branches.points, [
      { index: 3, version: 1, count: 2 },
      { index: 4, version: 1, count: 2 },
    ]);
    await branches.switchTo(4, 0);
    assert.match(texts(agent)[3], /^a:re: two, edited/);
    off();
    assert.ok(seen.length >= 4, "listeners hear each change");

    // A run after switching goes on from the version shown.
    await agent.prompt(user("look around"));
    assert.deepEqual(texts(agent).slice(4), ["u:look around", "a:", "t:seen", `a:after seen #${answers}`]);
    // Regenerating the answer after a tool result continues from the result.
    await branches.regenerate(8);
    assert.match(texts(agent)[7], /^a:after seen #\d+$/);
    assert.deepEqual(branches.at(8), { index: 8, version: 1, count: 2 });
    const shown = texts(agent);
    const points = branches.points;
    await session.detach();

    // A reload: a new agent on the same store.
    const again = make();
    t.after(() => again.terminate?.());
    const restored = await attachSession(again, { id: "b", store, tabs: false });
    assert.deepEqual(texts(again), shown);
    assert.deepEqual(restored.branches.points, points);
    await restored.branches.switchTo(3, 0);
    assert.deepEqual(texts(again), before.slice(1).map((m) => `${m.role[0]}:${textOf(m)}`));
    await restored.branches.switchTo(3, 1);
    assert.deepEqual(texts(again), shown, "each version comes back after a reload as it was last shown");
    await again.prompt(user("after the reload"));
    assert.equal(texts(again).length, shown.length + 2);
    await restored.detach();
  });
}

test("a log read without branches (an older pi-agent-wasm) gives the transcript shown", async () => {
  const store = memoryStore();
  const agent = KINDS.Agent();
  const session = await attachSession(agent, { id: "old", store, tabs: false });
  await agent.prompt(user("one"));
  await session.branches.edit(1, user("one, edited"));
  await session.branches.regenerate(2);
  await session.detach();
  const shown = texts(agent);
  const log = await store.load("old");
  assert.match(log, /"t":"k"/);
  // An older reader does not know the `k` record: here it is a record of a kind no reader knows, left in place.
  const older = memoryStore();
  await older.append("old", log.replaceAll('"t":"k"', '"t":"unknown"'));
  const reader = KINDS.Agent();
  const s = await attachSession(reader, { id: "old", store: older, tabs: false });
  assert.deepEqual(texts(reader), shown);
  assert.deepEqual(s.branches.points, []);
  await s.detach();
});

test("without the branch API nothing is kept: a trimmed or reset transcript forks nowhere", async () => {
  const store = memoryStore();
  const agent = KINDS.Agent();
  const session = await attachSession(agent, { id: "trim", store, tabs: false });
  await agent.prompt(user("one"));
  await agent.prompt(user("two"));
  agent.state.messages = agent.state.messages.slice(0, 3);
  await agent.prompt(user("three"));
  assert.deepEqual(session.branches.points, []);
  await session.branches.edit(3, user("three, edited"));
  assert.equal(session.branches.points.length, 1);
  agent.reset();
  await agent.prompt(user("new chat"));
  assert.deepEqual(session.branches.points, [], "a reset starts a new tree");
  await session.detach();
  const again = KINDS.Agent();
  const restored = await attachSession(again, { id: "trim", store, tabs: false });
  assert.deepEqual(restored.branches.points, []);
  assert.deepEqual(texts(again).map((x) => x.slice(0, 12)), ["u:new chat", "a:re: new ch"]);
  await restored.detach();
});

test("branches refuse what would break the transcript", async () => {
  const agent = KINDS.Agent();
  const session = await attachSession(agent, { id: "refuse", store: memoryStore(), tabs: false });
  await agent.prompt(user("look here"));
  // [system, user, assistant(toolUse), toolResult, assistant]
  await assert.rejects(session.branches.edit(2, "x"), /is a assistant message, not user/);
  await assert.rejects(session.branches.regenerate(1), /is a user message, not assistant/);
  await assert.rejects(session.branches.regenerate(9), /no message at index 9/);
  await assert.rejects(session.branches.switchTo(1, 3), /no version 3 at index 1/);
  const run = agent.prompt(user("two"));
  await assert.rejects(session.branches.edit(1, "x"), /cannot change while the agent runs/);
  await run;
  await session.detach();
});
