// pi-agent-wasm/session in headless Chromium with the real IndexedDB across real page reloads:
// mid-stream, mid-tool, during an approval, with queued steering, a second tab (each with an Agent
// and with a WorkerAgent, whose loop runs in a real Worker); a store that throws; a torn record.
// The page (page.mjs) is served with pkg/ from 127.0.0.1 inside the test.
// Skipped when pkg/ has no session.js.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");
const HERE = fileURLToPath(new URL("./", import.meta.url));
const SUPPORT = fileURLToPath(new URL("../../support/", import.meta.url));
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "session/index.js"))) throw new Error("pkg/ has no session.js (run node scripts/build.mjs)");
const MIME = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm" };

let server;
let base;
let browser;
before(async () => {
  server = http.createServer((req, res) => {
    const path = decodeURIComponent(req.url.split("?")[0]);
    const [root, rest] = path.startsWith("/pkg/") ? [PKG, path.slice(5)] : path.startsWith("/support/") ? [SUPPORT, path.slice(9)] : [HERE, path.slice(1)];
    const file = resolve(root, rest);
    if (!file.startsWith(resolve(root) + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
});

async function open(context, options) {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${base}/page.html`);
  await page.waitForFunction(() => window.ready === true);
  const view = await page.evaluate((o) => window.setup(o), options);
  return { page, view };
}
async function reload(page, options) {
  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  return page.evaluate((o) => window.setup(o), options);
}
const view = (page) => page.evaluate(() => window.view());
const until = (page, fn, arg) => page.waitForFunction(fn, arg, { timeout: 20_000 });
const roles = (v) => v.messages.map((m) => m.role);

// The same reloads with the loop in a Worker: the session lives in the page, on the WorkerAgent.
for (const worker of [false, true]) {
  const name = worker ? "WorkerAgent: " : "";
  const o = (id) => ({ id: worker ? `${id}-worker` : id, worker });

  test(`${name}reload mid-stream: the cut answer is kept, aborted and marked interrupted; the next prompt runs`, async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("mid-stream"));
    await page.evaluate(() => window.run("long story"));
    await until(page, () => window.agent.state.streamingMessage?.content?.[0]?.text.length > 300);
    const v = await reload(page, o("mid-stream"));
    assert.equal(v.restored, true);
    assert.deepEqual(roles(v), ["system", "user", "assistant"]);
    const cut = v.messages[2];
    assert.equal(cut.stopReason, "aborted");
    assert.match(cut.errorMessage, /^Interrupted: the page was closed or reloaded/);
    assert.ok(cut.text.startsWith("word0 word1"), cut.text.slice(0, 40));
    assert.ok(!cut.text.includes("word399"));
    // The stream function (in the worker, for a WorkerAgent) is given the restored transcript.
    await page.evaluate(() => window.run("count"));
    await until(page, () => window.agent.state.messages.length === 5 && !window.agent.state.isStreaming);
    const after = await reload(page, o("mid-stream"));
    assert.deepEqual(after.messages.slice(3).map((m) => [m.role, m.text]), [["user", "count"], ["assistant", "count: 4 messages"]]);
    assert.equal(after.interrupted, false);
    await context.close();
  });

  test(`${name}reload mid-stream while the page's teardown ends the run: the answer is still restored as interrupted`, async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("teardown"));
    await page.evaluate(() => window.run("long story"));
    await until(page, () => window.agent.state.streamingMessage?.content?.[0]?.text.length > 100);
    // As a real page's streamProxy fetch is aborted as the page unloads: the run ends (aborted) after pagehide.
    await page.evaluate(() => (window.abortOnHide = true));
    const v = await reload(page, o("teardown"));
    assert.deepEqual(roles(v), ["system", "user", "assistant"]);
    assert.match(v.messages[2].errorMessage, /^Interrupted: the page was closed or reloaded/);
    assert.equal(v.interrupted, true);
    await context.close();
  });

  test(`${name}reload mid-tool: the running call gets exactly one interrupted result`, async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("mid-tool"));
    await page.evaluate(() => window.run("tool please"));
    await until(page, () => window.agent.state.pendingToolCalls.has("slow-1"));
    await page.waitForTimeout(150); // a write is due within flushMs (100 ms)
    const v = await reload(page, o("mid-tool"));
    assert.deepEqual(roles(v), ["system", "user", "assistant", "toolResult"]);
    assert.equal(v.messages[3].toolCallId, "slow-1");
    assert.equal(v.messages[3].isError, true);
    assert.match(v.messages[3].text, /interrupted before it finished/);
    assert.deepEqual(v.pendingCalls, []);
    // Valid for the next request, and written: a second reload shows the same single result.
    const again = await reload(page, o("mid-tool"));
    assert.deepEqual(roles(again), ["system", "user", "assistant", "toolResult"]);
    await page.evaluate(() => window.run("hi"));
    await until(page, () => window.agent.state.messages.at(-1)?.role === "assistant" && !window.agent.state.isStreaming);
    await context.close();
  });

  test(`${name}reload during an approval: the call is waiting again and resume() asks again`, async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("approval"));
    await page.evaluate(() => window.run("fetch the page"));
    await until(page, () => window.approvals.length === 1);
    const v = await reload(page, o("approval"));
    assert.deepEqual(v.pendingApprovals, ["fetch-1"]);
    assert.deepEqual(roles(v), ["system", "user", "assistant"]);
    await page.evaluate(() => { window.resumed = window.session.resume(); });
    await until(page, () => window.approvals.length === 1);
    // Reloading while it is asked again keeps it pending.
    const v2 = await reload(page, o("approval"));
    assert.deepEqual(v2.pendingApprovals, ["fetch-1"]);
    await page.evaluate(() => { window.resumed = window.session.resume(); });
    await until(page, () => window.approvals.length === 1);
    await page.evaluate(() => window.approvals[0].approve());
    await page.evaluate(() => window.resumed);
    const done = await view(page);
    assert.deepEqual(done.messages.slice(2).map((m) => [m.role, m.text]), [["assistant", "calling"], ["toolResult", "page /about.txt"], ["assistant", "after tools"]]);
    const reloaded = await reload(page, o("approval"));
    assert.deepEqual(reloaded.messages, done.messages);
    await context.close();
  });

  test(`${name}reload during an approval, then a new prompt: the dialog closes, the call is declined, every request is valid`, async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("approval-prompt"));
    await page.evaluate(() => window.run("fetch the page"));
    await until(page, () => window.approvals.length === 1);
    const v = await reload(page, o("approval-prompt"));
    assert.deepEqual(v.pendingApprovals, ["fetch-1"]);
    // The dialog comes back (as the demo does), and the user types something else instead.
    await page.evaluate(() => { window.resumed = window.session.resume(); });
    await until(page, () => window.approvals.length === 1);
    await page.evaluate(() => window.run("what is 2+2?"));
    await until(page, () => window.agent.state.messages.length === 6 && !window.agent.state.isStreaming);
    await page.evaluate(() => window.resumed);
    const done = await view(page);
    assert.deepEqual(done.cancelled, ["fetch-1"]);
    assert.deepEqual(done.messages.slice(2).map((m) => [m.role, m.text]), [
      ["assistant", "calling"],
      ["toolResult", "Not run: the user sent a new message instead of approving this call"],
      ["user", "what is 2+2?"],
      ["assistant", "ok: what is 2+2?"],
    ]);
    await page.evaluate(() => window.session.flush());
    const reloaded = await reload(page, o("approval-prompt"));
    assert.deepEqual(reloaded.messages, done.messages);
    assert.deepEqual(reloaded.pendingCalls, []);
    await context.close();
  });

  // With an Agent, the page writes. (A WorkerAgent's worker writes, and ends with its page; what matters there, an
  // approval written before the page is asked, is in "reload during an approval".)
  if (!worker) test("a write asked for while another is in flight begins at once (a pagehide write would otherwise never start)", async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("in-flight"));
    // Two writes in one task: the second must begin (its IndexedDB transaction made) before the first lands, as
    // a write asked for in pagehide must: the page is gone before the first one's result comes back.
    const begun = await page.evaluate(() => {
      let transactions = 0;
      const transaction = IDBDatabase.prototype.transaction;
      IDBDatabase.prototype.transaction = function (...args) {
        transactions++;
        return transaction.apply(this, args);
      };
      const say = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
      window.agent.state.messages = [...window.agent.state.messages, say("first")];
      window.written = [window.session.flush()];
      const afterFirst = transactions;
      window.agent.state.messages = [...window.agent.state.messages, say("second")];
      window.written.push(window.session.flush());
      IDBDatabase.prototype.transaction = transaction;
      return [afterFirst, transactions];
    });
    assert.deepEqual(begun, [1, 2]);
    await page.evaluate(() => Promise.all(window.written));
    const v = await reload(page, o("in-flight"));
    assert.deepEqual(v.messages.map((m) => m.text).slice(1), ["first", "second"]);
    await context.close();
  });

  test(`${name}reload with queued steering and follow-ups: they are still queued and delivered`, async () => {
    const context = await browser.newContext();
    const { page } = await open(context, o("queues"));
    await page.evaluate(() => window.run("long answer"));
    await until(page, () => window.agent.state.streamingMessage?.content?.[0]?.text.length > 100);
    await page.evaluate(() => {
      window.agent.steer({ role: "user", content: [{ type: "text", text: "steer: shorter" }], timestamp: 1 });
      window.agent.followUp({ role: "user", content: [{ type: "text", text: "follow: thanks" }], timestamp: 2 });
    });
    await page.waitForTimeout(150);
    const v = await reload(page, o("queues"));
    assert.equal(v.hasQueued, true);
    assert.deepEqual(v.queued, ["steer: shorter"]);
    await page.evaluate(() => window.run("go on"));
    await until(page, () => !window.agent.state.isStreaming && window.runs.length === 1 && !window.agent.hasQueuedMessages());
    await page.evaluate(() => Promise.all(window.runs));
    const users = (await view(page)).messages.filter((m) => m.role === "user").map((m) => m.text);
    assert.deepEqual(users, ["long answer", "go on", "steer: shorter", "follow: thanks"]);
    await context.close();
  });

  test(`${name}two tabs: one runs the loop, the other follows and takes over when the first closes`, async () => {
    const context = await browser.newContext();
    const a = await open(context, o("tabs"));
    const b = await open(context, o("tabs"));
    assert.equal(a.view.isLeader, true);
    assert.equal(b.view.isLeader, false);
    const refused = await b.page.evaluate(() => window.agent.prompt("from b").then(() => "ran", (e) => e.message));
    assert.match(refused, /running in another tab/);
    await a.page.evaluate(() => window.run("hello from a"));
    await until(b.page, () => window.agent.state.messages.some((m) => m.role === "assistant"));
    const followed = await view(b.page);
    assert.deepEqual(followed.messages.slice(1).map((m) => [m.role, m.text]), [["user", "hello from a"], ["assistant", "ok: hello from a"]]);
    // While a streams, b shows the answer streaming there; the messages b already showed keep their identity.
    await b.page.evaluate(() => { window.shown = window.agent.state.messages.slice(); });
    await a.page.evaluate(() => window.run("long again"));
    await until(b.page, () => window.session.remoteStreamingMessage?.content?.[0]?.text.length > 100);
    await until(b.page, () => window.agent.state.messages.length === 5);
    const kept = await b.page.evaluate(() => window.shown.map((m, i) => m === window.agent.state.messages[i]));
    assert.deepEqual(kept, [true, true, true]);
    assert.ok((await view(b.page)).messages[4].text.endsWith("word399"));
    await a.page.close();
    await until(b.page, () => window.session.isLeader);
    await b.page.evaluate(() => window.run("now b"));
    await until(b.page, () => window.agent.state.messages.length === 7 && !window.agent.state.isStreaming);
    const c = await open(context, o("tabs"));
    assert.equal(c.view.isLeader, false);
    assert.deepEqual(c.view.messages.map((m) => m.text).slice(5), ["now b", "ok: now b"]);
    await context.close();
  });
}

