// The UI adapters' view of session.branches in Node, on pkg/: Svelte's branchesStore and Vue's useBranches
// give the branch points and change when they change (React's useBranches is driven by the demo's end-to-end
// tests, tests/e2e/branches.test.mjs). Vue comes from tests/browser/ui's own prefix (installed when missing),
// bundled with esbuild into this process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = join(REPO, "pkg");
const UI = join(REPO, "tests/browser/ui");
if (!existsSync(join(PKG, "session/branches.js"))) throw new Error("pkg/ has no session/branches.js (run node scripts/build.mjs)");
const { Agent, createAssistantMessageEventStream } = await import(pathToFileURL(join(PKG, "index.js")));
const { attachSession, memoryStore } = await import(pathToFileURL(join(PKG, "session/index.js")));
const { branchesStore } = await import(pathToFileURL(join(PKG, "ui/svelte.js")));

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
let n = 0;
function streamFn(model, context) {
  const s = createAssistantMessageEventStream();
  const partial = { role: "assistant", content: [{ type: "text", text: `answer ${++n}` }], api: "test", provider: "test", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 100 + n };
  queueMicrotask(() => s.push({ type: "done", reason: "stop", message: partial }));
  return s;
}
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ++n });

async function chat() {
  const agent = new Agent({ initialState: { systemPrompt: "test", model: MODEL }, streamFn });
  const session = await attachSession(agent, { id: "ui", store: memoryStore(), tabs: false });
  await agent.prompt(user("one"));
  return { agent, session };
}

test("Svelte: branchesStore gives the points and each new value once", async () => {
  const { session } = await chat();
  const store = branchesStore(session.branches);
  const values = [];
  const off = store.subscribe((v) => values.push(v));
  assert.deepEqual(values, [[]]);
  await session.branches.regenerate(2);
  assert.deepEqual(values.at(-1), [{ index: 2, version: 1, count: 2 }]);
  await session.branches.switchTo(2, 0);
  assert.deepEqual(values.at(-1), [{ index: 2, version: 0, count: 2 }]);
  assert.ok(values.every((v, i) => i === 0 || v !== values[i - 1]), "only new values");
  off();
  await session.branches.switchTo(2, 1);
  assert.equal(values.at(-1).at(0).version, 0, "no value after unsubscribing");
  await session.detach();
});

test("Vue: useBranches is a shallow ref of the points, released with its scope", async () => {
  if (!existsSync(join(UI, "node_modules/vue"))) execFileSync("npm", ["ci", "--prefix", UI, "--no-audit", "--no-fund"], { stdio: "pipe", cwd: REPO });
  const out = mkdtempSync(join(tmpdir(), "branches-vue-"));
  try {
    const { build } = await import("esbuild");
    const file = join(out, "vue.mjs");
    await build({
      stdin: { contents: 'export { useBranches } from "pi-agent-wasm/vue"; export { effectScope, isRef } from "vue";', resolveDir: REPO },
      bundle: true, format: "esm", platform: "node", outfile: file, logLevel: "error",
      alias: { "pi-agent-wasm/vue": join(PKG, "ui/vue.js") }, nodePaths: [join(UI, "node_modules")],
      // The adapter imports pi-agent-wasm's entry only for types; nothing else of pkg/ is bundled.
      define: { "process.env.NODE_ENV": '"production"' },
    });
    const { useBranches, effectScope, isRef } = await import(pathToFileURL(file));
    const { session } = await chat();
    const scope = effectScope();
    const points = scope.run(() => useBranches(session.branches));
    assert.ok(isRef(points));
    assert.deepEqual(points.value, []);
    await session.branches.regenerate(2);
    assert.deepEqual(points.value, [{ index: 2, version: 1, count: 2 }]);
    scope.stop();
    await session.branches.switchTo(2, 0);
    assert.equal(points.value[0].version, 1, "no update after the scope ended");
    await session.detach();
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
