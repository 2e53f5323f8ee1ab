// pi-agent-wasm/replay in headless Chromium, with a WorkerAgent whose loop runs in a real module
// Worker: a run recorded with an Agent plays on a WorkerAgent, one recorded with a WorkerAgent
// plays on an Agent and on a WorkerAgent, with the same events and transcript (the recorder and
// the playback run in the worker, next to the loop).
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "replay/index.js"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");

test("replay across Agent and WorkerAgent in Chromium", { timeout: 180_000 }, async (t) => {
  const server = await startStaticServer({ "/pkg/": PKG, "/tests/": join(REPO, "tests"), "/t/": fileURLToPath(new URL("./", import.meta.url)) });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/t/page.html`);
    await page.waitForFunction(() => window.ready === true);
    for (const scenario of Object.keys(SCENARIOS)) {
      for (const [record, play] of [["agent", "worker"], ["worker", "agent"], ["worker", "worker"]]) {
        await t.test(`${scenario}: recorded with ${record === "agent" ? "an Agent" : "a WorkerAgent"}, played on ${play === "agent" ? "an Agent" : "a WorkerAgent"}`, async () => {
          const out = await page.evaluate(([s, r, p]) => window.run(s, r, p), [scenario, record, play]);
          assert.equal(out.error, undefined);
          assert.ok(out.requests >= 2);
          assert.deepEqual(out.replayed, out.recorded);
          assert.deepEqual(out.transcript, out.ended);
        });
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