test("WorkerAgent: the session writes from the worker: the page adds no IndexedDB row while an answer streams, and a reload restores it", async () => {
  const context = await browser.newContext();
  const { page } = await open(context, { id: "in-worker", worker: true });
  // Counts the rows this page (not its worker) adds to IndexedDB from now on.
  await page.evaluate(() => {
    window.pageAdds = 0;
    const add = IDBObjectStore.prototype.add;
    IDBObjectStore.prototype.add = function (...args) {
      window.pageAdds++;
      return add.apply(this, args);
    };
  });
  await page.evaluate(() => window.run("big answer"));
  await until(page, () => window.agent.state.messages.length === 3 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.session.flush());
  assert.equal(await page.evaluate(() => window.pageAdds), 0);
  const rows = await rowLengths(page, "in-worker");
  assert.ok(rows.length > 4, `the answer was written over ${rows.length} rows`);
  const v = await reload(page, { id: "in-worker", worker: true });
  assert.equal(v.dropped, 0);
  assert.equal(await page.evaluate(() => window.agent.state.messages[2].content[0].text === window.BIG), true);
  await context.close();
});

test("WorkerAgent: after its worker is terminated mid-answer, the fresh worker goes on writing the session", async () => {
  const context = await browser.newContext();
  const { page } = await open(context, { id: "fresh-worker", worker: true });
  await page.evaluate(() => window.run("long story"));
  await until(page, () => window.agent.state.streamingMessage?.content?.[0]?.text.length > 100);
  await page.evaluate(() => window.agent.terminate());
  await until(page, () => !window.agent.state.isStreaming);
  await page.evaluate(() => window.run("after the failure"));
  await until(page, () => window.agent.state.messages.length === 5 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.session.flush());
  const before = await view(page);
  assert.deepEqual(before.messages.slice(1).map((m) => [m.role, m.stopReason ?? null]), [
    ["user", null], ["assistant", "error"], ["user", null], ["assistant", "stop"],
  ]);
  const v = await reload(page, { id: "fresh-worker", worker: true });
  assert.deepEqual(v.messages, before.messages);
  assert.deepEqual(v.errors, []);
  await context.close();
});

