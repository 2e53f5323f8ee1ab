import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, MODEL, createRecorder, createReplay, noStream, ok, recordAndReplay, scripted, sleep, textOf, tool, user, until } from "./support.mjs";

test("a plain run with text replays", async () => {
  await recordAndReplay({
    stream: scripted([{ text: "hello there" }]),
    drive: (a) => a.prompt("hi"),
  });
});

test("tools, an update and a denial replay", async () => {
  const tools = [tool("calc", async (id, args, signal, onUpdate) => (onUpdate?.(ok("half")), await sleep(1), ok("4")))];
  await recordAndReplay({
    stream: scripted([{ text: "let me", calls: [{ id: "k1", name: "calc", args: { x: 1 } }, { id: "k2", name: "calc" }] }, { text: "four" }, { text: "ok" }]),
    tools,
    agentOptions: { beforeToolCall: async ({ toolCall }) => (toolCall.id === "k2" ? { block: true, reason: "no" } : undefined) },
    drive: async (a) => {
      const run = a.prompt("2+2?");
      await sleep(0);
      a.followUp(user("thanks"));
      await run;
    },
  });
});
