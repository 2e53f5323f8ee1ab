// Inputs replay where they came in the recorded run: steering, follow-ups, continue(), an
// approval decision followed by an abort, an input refused while a run was going on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ok, recordAndReplay, scripted, sleep, textOf, tool, ticks, until, user } from "./support.mjs";

test("a steer() one microtask after prompt() is delivered with the request it was in the recording", async () => {
  const stream = scripted([{ text: "first answer" }, { text: "after steering" }]);
  const { a } = await recordAndReplay({
    stream,
    drive: async (a) => {
      const run = a.prompt("hi");
      await null;
      a.steer(user("and also"));
      await run;
    },
  });
  // In the recording the steering message reached the second request.
  assert.deepEqual(stream.contexts.map((c) => c.length), [2, 4]);
  assert.equal(textOf(a.state.messages[3]), "and also");
});

test("a steer() queued before the prompt reaches the first request", async () => {
  const stream = scripted([{ text: "both" }]);
  await recordAndReplay({
    stream,
    drive: async (a) => {
      a.steer(user("queued first"));
      await a.prompt("hi");
    },
  });
  assert.deepEqual(stream.contexts[0].map(textOf), ["sys", "hi", "queued first"]);
});

test("prompt, steer, continue(), followUp: every request replays, none is missed", async () => {
  const stream = scripted([{ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }]);
  await recordAndReplay({
    stream,
    drive: async (a) => {
      await a.prompt("start");
      a.steer(user("steered"));
      await a.continue();
      a.followUp(user("follow"));
      await a.continue();
    },
  });
  assert.equal(stream.contexts.length, 3);
});

test("steering while tools run and follow-ups queued during the run, in one-at-a-time mode", async () => {
  const tools = [tool("slow", async () => (await sleep(2), ok("slow done")))];
  const stream = scripted([
    { text: "calling", calls: [{ id: "c1", name: "slow" }] },
    { text: "after tool" },
    { text: "after steer 2" },
    { text: "after follow 1" },
    { text: "after follow 2" },
  ]);
  await recordAndReplay({
    stream,
    tools,
    drive: async (a) => {
      const run = a.prompt("go");
      await until(() => a.state.pendingToolCalls.size > 0);
      a.steer(user("s1"));
      a.steer(user("s2"));
      a.followUp(user("f1"));
      a.followUp(user("f2"));
      await run;
    },
  });
});

test("a prompt() refused while a run was going on is refused again, and the run replays", async () => {
  const stream = scripted([{ text: "a long enough answer" }]);
  await recordAndReplay({
    stream,
    drive: async (a) => {
      const run = a.prompt("first");
      await ticks(2);
      await assert.rejects(a.prompt("second"), /already processing/);
      await run;
    },
  });
});

test("a decision in beforeToolCall some time after the prompt, then an abort, replays as recorded", async () => {
  const tools = [tool("fetch_page", async () => ok("page"))];
  const stream = scripted([{ text: "fetching", calls: [{ id: "f1", name: "fetch_page", args: { path: "/" } }] }, { text: "after" }]);
  let decided;
  const { a } = await recordAndReplay({
    stream,
    tools,
    agentOptions: {
      beforeToolCall: () => new Promise((resolve) => (decided = resolve)),
    },
    drive: async (a) => {
      const run = a.prompt("fetch it");
      await until(() => decided);
      await sleep(30);
      decided({ block: true, reason: "denied by user" });
      await ticks(1);
      a.abort();
      await run;
    },
  });
  const result = a.state.messages.find((m) => m.role === "toolResult");
  assert.equal(textOf(result), "denied by user");
});

test("continue() after a tool result set by the app, and reset() between runs", async () => {
  const stream = scripted([{ text: "one" }, { text: "two" }, { text: "three" }]);
  await recordAndReplay({
    stream,
    drive: async (a) => {
      await a.prompt("start");
      a.state.messages = [...a.state.messages, user("edited in")];
      await a.continue();
      a.reset();
      await a.prompt("again");
    },
  });
});

test("tools set while a run goes on take effect at the next run, as recorded", async () => {
  const first = [tool("one", async () => (await sleep(5), ok("one ran")))];
  const stream = scripted([{ text: "calling", calls: [{ id: "o1", name: "one" }] }, { text: "done" }, { text: "second run" }]);
  await recordAndReplay({
    stream,
    tools: first,
    drive: async (a) => {
      const run = a.prompt("go");
      await until(() => a.state.pendingToolCalls.size > 0);
      a.state.tools = [...a.state.tools, tool("two", async () => ok("two ran"))];
      await run;
      await a.prompt("again");
    },
  });
  // The second run's request declares the new tool.
  assert.ok(stream.contexts[2].some((m) => m.role === "system" && m.toolsAdded?.some((t) => t.name === "two")));
});
