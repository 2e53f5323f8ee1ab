// The README's Replay example, run as written: extracted from README.md and imported as a module
// of an app that has the built package installed as `pi-agent-wasm` (a link to pkg/). The app
// around it gives the example its `agent`, whose stream function answers "4".
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PKG } from "./support.mjs";

const README = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

/** The first ```js block of the README section titled `title`. */
function example(title) {
  const section = README.slice(README.indexOf(`\n## ${title}\n`));
  const body = section.slice(0, section.indexOf("\n## ", 1));
  const match = /```js\n([\s\S]*?)```/.exec(body);
  assert.ok(match, `README section "${title}" has a js example`);
  return match[1];
}

const APP = `import { Agent as AppAgent, createAssistantMessageEventStream } from "pi-agent-wasm";
import { assertStrictContext } from ${JSON.stringify(new URL("../../support/strict-transcript.mjs", import.meta.url).href)};
const model = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const agent = new AppAgent({
  initialState: { systemPrompt: "You add numbers.", model },
  streamFn: (model, context) => {
    assertStrictContext(context);
    const s = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage, stopReason: "stop", timestamp: 1 };
    setTimeout(() => {
      s.push({ type: "start", partial });
      partial.content.push({ type: "text", text: "4" });
      s.push({ type: "text_start", contentIndex: 0, partial });
      s.push({ type: "text_delta", contentIndex: 0, delta: "4", partial });
      s.push({ type: "text_end", contentIndex: 0, content: "4", partial });
      s.push({ type: "done", reason: "stop", message: partial });
    }, 5);
    return s;
  },
});
`;

test("the README's Replay example runs as written", async () => {
  const dir = mkdtempSync(join(tmpdir(), "readme-replay-"));
  try {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(fileURLToPath(PKG), join(dir, "node_modules", "pi-agent-wasm"), "dir");
    const file = join(dir, "example.mjs");
    writeFileSync(file, `${APP}\n// ---- README.md, section Replay ----\n${example("Replay")}\nexport { agent, replayed };\n`);
    const { agent, replayed } = await import(pathToFileURL(file).href);
    const shown = (a) => a.state.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content.map((b) => b.text).join("")]);
    assert.deepEqual(shown(agent), [["system", "You add numbers."], ["user", "What is 2 + 2?"], ["assistant", "4"]]);
    assert.deepEqual(shown(replayed), shown(agent));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
