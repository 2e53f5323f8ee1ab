// The session log's integrity, in Node on pkg/: clear() then a reload restores the agent as
// configured; a record missing or damaged in the middle of the log is found, reported through
// `dropped` and `onError`, and what precedes it restored; every write names the length of the log
// it extends (a store that checks it never sees a stale one).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { assertStrictContext } from "../../support/strict-transcript.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
// A missing build fails the tests instead of skipping them.
if (!existsSync(new URL("session/index.js", PKG))) throw new Error("pkg/ has no session/index.js (run node scripts/build.mjs)");
const { Agent, createAssistantMessageEventStream } = await import(new URL("index.js", PKG));
const { attachSession, memoryStore, SessionLogError } = await import(new URL("session/index.js", PKG));

const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));

const contexts = [];
/** Answers "ok: <the last user text>", after checking the context as a strict provider would. */
function streamFn(model, context) {
  assertStrictContext(context);
  contexts.push(context.messages.slice());
  const s = createAssistantMessageEventStream();
  const text = `ok: ${textOf(context.messages.at(-1))}`;
  const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 1 };
  queueMicrotask(() => {
    s.push({ type: "start", partial });
    partial.content.push({ type: "text", text });
    s.push({ type: "text_start", contentIndex: 0, partial });
    s.push({ type: "text_delta", contentIndex: 0, delta: text, partial });
    s.push({ type: "text_end", contentIndex: 0, content: text, partial });
    s.push({ type: "done", reason: "stop", message: partial });
  });
  return s;
}
const agent = () => new Agent({ initialState: { systemPrompt: "You are a test.", model: MODEL, thinkingLevel: "low" }, streamFn });
const shape = (a) => a.state.messages.map((m) => `${m.role}:${textOf(m)}`);

test("clear() on a fresh session, then a reload: the agent is as configured, system prompt included, and its next request has it", async () => {
  const store = memoryStore();
  const a = agent();
  const sa = await attachSession(a, { id: "cleared", store, tabs: false });
  await sa.clear();
  const b = agent();
  const sb = await attachSession(b, { id: "cleared", store, tabs: false });
  assert.equal(sb.restored, false, "a cleared log holds no session");
  assert.deepEqual(shape(b), ["system:You are a test."]);
  assert.equal(b.state.systemPrompt, "You are a test.");
  contexts.length = 0;
  await b.prompt("hi");
  assert.equal(contexts[0][0].role, "system");
  await sb.flush();
  // And that conversation is the log's from then on.
  const c = agent();
  await attachSession(c, { id: "cleared", store, tabs: false });
  assert.deepEqual(shape(c), ["system:You are a test.", "user:hi", "assistant:ok: hi"]);
});

test("clear() after a conversation: the agent keeps it until its next change is written; reset() writes the reset transcript", async () => {
  const store = memoryStore();
  const a = agent();
  const sa = await attachSession(a, { id: "clear-later", store, tabs: false });
  await a.prompt("one");
  await sa.clear();
  assert.deepEqual(shape(a).length, 3, "the agent keeps its state");
  const fresh = agent();
  await attachSession(fresh, { id: "clear-later", store: { ...store, append: async () => {}, replace: async () => {} }, tabs: false });
  assert.deepEqual(shape(fresh), ["system:You are a test."], "the log held nothing more");
  await a.prompt("two");
  await sa.flush();
  const b = agent();
  await attachSession(b, { id: "clear-later", store, tabs: false });
  assert.deepEqual(shape(b), shape(a), "the next write wrote the whole transcript again");
  a.reset();
  await sa.flush();
  const c = agent();
  await attachSession(c, { id: "clear-later", store, tabs: false });
  assert.deepEqual(shape(c), ["system:You are a test."]);
});

/** Runs three exchanges in a session `id` of `store`; gives the log's text. */
async function threeExchanges(store, id) {
  const a = agent();
  const s = await attachSession(a, { id, store, tabs: false });
  for (const text of ["one", "two", "three"]) {
    await a.prompt(text);
    await s.flush();
  }
  await s.detach();
  return store.load(id);
}

