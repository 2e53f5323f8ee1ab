// After a reload, restored tool calls wait (for approval, or to run again): what prompt(),
// continue(), steer(), followUp(), abort(), reset() and waitForIdle() do then, with an Agent and
// with a WorkerAgent (its "worker" served over a MessageChannel in this process). Every context a
// stream function receives must pass the strict-provider check, and the log must restore to the
// same transcript afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { assertStrictContext } from "../../support/strict-transcript.mjs";
import { MODEL, channelWorker, ok, sleep, textOf, tool, usage } from "../support/fixtures.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
// A missing build fails the tests instead of skipping them.
if (!existsSync(new URL("session/index.js", PKG))) throw new Error("pkg/ has no session/index.js (run node scripts/build.mjs)");
const { Agent, createAssistantMessageEventStream } = await import(new URL("index.js", PKG));
const { attachSession, memoryStore, MOVED_ON_APPROVAL, MOVED_ON_CALL } = await import(new URL("session/index.js", PKG));
const { WorkerAgent } = await import(new URL("worker/index.js", PKG));
const { serveAgent } = await import(new URL("worker/host.js", PKG));


// Every context any stream function of this file received that a strict provider would reject.
const invalid = [];
let requests = 0;

/**
 * "fetch two": two `fetch` calls (each needs approval); "safe one": a `safe` call (replay: "safe");
 * after tool results: "after tools"; anything else: "ok: <the last user text>".
 */
function streamFn(model, context) {
  requests++;
  try {
    assertStrictContext(context);
  } catch (err) {
    invalid.push(err.message);
  }
  const s = createAssistantMessageEventStream();
  const last = context.messages.at(-1);
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() };
  (async () => {
    await sleep(0);
    s.push({ type: "start", partial });
    const prompt = last?.role === "user" ? textOf(last) : "";
    const n = requests;
    const calls = prompt === "fetch two" ? [`fetch-a${n}`, `fetch-b${n}`].map((id) => ({ id, name: "fetch" }))
      : prompt === "safe one" ? [{ id: `safe-${n}`, name: "safe" }] : [];
    if (calls.length === 0) {
      const text = last?.role === "toolResult" ? "after tools" : `ok: ${prompt}`;
      partial.content.push({ type: "text", text });
      s.push({ type: "text_start", contentIndex: 0, partial });
      s.push({ type: "text_delta", contentIndex: 0, delta: text, partial });
      s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    }
    for (const c of calls) {
      const block = { type: "toolCall", id: c.id, name: c.name, arguments: {} };
      partial.content.push(block);
      s.push({ type: "toolcall_start", contentIndex: partial.content.length - 1, partial });
      s.push({ type: "toolcall_end", contentIndex: partial.content.length - 1, toolCall: block, partial });
      partial.stopReason = "toolUse";
    }
    s.push({ type: "done", reason: partial.stopReason, message: partial });
  })();
  return s;
}

// `hang`: the safe tool never finishes (the first page, reloaded while it runs).
const TOOLS = (hang) => [
  tool("fetch", async () => ok("page")),
  tool("safe", async (id, args, signal) => hang ? new Promise(() => {}) : new Promise((resolve) => {
    const t = setTimeout(() => resolve(ok("safe ran")), 5);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve(ok("safe stopped"))));
  }), { replay: "safe" }),
];

const KINDS = {
  Agent: (options, hang) => new Agent({ initialState: { systemPrompt: "sys", model: MODEL, tools: TOOLS(hang) }, streamFn, ...options }),
  WorkerAgent: (options, hang) =>
    new WorkerAgent({ initialState: { systemPrompt: "sys", model: MODEL, tools: TOOLS(hang) }, worker: channelWorker(serveAgent, { streamFn }), ...options }),
};

