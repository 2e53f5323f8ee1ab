// session.branches in headless Chromium with the real IndexedDB, Web Locks and BroadcastChannel, with an
// Agent and with a WorkerAgent (a real Worker): edit and regenerate keep the earlier version, switchTo moves
// between versions, a real reload keeps them, a second tab sees the same versions as the leading tab and
// follows its switches, and every context the stream function receives is valid for a strict provider
// (branches/stream.mjs turns an invalid one into an error answer, which the tests look for).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");
if (!existsSync(join(PKG, "session/branches.js"))) throw new Error("pkg/ has no session/branches.js (run node scripts/build.mjs)");

let server;
let browser;
before(async () => {
  server = await startStaticServer(
    { "/pkg/": PKG, "/support/": join(REPO, "tests/support"), "/": fileURLToPath(new URL("./branches/", import.meta.url)) },
    { pages: { "/page.html": '<!doctype html><meta charset="utf-8"><title>branches</title><script type="module" src="/page.mjs"></script>' } },
  );
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(context, options) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}/page.html`);
  await page.waitForFunction(() => window.ready === true);
  await page.evaluate((o) => window.setup(o), options);
  return { page, errors };
}
const view = (page) => page.evaluate(() => window.view());
const call = (page, fn, ...args) => page.evaluate(([fn, args]) => window.session.branches[fn](...args.map((a) => (a?.user ? window.user(a.user) : a))), [fn, args]);
const prompt = (page, text) => page.evaluate((t) => window.agent.prompt(window.user(t)), text);

for (const worker of [false, true]) {
  const kind = worker ? "WorkerAgent" : "Agent";
  test(`${kind}: versions survive a real reload, and a second tab agrees on them and follows a switch`, async () => {
    const context = await browser.newContext();
    const id = `branches-${kind}`;
    const first = await open(context, { id, worker });
    await prompt(first.page, "one");
    await prompt(first.page, "look around");
    await call(first.page, "edit", 1, { user: "one, edited" });
    let v = await view(first.page);
    assert.deepEqual(v.texts.slice(0, 1), ["u:one, edited"]);
    assert.deepEqual(v.points, [{ index: 1, version: 1, count: 2 }]);
    await call(first.page, "switchTo", 1, 0);
    v = await view(first.page);
    assert.deepEqual(v.texts.slice(0, 4), ["u:one", v.texts[1], "u:look around", "a:toolUse"]);
    // Regenerate the answer after the tool result: the loop continues from the result.
    await call(first.page, "regenerate", 6);
    v = await view(first.page);
    assert.match(v.texts[5], /^a:after seen$/);
    assert.deepEqual(v.points, [
      { index: 1, version: 0, count: 2 },
      { index: 6, version: 1, count: 2 },
    ]);
    assert.deepEqual(v.errors, [], "every context was valid for a strict provider");
    const shown = v;

    // A second tab follows the first: the same transcript and the same versions.
    const second = await open(context, { id, worker });
    await second.page.waitForFunction((n) => window.view().texts.length === n, shown.texts.length);
    let w = await view(second.page);
    assert.equal(w.leader, false);
    assert.deepEqual(w.texts, shown.texts);
    assert.deepEqual(w.points, shown.points);
    // A switch in the leading tab: the second tab shows it, with the same points.
    await call(first.page, "switchTo", 1, 1);
    v = await view(first.page);
    await second.page.waitForFunction((t) => JSON.stringify(window.view().texts) === t, JSON.stringify(v.texts));
    w = await view(second.page);
    assert.deepEqual(w.points, v.points);
    assert.ok(await second.page.evaluate(() => window.heard > 0), "the following tab's listeners heard the change");
    await assert.rejects(call(second.page, "switchTo", 1, 0), /running in another tab/);
    await second.page.close();

    // A real reload: the same transcript and versions; each version comes back as it was last shown.
    await first.page.reload();
    await first.page.waitForFunction(() => window.ready === true);
    await first.page.evaluate((o) => window.setup(o), { id, worker });
    const r = await view(first.page);
    assert.deepEqual(r.texts, v.texts);
    assert.deepEqual(r.points, v.points);
    await call(first.page, "switchTo", 1, 0);
    assert.deepEqual((await view(first.page)).texts, shown.texts);
    await prompt(first.page, "after the reload");
    const end = await view(first.page);
    assert.deepEqual(end.texts.slice(-2, -1), ["u:after the reload"]);
    assert.deepEqual(end.errors, []);
    assert.deepEqual(first.errors, []);
    await context.close();
  });
}