test("a record missing in the middle of the log: reported through dropped and onError, what precedes it restored, the log repaired", async () => {
  const store = memoryStore();
  const text = await threeExchanges(store, "gap");
  // The record of the second prompt deleted, as a deleted row of a store would.
  const line = text.split("\n").findIndex((l) => l.includes('"text":"two"') && l.includes('"role":"user"'));
  assert.ok(line > 0);
  const lines = text.split("\n");
  const gone = lines.splice(line, 1)[0];
  await store.replace("gap", lines.join("\n"));
  const errors = [];
  const b = agent();
  const sb = await attachSession(b, { id: "gap", store, tabs: false, onError: (e) => errors.push(e) });
  assert.deepEqual(shape(b), ["system:You are a test.", "user:one", "assistant:ok: one"]);
  assert.equal(sb.restored, true);
  assert.equal(sb.dropped, lines.slice(line).join("\n").length);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof SessionLogError);
  const n = JSON.parse(gone).i;
  assert.equal(errors[0].message, `session "gap": record ${n} is missing; restored the records before it (${sb.dropped} characters dropped)`);
  assert.equal(sb.error, undefined, "the session keeps writing");
  await b.prompt("four");
  await sb.flush();
  const c = agent();
  const again = [];
  const sc = await attachSession(c, { id: "gap", store, tabs: false, onError: (e) => again.push(e) });
  assert.deepEqual(shape(c), [...shape(b)]);
  assert.equal(sc.dropped, 0);
  assert.deepEqual(again, []);
});

test("a line that does not parse in the middle of the log is damage: reported, what precedes it restored", async () => {
  const store = memoryStore();
  const text = await threeExchanges(store, "garbled");
  const lines = text.split("\n");
  const line = lines.findIndex((l) => l.includes('"text":"two"') && l.includes('"role":"user"'));
  lines[line] = lines[line].slice(0, 12) + "\u0000" + lines[line].slice(13);
  await store.replace("garbled", lines.join("\n"));
  const errors = [];
  const b = agent();
  const sb = await attachSession(b, { id: "garbled", store, tabs: false, onError: (e) => errors.push(e.message) });
  assert.deepEqual(shape(b), ["system:You are a test.", "user:one", "assistant:ok: one"]);
  assert.ok(sb.dropped > 0);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^session "garbled": record \d+ is damaged; restored the records before it/);
});

test("every write names the length of the log it extends (clear() none): a store that checks it never sees a stale one", async () => {
  const inner = memoryStore();
  const seen = [];
  const check = async (op, id, length) => {
    const have = (await inner.load(id)).length;
    seen.push([op, length, have]);
    if (length !== undefined && length !== have) {
      const err = new Error(`stale write: extends ${length}, the log has ${have}`);
      err.name = "SessionConflictError";
      throw err;
    }
  };
  const store = {
    load: (id) => inner.load(id),
    clear: (id) => inner.clear(id),
    append: async (id, text, options) => (await check("append", id, options?.length), inner.append(id, text)),
    replace: async (id, text, options) => (await check("replace", id, options?.length), inner.replace(id, text)),
  };
  const errors = [];
  const onError = (e) => errors.push(`${e.name}: ${e.message}`);
  const a = agent();
  const sa = await attachSession(a, { id: "checked", store, flushMs: 1, tabs: false, onError });
  await a.prompt("one");
  await sa.flush();
  // A torn tail, repaired by the next restore (a replace of the whole log, then appends).
  await inner.append("checked", '{"i":99,"t":"m","m":{"role":"user"');
  const b = agent();
  const sb = await attachSession(b, { id: "checked", store, flushMs: 1, tabs: false, onError });
  assert.ok(sb.dropped > 0);
  await b.prompt("two");
  await sb.clear();
  await b.prompt("three");
  await sb.flush();
  assert.deepEqual(errors, []);
  assert.ok(seen.length >= 6, `${seen.length} writes checked`);
  // Every write names a length, but clear()'s, which empties the log whatever it holds.
  assert.deepEqual(seen.filter(([, length]) => length === undefined).map(([op]) => op), ["replace"]);
});