test("a following tab reads each character of the leader's log once, and shows what the leader has", async () => {
  const context = await browser.newContext();
  const a = await open(context, { id: "follow-once" });
  const b = await open(context, { id: "follow-once", store: "counting" });
  assert.equal(b.view.isLeader, false);
  for (const [i, text] of ["one", "two", "three"].entries()) {
    await a.page.evaluate((t) => window.run(t), text);
    await until(a.page, (n) => window.agent.state.messages.length === n && !window.agent.state.isStreaming, 3 + 2 * i);
    await a.page.evaluate(() => window.session.flush());
    await until(b.page, (n) => window.agent.state.messages.length === n, 3 + 2 * i);
  }
  const logLength = await a.page.evaluate(async () => {
    const { indexedDBStore } = await import("/pkg/session/index.js");
    return (await indexedDBStore({ name: "session-test" }).load("follow-once")).length;
  });
  const readChars = await b.page.evaluate(() => window.readChars);
  // Re-reading the whole log on each of the leader's writes would read its start once per write.
  assert.equal(readChars, logLength);
  assert.deepEqual((await view(b.page)).messages, (await view(a.page)).messages);
  await context.close();
});

test("a store that throws is reported once; the agent keeps working", async () => {
  const context = await browser.newContext();
  const { page } = await open(context, { id: "throwing", store: "throwing", flushMs: 1 });
  await page.evaluate(() => window.run("one"));
  await until(page, () => window.agent.state.messages.length === 3 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.run("two"));
  await until(page, () => window.agent.state.messages.length === 5 && !window.agent.state.isStreaming);
  const v = await view(page);
  assert.deepEqual(v.errors, ["QuotaExceededError: The quota has been exceeded."]);
  assert.equal(v.messages.at(-1).text, "ok: two");
  await context.close();
});