/** An approval dialog: beforeToolCall asks, `dialog.open` lists what waits, each entry approves or denies. */
function dialog() {
  const open = [];
  const hook = async ({ toolCall }, signal) => {
    if (toolCall.name !== "fetch") return undefined;
    return new Promise((resolve) => {
      const entry = { id: toolCall.id, signal, approve: () => settle(undefined), deny: () => settle({ block: true, reason: "denied" }) };
      const settle = (v) => {
        open.splice(open.indexOf(entry), 1);
        resolve(v);
      };
      // A dialog closes when its call is cancelled.
      signal?.addEventListener("abort", () => open.includes(entry) && settle({ block: true, reason: "cancelled" }));
      open.push(entry);
    });
  };
  return { open, hook };
}

const until = async (f) => {
  for (let i = 0; !f(); i++) {
    if (i > 2000) throw new Error("timed out waiting for " + f);
    await sleep(1);
  }
};

/** Runs `prompt` in a first page until its calls wait for approval; gives a second page restored from the same log. */
async function reloadedWaiting(kind, id, prompt = "fetch two") {
  const store = memoryStore();
  const first = dialog();
  const a = KINDS[kind]({ beforeToolCall: first.hook }, true);
  const sa = await attachSession(a, { id, store, flushMs: 1, tabs: false });
  a.prompt(prompt);
  // Calls are prepared one after the other: the first waits for approval, the second has not started.
  await until(() => (prompt === "fetch two" ? first.open.length === 1 : a.state.pendingToolCalls.size > 0));
  // The first page goes away: its session writes nothing more (a WorkerAgent's terminate() ends its run).
  await sa.detach();
  a.terminate?.();
  const second = dialog();
  const b = KINDS[kind]({ beforeToolCall: second.hook });
  const session = await attachSession(b, { id, store, flushMs: 1, tabs: false });
  const notified = [];
  session.subscribe((s) => notified.push(s.pendingCalls.map((p) => p.toolCall.id)));
  return { store, a, b, session, dialog: second, notified };
}

/** The transcript as [role, text or result] pairs, from the system prompt's first user message on. */
const shape = (agent) => agent.state.messages.filter((m) => m.role !== "system").map((m) => [m.role, m.role === "toolResult" ? `${m.toolCallId}: ${textOf(m)}` : textOf(m)]);

/** A third page restored from the log shows the same transcript, with nothing waiting. */
async function restoresTheSame(kind, id, store, agent) {
  const c = KINDS[kind]({});
  const session = await attachSession(c, { id, store, tabs: false });
  assert.deepEqual(shape(c), shape(agent));
  assert.deepEqual(session.pendingCalls, []);
  await session.detach();
  c.terminate?.();
}

