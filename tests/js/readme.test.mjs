// The README's quick start (its page), read from README.md and run as written in Node against a local proxy
// server that answers POST /api/stream with a scripted SSE response.
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startSseServer } from "../support/sse-server.mjs";

/** The README's quick start: the first js block after "## Quick start", with `export { agent }` added to read it. */
function quickStartBlock() {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("## Quick start"));
  const m = /```js\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error("README.md has no js block under ## Quick start");
  return `${m[1]}\nexport { agent };\n`;
}

const usage = { input: 5, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

test("the README quick start streams text through streamProxy", { timeout: 20000 }, async () => {
  const srv = await startSseServer({
    "/api/stream": {
      lines: [
        { type: "start" },
        { type: "text_start", contentIndex: 0 },
        { type: "text_delta", contentIndex: 0, delta: "Hello" },
        { type: "text_delta", contentIndex: 0, delta: " there!" },
        { type: "text_end", contentIndex: 0 },
        { type: "done", reason: "stop", usage },
      ],
      chunking: 7,
    },
  });
  const output = { textContent: "" };
  const dir = mkdtempSync(join(tmpdir(), "readme-quick-start-"));
  try {
    // The README's block, as written: only the package's name is mapped to pkg/, and the page's globals
    // (`document`, `location`) are this test's.
    const source = quickStartBlock().replace(/from "pi-agent-wasm"/g, `from ${JSON.stringify(new URL("../../pkg/index.js", import.meta.url).href)}`);
    writeFileSync(join(dir, "page.mjs"), source);
    globalThis.location = { origin: srv.url };
    globalThis.document = { querySelector: (selector) => (selector === "#answer" ? output : null) };
    const { agent } = await import(pathToFileURL(join(dir, "page.mjs")).href + "?export");
    assert.equal(output.textContent, "Hello there!");
    const last = agent.state.messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "stop");
    assert.deepEqual(last.usage, usage);
    const request = srv.requests.find((r) => r.method === "POST");
    assert.equal(request.headers.authorization, "Bearer session-123");
    assert.equal(request.body.model.id, "claude-sonnet-4-6");
    assert.deepEqual(request.body.context.messages.map((m) => m.role), ["system", "user"]);
    assert.equal(request.body.options.apiKey, undefined, "no key ever leaves the page");
  } finally {
    delete globalThis.location;
    delete globalThis.document;
    rmSync(dir, { recursive: true, force: true });
    await srv.close();
  }
});