/** The lengths of the IndexedDB rows of session `id`, in order. */
const rowLengths = (page, id) =>
  page.evaluate(async (id) => {
    const db = await new Promise((resolve, reject) => {
      const r = indexedDB.open("session-test");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const all = await new Promise((resolve) => {
      const r = db.transaction("rows").objectStore("rows").getAll(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
      r.onsuccess = () => resolve(r.result);
    });
    db.close();
    return all.map((row) => row.length);
  }, id);

/** Prompts `id` (the page's long answers are chosen by the prompt) in a new context; gives its rows once written. */
async function answerRows(id, flushMs) {
  const context = await browser.newContext();
  const { page } = await open(context, { id, flushMs });
  await page.evaluate((id) => window.run(id), id);
  await until(page, () => window.agent.state.messages.length === 3 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.session.flush());
  return { context, page, rows: await rowLengths(page, id) };
}

test("a 100,000-character answer written over many writes comes back exactly; IndexedDB rows stay small", async () => {
  const { context, page, rows } = await answerRows("big", 20);
  assert.ok(rows.length > 6, `the answer spans writes: ${rows.length} rows`);
  assert.ok(Math.max(...rows) <= 32_000, `rows of ${Math.max(...rows)} characters`);
  const total = rows.reduce((a, b) => a + b, 0);
  assert.ok(total < 100_000 + 100 * rows.length + 2000, `${total} characters stored for a 100,000-character answer`);
  const v = await reload(page, { id: "big" });
  assert.equal(v.dropped, 0);
  assert.equal(v.interrupted, false);
  const same = await page.evaluate(() => {
    const m = window.agent.state.messages[2];
    return m.content.length === 1 && m.content[0].text === window.BIG && m.stopReason === "stop";
  });
  assert.equal(same, true);
  await context.close();
});

test("a 150,000-character answer without characters above U+00FF is written in rows twice as long, and comes back exactly", async () => {
  const { context, page, rows } = await answerRows("latin", 60_000);
  // One byte per character: each row stays under the 64 KiB that Chromium would copy into a Blob.
  assert.ok(Math.max(...rows) > 32_000 && Math.max(...rows) <= 64_000, `rows of ${rows.join(", ")} characters`);
  const v = await reload(page, { id: "latin" });
  assert.equal(v.dropped, 0);
  const same = await page.evaluate(() => window.agent.state.messages[2].content[0].text === window.LATIN);
  assert.equal(same, true);
  await context.close();
});

test("a database of the first layout (rows under an index) is moved to the keyed rows, in order, and keeps growing", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/page.html`);
  const got = await page.evaluate(async () => {
    const req = (r) => new Promise((resolve, reject) => ((r.onsuccess = () => resolve(r.result)), (r.onerror = () => reject(r.error))));
    // Version 1 as the package wrote it: autoIncrement rows { s: id, d: text } and an index on s.
    const open1 = indexedDB.open("session-migrate", 1);
    open1.onupgradeneeded = () => open1.result.createObjectStore("chunks", { autoIncrement: true }).createIndex("session", "s");
    const db1 = await req(open1);
    const t = db1.transaction("chunks", "readwrite");
    for (const [s, d] of [["a", "one "], ["b", "x"], ["a", "two "], ["b", "y"], ["a", "three"]]) t.objectStore("chunks").add({ s, d });
    await new Promise((resolve) => (t.oncomplete = resolve));
    db1.close();
    const { indexedDBStore } = await import("/pkg/session/index.js");
    const store = indexedDBStore({ name: "session-migrate" });
    const before = [await store.load("a"), await store.load("b")];
    await store.append("a", " four");
    await store.replace("b", "z");
    const after = [await store.load("a"), await store.load("b"), await store.load("c")];
    const db2 = await req(indexedDB.open("session-migrate"));
    const layout = { version: db2.version, stores: [...db2.objectStoreNames] };
    db2.close();
    return { before, after, layout };
  });
  assert.deepEqual(got.before, ["one two three", "xy"]);
  assert.deepEqual(got.after, ["one two three four", "z", ""]);
  assert.deepEqual(got.layout, { version: 2, stores: ["rows"] });
  await context.close();
});

test("two stores on one database append to one session in turn (as two tabs do when the leader changes): nothing is lost or overwritten", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/page.html`);
  const got = await page.evaluate(async () => {
    const { indexedDBStore } = await import("/pkg/session/index.js");
    const a = indexedDBStore({ name: "session-turns" });
    const b = indexedDBStore({ name: "session-turns" });
    await a.append("s", "1 ");
    await b.append("s", "2 ");
    await a.append("s", "3 "); // a's next row number is stale: b wrote that row
    await b.append("s", "x".repeat(70_000)); // several rows
    await a.append("s", " 4");
    return [await a.load("s"), await b.load("s")];
  });
  const want = "1 2 3 " + "x".repeat(70_000) + " 4";
  assert.equal(got[0], want);
  assert.equal(got[1], want);
  await context.close();
});

test("a row deleted in the middle of the IndexedDB log: reported, what precedes it restored, the log repaired", async () => {
  const context = await browser.newContext();
  const { page } = await open(context, { id: "deleted-row" });
  for (const [i, text] of ["one", "two", "three"].entries()) {
    await page.evaluate((t) => window.run(t), text);
    await until(page, (n) => window.agent.state.messages.length === n && !window.agent.state.isStreaming, 3 + 2 * i);
    await page.evaluate(() => window.session.flush());
  }
  // The row holding the second prompt goes (as a browser's storage cleanup or a bug might take one).
  const deleted = await page.evaluate(async (id) => {
    const db = await new Promise((resolve, reject) => {
      const r = indexedDB.open("session-test");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const range = IDBKeyRange.bound([id, -Infinity], [id, Infinity]);
    const store = () => db.transaction("rows", "readwrite").objectStore("rows");
    const [rows, keys] = await Promise.all([store().getAll(range), store().getAllKeys(range)].map((r) => new Promise((resolve) => (r.onsuccess = () => resolve(r.result)))));
    const at = rows.findIndex((row) => row.includes('"text":"two"'));
    await new Promise((resolve) => (store().delete(keys[at]).onsuccess = resolve));
    db.close();
    return { at, rows: rows.length };
  }, "deleted-row");
  assert.ok(deleted.at > 0 && deleted.at < deleted.rows - 1, JSON.stringify(deleted));
  const v = await reload(page, { id: "deleted-row" });
  assert.deepEqual(v.messages.map((m) => m.text).slice(1), ["one", "ok: one"]);
  assert.ok(v.dropped > 0);
  assert.equal(v.errors.length, 1);
  assert.match(v.errors[0], /^SessionLogError: session "deleted-row": records? \d+.* missing; restored the records before it/);
  await page.evaluate(() => window.run("four"));
  await until(page, () => window.agent.state.messages.length === 5 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.session.flush());
  const again = await reload(page, { id: "deleted-row" });
  assert.deepEqual(again.messages.map((m) => m.text).slice(1), ["one", "ok: one", "four", "ok: four"]);
  assert.equal(again.dropped, 0);
  assert.deepEqual(again.errors, []);
  await context.close();
});

test("a torn last record loses only that record; restore does not throw and repairs the log", async () => {
  const context = await browser.newContext();
  const { page } = await open(context, { id: "torn" });
  await page.evaluate(() => window.run("first"));
  await until(page, () => window.agent.state.messages.length === 3 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.session.flush());
  // What a tab killed in the middle of a write of a custom store leaves: half a line.
  await page.evaluate(async () => {
    const { indexedDBStore } = await import("/pkg/session/index.js");
    await indexedDBStore({ name: "session-test" }).append("torn", '{"t":"m","m":{"role":"user","content":"lost');
  });
  const v = await reload(page, { id: "torn" });
  assert.ok(v.dropped > 0);
  assert.deepEqual(v.messages.map((m) => m.text).slice(1), ["first", "ok: first"]);
  await page.evaluate(() => window.run("second"));
  await until(page, () => window.agent.state.messages.length === 5 && !window.agent.state.isStreaming);
  await page.evaluate(() => window.session.flush());
  const v2 = await reload(page, { id: "torn" });
  assert.equal(v2.dropped, 0);
  assert.deepEqual(v2.messages.map((m) => m.text).slice(1), ["first", "ok: first", "second", "ok: second"]);
  await context.close();
});