for (const kind of Object.keys(KINDS)) {
  test(`${kind}: prompt() while restored approvals wait declines each (an isError result), tells the session's listeners, then runs`, async () => {
    invalid.length = 0;
    const { store, b, session, notified } = await reloadedWaiting(kind, `${kind}-prompt`);
    const ids = session.pendingCalls.map((p) => p.toolCall.id);
    assert.deepEqual(session.pendingCalls.map((p) => p.approval), [true, false]);
    await b.prompt("what is 2+2?");
    assert.deepEqual(shape(b).slice(2), [
      ["toolResult", `${ids[0]}: ${MOVED_ON_APPROVAL}`],
      ["toolResult", `${ids[1]}: ${MOVED_ON_CALL}`],
      ["user", "what is 2+2?"],
      ["assistant", "ok: what is 2+2?"],
    ]);
    assert.ok(b.state.messages.filter((m) => m.role === "toolResult").every((m) => m.isError === true));
    assert.deepEqual(session.pendingCalls, []);
    assert.deepEqual(notified.at(-1), [], "the session's listeners hear that nothing waits any more");
    await session.flush();
    await restoresTheSame(kind, `${kind}-prompt`, store, b);
    assert.deepEqual(invalid, []);
    b.terminate?.();
  });

  test(`${kind}: prompt() while resume() asks again cancels that dialog; each call gets one result; resume() does not continue`, async () => {
    invalid.length = 0;
    const { store, b, session, dialog: d } = await reloadedWaiting(kind, `${kind}-asking`);
    const resumed = session.resume();
    await until(() => d.open.length === 1);
    const asked = d.open[0];
    const before = requests;
    await b.prompt("never mind");
    assert.equal(asked.signal.aborted, true, "the dialog's signal is aborted");
    assert.equal(d.open.length, 0);
    await resumed;
    await b.waitForIdle();
    assert.equal(requests - before, 1, "one request: the prompt's (resume() did not continue)");
    const results = b.state.messages.filter((m) => m.role === "toolResult");
    assert.deepEqual(results.map(textOf), [MOVED_ON_APPROVAL, MOVED_ON_CALL]);
    assert.deepEqual(shape(b).slice(-2), [["user", "never mind"], ["assistant", "ok: never mind"]]);
    await session.flush();
    await restoresTheSame(kind, `${kind}-asking`, store, b);
    assert.deepEqual(invalid, []);
    b.terminate?.();
  });

  test(`${kind}: prompt() right after resume(), before beforeToolCall is asked again: each call gets its moved-on result`, async () => {
    invalid.length = 0;
    const { store, b, session, dialog: d } = await reloadedWaiting(kind, `${kind}-at-once`);
    const resumed = session.resume();
    await b.prompt("never mind");
    await resumed;
    await b.waitForIdle();
    assert.equal(d.open.length, 0, "no dialog is left open");
    const results = b.state.messages.filter((m) => m.role === "toolResult");
    assert.deepEqual(results.map(textOf), [MOVED_ON_APPROVAL, MOVED_ON_CALL]);
    assert.deepEqual(shape(b).slice(-2), [["user", "never mind"], ["assistant", "ok: never mind"]]);
    await session.flush();
    await restoresTheSame(kind, `${kind}-at-once`, store, b);
    assert.deepEqual(invalid, []);
    b.terminate?.();
  });

  test(`${kind}: a branch is refused while resume() asks again, before it changes anything`, async () => {
    invalid.length = 0;
    const { b, session, dialog: d } = await reloadedWaiting(kind, `${kind}-branch-busy`);
    const before = b.state.messages;
    const resumed = session.resume();
    await until(() => d.open.length === 1);
    await assert.rejects(session.branches.regenerate(2), /branches cannot change while the agent runs/);
    await assert.rejects(session.branches.edit(1, "something else"), /branches cannot change while the agent runs/);
    assert.equal(b.state.messages, before, "the transcript is untouched");
    b.abort();
    await resumed;
    await b.waitForIdle();
    assert.deepEqual(invalid, []);
    b.terminate?.();
  });

  test(`${kind}: regenerate() sets the waiting answer aside: its calls wait no more, and only the new answer's are asked about`, async () => {
    invalid.length = 0;
    const { b, session, dialog: d } = await reloadedWaiting(kind, `${kind}-branch-aside`);
    const restored = session.pendingCalls.map((p) => p.toolCall.id);
    const run = session.branches.regenerate(2);
    await until(() => d.open.length === 1);
    assert.deepEqual(session.pendingCalls, [], "the set-aside answer's calls wait no more");
    assert.ok(!restored.includes(d.open[0].id), `the dialog asks about the new answer's call, not ${d.open[0].id}`);
    b.abort();
    await run;
    await b.waitForIdle();
    assert.deepEqual(session.branches.points, [{ index: 2, version: 1, count: 2 }]);
    assert.deepEqual(invalid, []);
    b.terminate?.();
  });

  test(`${kind}: continue() runs the waiting calls as resume() does (beforeToolCall asked again), then continues`, async () => {
    invalid.length = 0;
    const { store, b, session, dialog: d } = await reloadedWaiting(kind, `${kind}-continue`);
    const run = b.continue();
    await until(() => d.open.length === 1);
    d.open[0].approve();
    await until(() => d.open.length === 1);
    d.open[0].deny();
    await run;
    const ids = b.state.messages.filter((m) => m.role === "toolResult").map((m) => [textOf(m), m.isError]);
    assert.deepEqual(ids, [["page", false], ["denied", true]]);
    assert.deepEqual(shape(b).at(-1), ["assistant", "after tools"]);
    await session.flush();
    await restoresTheSame(kind, `${kind}-continue`, store, b);
    assert.deepEqual(invalid, []);
    b.terminate?.();
  });

  test(`${kind}: steer() and followUp() while calls wait are delivered after the calls' results`, async () => {
    invalid.length = 0;
    const steerMsg = { role: "user", content: [{ type: "text", text: "also this" }], timestamp: 5 };
    const followMsg = { role: "user", content: [{ type: "text", text: "and then that" }], timestamp: 6 };
    // steer, followUp, then continue(): the calls run, then the steering and the follow-up.
    {
      const { b, dialog: d } = await reloadedWaiting(kind, `${kind}-steer-continue`);
      b.steer(steerMsg);
      b.followUp(followMsg);
      const run = b.continue();
      for (let i = 0; i < 2; i++) {
        await until(() => d.open.length === 1);
        d.open[0].approve();
      }
      await run;
      const [a1, b1] = b.state.messages.find((m) => m.stopReason === "toolUse").content;
      assert.deepEqual(shape(b).slice(2), [
        ["toolResult", `${a1.id}: page`],
        ["toolResult", `${b1.id}: page`],
        ["user", "also this"],
        ["assistant", "ok: also this"],
        ["user", "and then that"],
        ["assistant", "ok: and then that"],
      ]);
      b.terminate?.();
    }
    // steer, followUp, then prompt(): the calls declined, then the prompt, the steering, the follow-up.
    {
      const { b } = await reloadedWaiting(kind, `${kind}-steer-prompt`);
      b.steer(steerMsg);
      b.followUp(followMsg);
      await b.prompt("new question");
      await b.waitForIdle();
      const users = shape(b).filter(([role]) => role === "user").map(([, text]) => text);
      assert.deepEqual(users, ["fetch two", "new question", "also this", "and then that"]);
      b.terminate?.();
    }
    assert.deepEqual(invalid, []);
  });

  test(`${kind}: during resume(), continue() and a second prompt() are refused, abort() ends it with a result per call, waitForIdle() waits for it`, async () => {
    invalid.length = 0;
    const { store, b, session, dialog: d } = await reloadedWaiting(kind, `${kind}-abort`);
    const resumed = session.resume();
    await until(() => d.open.length === 1);
    await assert.rejects(b.continue(), { message: "Agent is already processing. Wait for completion before continuing." });
    let idle = false;
    const waited = b.waitForIdle().then(() => (idle = true));
    await sleep(5);
    assert.equal(idle, false, "waitForIdle() waits for resume()");
    const before = requests;
    b.abort();
    await resumed;
    await waited;
    assert.equal(requests, before, "an aborted resume() does not continue");
    const results = b.state.messages.filter((m) => m.role === "toolResult");
    assert.equal(results.length, 2);
    assert.ok(results.every((m) => m.isError));
    // Two prompts at once: the first moves on, the second is refused as during a run.
    const { b: c } = await reloadedWaiting(kind, `${kind}-twice`);
    const first = c.prompt("one");
    await assert.rejects(c.prompt("two"), { message: /^Agent is already processing a prompt/ });
    await first;
    await b.prompt("after the abort");
    await session.flush();
    await restoresTheSame(kind, `${kind}-abort`, store, b);
    assert.deepEqual(invalid, []);
    b.terminate?.();
    c.terminate?.();
  });

  test(`${kind}: reset() forgets the waiting calls; a replay-safe call that had not run is declined by a prompt`, async () => {
    invalid.length = 0;
    const { b, session, notified } = await reloadedWaiting(kind, `${kind}-reset`);
    b.reset();
    assert.deepEqual(session.pendingCalls, []);
    assert.deepEqual(notified.at(-1), []);
    await b.prompt("fresh start");
    assert.deepEqual(shape(b), [["user", "fresh start"], ["assistant", "ok: fresh start"]]);
    b.terminate?.();

    const safe = await reloadedWaiting(kind, `${kind}-safe`, "safe one");
    assert.deepEqual(safe.session.pendingCalls.map((p) => [p.toolCall.name, p.approval]), [["safe", false]]);
    await safe.b.prompt("skip it");
    const result = safe.b.state.messages.find((m) => m.role === "toolResult");
    assert.equal(textOf(result), MOVED_ON_CALL);
    assert.deepEqual(invalid, []);
    safe.b.terminate?.();
  });
}
