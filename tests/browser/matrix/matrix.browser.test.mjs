// The combination matrix, end to end in headless Chromium: an Agent and a WorkerAgent (its loop in a real
// Worker), each with a session in the real IndexedDB and a recorder attached (page.mjs), reloaded at each
// moment of a run, then each next action:
//   moments: mid-stream, mid tool-call arguments, mid-tool, approval pending, steering queued, idle
//   actions: prompt, approve, deny, abort, resume(), continue()
// After the action and a last prompt (every waiting call approved):
//   - every request the model received was valid for a strict provider (model.mjs answers an invalid one
//     with an error that would stay in the transcript), and so is the transcript (but for the calls of an answer
//     that failed, which never ran: keptTranscriptProblems);
//   - the restored transcript was valid but for those and the calls waiting for resume();
//   - each run ended with exactly one agent_end, nothing came outside a run, no run is left;
//   - the log exported after the reload replays to the same transcript.
// One browser, one page reused across cases (each case has its own session id).
import assert from "node:assert/strict";
import { test, before, after } from "node:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { keptTranscriptProblems } from "../../support/strict-transcript.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = process.env.PI_BROWSER_PKG_DIR ?? join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "worker/index.js"))) throw new Error("pkg/ is not built (run node scripts/build.mjs)");

const SUBJECTS = ["Agent", "WorkerAgent"];
const ACTIONS = ["prompt", "approve", "deny", "abort", "resume", "continue"];
const STRICT_ERROR = "invalid context for a strict provider";
const WAIT = { timeout: 15_000 };

/** Each moment: starts a run in the page and resolves once the page is at that moment. */
const MOMENTS = {
  "mid-stream": async (page) => {
    await page.evaluate(() => window.prompt("stream"));
    await page.waitForFunction(() => window.agent.state.streamingMessage?.content?.[0]?.text === "part one of the answer", null, WAIT);
  },
  "mid tool-call arguments": async (page) => {
    await page.evaluate(() => window.prompt("args"));
    await page.waitForFunction(() => window.agent.state.streamingMessage?.content?.[1]?.type === "toolCall", null, WAIT);
  },
  "mid-tool": async (page) => {
    await page.evaluate(() => window.prompt("tool"));
    await page.waitForFunction(() => window.agent.state.pendingToolCalls.size === 1, null, WAIT);
  },
  "approval pending": async (page) => {
    await page.evaluate(() => window.prompt("approve"));
    await page.waitForFunction(() => window.approvals.length === 1, null, WAIT);
  },
  "steering queued": async (page) => {
    await page.evaluate(() => window.prompt("tool"));
    await page.waitForFunction(() => window.agent.state.pendingToolCalls.size === 1, null, WAIT);
    await page.evaluate(() => window.agent.steer({ role: "user", content: [{ type: "text", text: "steered" }], timestamp: 1 }));
  },
  idle: async (page) => {
    await page.evaluate(() => window.prompt("idle"));
    await page.waitForFunction(() => window.idle() && window.agent.state.messages.length === 3, null, WAIT);
  },
};

let server;
let browser;
let page;
before(async () => {
  server = await startStaticServer({ "/pkg/": PKG, "/support/": join(REPO, "tests/support"), "/m/": fileURLToPath(new URL("./", import.meta.url)) }, {
    pages: { "/m/page.html": '<!doctype html><meta charset="utf-8"><title>matrix</title><script type="module" src="/m/page.mjs"></script>' },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  page = await (await browser.newContext()).newPage();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function load(options) {
  await page.waitForFunction(() => window.ready === true, null, WAIT);
  return page.evaluate((o) => window.setup(o), options);
}
/** Waits until every run ended; a run that does not is a hang (the page's view says where it is). */
async function settle(what) {
  try {
    await page.waitForFunction(() => window.idle(), null, WAIT);
  } catch {
    const v = await page.evaluate(() => window.view());
    assert.fail(`${what} did not end: ${JSON.stringify({ shown: v.shown, runs: v.runs, pendingToolCalls: v.pendingToolCalls, approvals: v.approvals })}`);
  }
}
const shown = (v) => v.shown.join(" | ");

let n = 0;
for (const subject of SUBJECTS) {
  for (const [moment, reach] of Object.entries(MOMENTS)) {
    for (const action of ACTIONS) {
      test(`${subject}: reload ${moment}, then ${action}`, async () => {
        const id = `matrix-${process.pid}-${n++}`;
        const options = { id, worker: subject === "WorkerAgent" };
        const problems = [];
        await page.goto(`${server.url}/m/page.html`);
        await load(options);
        await reach(page);
        // What the page has written is in the store (as a reload's pagehide would write it).
        await page.evaluate(() => window.session.flush());
        const cut = await page.evaluate(() => window.view());
        problems.push(...cut.problems.map((p) => `before the reload: ${p}`));

        await page.reload();
        const restored = await load(options);
        for (const p of keptTranscriptProblems(restored.messages)) problems.push(`the restored transcript: ${p} [${shown(restored)}]`);

        await page.evaluate((a) => window.act(a), action);
        await settle(action);
        // The last prompt: every waiting call is approved; a prompt refused while calls wait is followed by resume().
        await page.evaluate(() => {
          window.autoDecide = true;
          window.prompt("final");
        });
        await settle("the last prompt");
        let v = await page.evaluate(() => window.view());
        if (v.runs.at(-1).error !== undefined) {
          await page.evaluate(() => window.start("session.resume()", () => window.session.resume()));
          await settle("resume() after the refused prompt");
          await page.evaluate(() => window.prompt("final"));
          await settle("the last prompt after resume()");
          v = await page.evaluate(() => window.view());
        }
        problems.push(...v.problems);
        for (const m of v.messages) if (m.errorMessage?.startsWith(STRICT_ERROR)) problems.push(`the model was sent an invalid context: ${m.errorMessage}`);
        for (const p of keptTranscriptProblems(v.messages, { running: false })) problems.push(`the final transcript: ${p} [${shown(v)}]`);
        if (v.counts.starts !== v.counts.ends) problems.push(`${v.counts.starts} runs started, ${v.counts.ends} agent_end`);
        const last = v.messages.at(-1);
        if (last?.role !== "assistant" || last.content?.[0]?.text !== "ok: final") problems.push(`the last prompt was not answered: [${shown(v)}]`);

        // The run exported after the reload replays to this transcript.
        const after = await page.evaluate(() => window.recorder?.export());
        if (after !== undefined) {
          const r = await page.evaluate((log) => window.replay(log), after);
          if (r.error) problems.push(`the log after the reload: ${r.error}`);
          else if (JSON.stringify(r.messages) !== JSON.stringify(v.messages)) problems.push(`the log after the reload replays to another transcript: ${JSON.stringify(r.messages.map((m) => m.role))}`);
        }
        assert.deepEqual(problems, [], `restored: [${shown(restored)}]; at the end: [${shown(v)}]`);
      });
    }
  }
}
