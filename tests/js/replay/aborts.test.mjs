// Aborts replay as recorded, wherever they land: in a stream that honours or ignores them, during
// each tool of a parallel and a sequential batch, during a pending beforeToolCall; tool results
// that settle on the abort or after it; the demo's long task.
import { test } from "node:test";
import assert from "node:assert/strict";
import { longTask } from "../../../www/src/tools.js";
import { ok, recordAndReplay, scripted, sleep, textOf, tool, ticks, until } from "./support.mjs";

test("a stream that ignores the abort and produces a tool call after it replays with that call", async () => {
  let reached;
  const atGate = new Promise((r) => (reached = r));
  let open;
  const gate = new Promise((r) => (open = r));
  const stream = scripted([{ text: "thinking about it", calls: [{ id: "t1", name: "noop" }], ignoreAbort: "burst" }], {
    gate: (k, j) => (j === 3 ? (reached(), gate) : undefined),
  });
  const { a } = await recordAndReplay({
    stream,
    partials: false,
    tools: [tool("noop", async () => ok("ran"))],
    drive: async (a) => {
      const run = a.prompt("go");
      await atGate;
      a.abort();
      open();
      await run;
    },
  });
  const answer = a.state.messages[2];
  assert.equal(answer.role, "assistant");
  assert.ok(answer.content.some((b) => b.type === "toolCall"), "the recorded answer has the call produced after the abort");
});

test("a stream that ignores the abort and stalls is cut; the replay cuts it at the same point", async () => {
  let reached;
  const atGate = new Promise((r) => (reached = r));
  const stream = scripted([{ text: "this answer never ends", ignoreAbort: true }], {
    gate: (k, j) => (j === 4 ? (reached(), new Promise(() => {})) : undefined),
  });
  const { a } = await recordAndReplay({
    stream,
    drive: async (a) => {
      const run = a.prompt("go");
      await atGate;
      a.abort();
      await run;
    },
  });
  assert.equal(a.state.messages[2].stopReason, "aborted");
  assert.equal(a.state.messages[2].errorMessage, "Request was aborted");
});

test("the demo's long task, aborted: its own result (settled on the abort) replays", async () => {
  const stream = scripted([{ text: "starting", calls: [{ id: "L1", name: "long_task", args: { seconds: 1, label: "Demo task" } }] }, { text: "stopped" }]);
  const { a } = await recordAndReplay({
    stream,
    tools: [longTask],
    drive: async (a) => {
      const run = a.prompt("run the long task");
      await until(() => a.state.pendingToolCalls.size > 0);
      await sleep(300);
      a.abort();
      await run;
    },
  });
  const result = a.state.messages.find((m) => m.role === "toolResult");
  assert.match(textOf(result), /^Demo task aborted after \d+\.\d s \(step \d+ of 4\)$/);
});

test("tool results that arrive after the abort (too late: the call was abandoned) replay as abandoned", async () => {
  // A tool's execute is given a second after the abort to settle (src/agent_loop/tools.js,
  // EXECUTE_GRACE_MS); this one settles after it, so the loop has abandoned it by then.
  const late = tool("late", (id, args, signal) => new Promise((resolve) => signal.addEventListener("abort", () => setTimeout(() => resolve(ok("too late")), 1200))));
  const quick = tool("quick", (id, args, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(ok("stopped in time")))));
  const stream = scripted([{ text: "two", calls: [{ id: "q1", name: "quick" }, { id: "l1", name: "late" }] }]);
  const { a, log } = await recordAndReplay({
    stream,
    tools: [late, quick],
    drive: async (a) => {
      const run = a.prompt("go");
      await until(() => a.state.pendingToolCalls.size === 2);
      a.abort();
      await run;
      await sleep(1300);
    },
  });
  const results = a.state.messages.filter((m) => m.role === "toolResult").map(textOf);
  assert.deepEqual(results, ["stopped in time", "Operation aborted"]);
  assert.equal(log.calls[1].result.content[0].text, "too late", "the log has the late result");
});

// One run with everything: thinking, text, tool-call arguments, a beforeToolCall that takes a
// while, tools that report progress and settle on the abort or ignore it; aborted a macrotask
// after each of its events in turn (so before the first event, mid text, mid arguments, during
// each tool and each decision), in a parallel and in a sequential batch.
for (const toolExecution of ["parallel", "sequential"]) {
  test(`an abort after each event of a run (${toolExecution} tools) replays as recorded`, async () => {
    const tools = [
      tool("honest", (id, args, signal, onUpdate) => new Promise((resolve, reject) => {
        onUpdate?.(ok("started"));
        const timer = setTimeout(() => resolve(ok("honest done")), 3);
        signal.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("honest stopped"))));
      })),
      tool("stubborn", async (id, args, signal, onUpdate) => {
        await sleep(2);
        onUpdate?.(ok("half"));
        await sleep(2);
        return ok("stubborn done");
      }),
    ];
    const script = [
      { thinking: "hmm", text: "let me look", calls: [{ id: "h1", name: "honest", args: { q: "abc" } }, { id: "s1", name: "stubborn", args: { n: 12345 } }, { id: "h2", name: "honest" }] },
      { text: "all done" },
    ];
    const agentOptions = { toolExecution, beforeToolCall: async ({ toolCall }) => (await sleep(1), toolCall.id === "h2" ? { block: true, reason: "denied by user" } : undefined) };
    const count = await countEvents(script, tools, agentOptions);
    assert.ok(count > 30, `the run has ${count} events`);
    for (let at = 0; at < count; at++) {
      let seen = 0;
      await recordAndReplay({
        stream: scripted(script),
        tools,
        agentOptions,
        drive: async (a) => {
          let aborted = false;
          a.subscribe(() => {
            if (seen++ === at) setTimeout(() => ((aborted = true), a.abort()), 0);
          });
          const run = a.prompt("go");
          await run;
          await until(() => aborted || seen >= count);
          await ticks(3);
        },
      });
    }
  });
}

async function countEvents(script, tools, agentOptions) {
  const { Agent, MODEL } = await import("./support.mjs");
  const a = new Agent({ initialState: { systemPrompt: "sys", model: MODEL, tools }, streamFn: scripted(script), ...agentOptions });
  let n = 0;
  a.subscribe(() => void n++);
  await a.prompt("go");
  return n;
}

test("a stream that ignores the abort and goes on changing its message does not change the transcript after the run", async () => {
  let reached;
  const atGate = new Promise((r) => (reached = r));
  let open;
  const gate = new Promise((r) => (open = r));
  const stream = scripted([{ text: "an answer that goes on after the abort", ignoreAbort: true }], {
    gate: (k, j) => (j === 4 ? (reached(), gate) : undefined),
  });
  const { a } = await recordAndReplay({
    stream,
    partials: false,
    drive: async (a) => {
      const run = a.prompt("go");
      await atGate;
      a.abort();
      await run;
      const shown = textOf(a.state.messages[2]);
      open();
      await ticks(30);
      assert.equal(textOf(a.state.messages[2]), shown, "the aborted message is the run's, not the stream's later one");
    },
  });
  assert.equal(a.state.messages[2].errorMessage, "Request was aborted");
});
