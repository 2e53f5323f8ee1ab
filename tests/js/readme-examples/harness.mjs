// What the README's Node examples may use (`<!-- example: node; uses: … -->`) and the checks run after
// them (`check: …`). Every example imports its values from here; `reset()` gives each a fresh set.
// The examples' server (https://my-app.example) and model are tests/support/example-model.mjs.
import assert from "node:assert/strict";
import { exampleStreamFn, routeExampleFetch } from "../../support/example-model.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
const lib = await import(new URL("index.js", PKG));
const sessionEntry = await import(new URL("session/index.js", PKG));
const replayEntry = await import(new URL("replay/index.js", PKG));

export const { Agent } = lib;
export const { attachSession, memoryStore } = sessionEntry;

/** What the examples' server was sent. */
export const requests = routeExampleFetch(globalThis);

// The app's session store route (the README's app/api/sessions/[id]/route.js, made the same way) answers
// `fetch("/api/sessions/…")` as it would in the app's pages.
const APP_TOKEN = "app-token";
let storeHandler;
const fetchBefore = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  if (typeof input !== "string" || !input.startsWith("/api/sessions/")) return fetchBefore(input, init);
  const { createStoreHandler } = await import(new URL("server/index.js", PKG));
  storeHandler ??= createStoreHandler({ authorize: (request) => (request.headers.get("authorization") === `Bearer ${APP_TOKEN}` ? "me" : null) });
  return storeHandler(new Request(new URL(input, "http://app.example"), init));
};
/** What a Next.js page reads from `process.env` (Next inlines NEXT_PUBLIC_ variables in the page's bundle). */
export const process = { env: { NEXT_PUBLIC_APP_TOKEN: APP_TOKEN } };

export const userSessionToken = "session-123";
export const systemPrompt = "You are a helpful assistant.";
export const model = { id: "claude-sonnet-4-6", name: "Claude Sonnet 4.6", api: "anthropic-messages", provider: "anthropic", baseUrl: "",
  reasoning: true, input: ["text"], cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 8192 };
/** The example model as a stream function: checks every context it receives. */
export const streamFn = exampleStreamFn(lib.createAssistantMessageEventStream);
export const add = {
  name: "add", label: "Add", description: "Add two numbers",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  execute: async (id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
};
export const tools = [add];
export const initialState = { systemPrompt, model, tools };

// What the examples did with the values, reset before each.
export let banners = [];
export let downloads = [];
export let asked = [];
/** Shows an error to the user: here, records its text. */
export const showBanner = (text) => void banners.push(text);
/** Saves a file: here, records its text. */
export const download = (text) => void downloads.push(text);
/** What `render` was given (the branches example's listener): each call's points. */
export let rendered = [];
/** The app's render of a session's fork points: here, records them. */
export const render = (points) => void rendered.push(points);
/** Asks the user to approve a tool call: here, approves. */
export const askUser = async (toolCall) => (asked.push(toolCall.id), true);
export const beforeToolCall = async ({ toolCall }) => ((await askUser(toolCall)) ? undefined : { block: true, reason: "denied" });
/** An Agent on the example model, with `tools`, that has not run yet (for `moved-on`: see SETUPS). */
export let agent;
/** For `moved-on`: the session `agent` was restored from, an approval of `add 2 3` waiting. */
export let session;
/** What the dialog of `moved-on`'s agent saw: "asked", then "closed" when its signal aborted. */
export let dialog = [];
/** The JSON text of a recorded run: "Hello!" answered by the example model, from `systemPrompt` and `model`. */
export let logJson;

const until = async (what, ok) => {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), `timed out waiting for ${what}`);
};

/** Values a check needs other than the defaults, made by `reset(block)`. */
const SETUPS = {
  /** A session of two exchanges: [system, user "Hello!", assistant, user "What about Monday?", assistant]. */
  async branches() {
    session = await attachSession(agent, { id: "chat-branches", store: memoryStore(), tabs: false });
    await agent.prompt("Hello!");
    await agent.prompt("What about Monday?");
  },
  /** A page reloaded while beforeToolCall asked about `add 2 3`: `agent` restored from `session`, the call waiting. */
  async "moved-on"() {
    const store = memoryStore();
    const before = new Agent({ initialState: { systemPrompt, model, tools }, streamFn, beforeToolCall: () => new Promise(() => {}) });
    const first = await attachSession(before, { id: "chat-1", store, flushMs: 1, tabs: false });
    const run = before.prompt("add 2 3");
    await until("the approval to be asked", () => before.state.streamingMessage === undefined && before.state.messages.at(-1)?.role === "assistant");
    await first.flush();
    await first.detach();
    before.abort();
    await run;
    agent = new Agent({
      initialState: { systemPrompt, model, tools },
      streamFn,
      beforeToolCall: (context, signal) =>
        new Promise(() => {
          dialog.push("asked");
          signal?.addEventListener("abort", () => dialog.push("closed"), { once: true });
        }),
    });
    session = await attachSession(agent, { id: "chat-1", store, tabs: false });
    assert.deepEqual(session.pendingApprovals.map((p) => p.toolCall.name), ["add"], "the approval waits after the reload");
  },
};

export async function reset(block) {
  banners = [];
  downloads = [];
  asked = [];
  requests.length = 0;
  dialog = [];
  rendered = [];
  session = undefined;
  agent = new Agent({ initialState: { systemPrompt, model, tools }, streamFn });
  await SETUPS[block?.check]?.();
  const recorder = replayEntry.createRecorder();
  const recorded = recorder.attach(new Agent({ initialState: { systemPrompt, model }, streamFn }));
  await recorded.prompt("Hello!");
  logJson = recorder.export();
}

const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));

/** Checks by name: `(ns, block)`, ns holding the names the example declares at its top level. */
export const checks = {
  async ready() {
    await lib.ready;
    assert.deepEqual(banners, [], "ready resolved: no banner");
  },
  async "add-tool"(ns) {
    const a = new Agent({ initialState: { model, tools: [ns.add] }, streamFn });
    await a.prompt("add 2 3");
    const result = a.state.messages.find((m) => m.role === "toolResult");
    assert.equal(result.isError, false);
    assert.equal(textOf(result), "5");
    assert.deepEqual(result.details, { sum: 5 });
    assert.equal(textOf(a.state.messages.at(-1)), "Result: 5");
  },
  async replay(ns) {
    assert.equal(ns.replay.divergence, undefined);
    const plain = (messages) => JSON.parse(JSON.stringify(messages, (k, v) => (k === "timestamp" || k === "durationMs" ? undefined : v)));
    assert.deepEqual(plain(ns.replayed.state.messages), plain(agent.state.messages), "the replay gives the recorded transcript");
  },
  /** The waiting call gets its "moved on" result before the prompt, the dialog closes, the answer follows. */
  "moved-on"() {
    const results = agent.state.messages.filter((m) => m.role === "toolResult");
    assert.equal(results.length, 1);
    assert.equal(results[0].isError, true);
    assert.match(textOf(results[0]), /^Not run: the user sent a new message/);
    // The prompt comes before the dialog shows (at once after resume()), or while it shows: no dialog is left open.
    assert.ok(dialog.length === 0 || JSON.stringify(dialog) === '["asked","closed"]', `the dialog: ${dialog}`);
    assert.equal(textOf(agent.state.messages.at(-1)), "Hello there!");
    assert.deepEqual(session.pendingCalls, []);
  },
  /** The page's session kept by the app's store route: a second agent on the same store restores it. */
  async "http-session"(ns) {
    assert.equal(ns.session.restored, false);
    assert.equal(ns.session.error, undefined);
    await agent.prompt("Hello!");
    await ns.session.flush();
    const again = new Agent({ initialState: { model }, streamFn });
    const store = sessionEntry.httpStore("/api/sessions", { headers: { authorization: `Bearer ${APP_TOKEN}` } });
    const restored = await attachSession(again, { id: "chat-1", store, tabs: false });
    assert.equal(restored.restored, true);
    assert.deepEqual(again.state.messages.map((m) => m.role), agent.state.messages.map((m) => m.role));
    assert.equal(textOf(again.state.messages.at(-1)), "Hello there!");
    await ns.session.detach();
    await restored.detach();
  },
  async session(ns) {
    assert.equal(ns.session.restored, false);
    assert.deepEqual(ns.session.pendingApprovals, []);
    await ns.agent.prompt("add 1 2");
    assert.equal(textOf(ns.agent.state.messages.at(-1)), "Result: 3");
    assert.deepEqual(asked.length, 1, "beforeToolCall asked the user");
    assert.deepEqual(banners, []);
    await ns.session.detach();
  },
  /** The branches example: each step as its comments say, `render` told of the points that followed. */
  async branches(ns) {
    const { branches } = ns;
    const texts = () => agent.state.messages.map((m) => `${m.role}:${textOf(m)}`);
    assert.deepEqual(branches.points, [{ index: 3, version: 0, count: 2 }], "after switchTo(3, 0): version 1 of 2 at message 3");
    assert.equal(textOf(agent.state.messages[3]), "What about Monday?");
    assert.equal(agent.state.messages.length, 5);
    // The points the comment shows, once the edited version is shown again (with its regenerated answer).
    await branches.switchTo(3, 1);
    assert.deepEqual(branches.points, [{ index: 3, version: 1, count: 2 }, { index: 4, version: 1, count: 2 }]);
    assert.equal(textOf(agent.state.messages[3]), "What about Tuesday?");
    assert.deepEqual(rendered.at(-1), branches.points, "render was given the points");
    await branches.switchTo(4, 0);
    assert.deepEqual(texts(), ["system:You are a helpful assistant.", "user:Hello!", "assistant:Hello there!", "user:What about Tuesday?", "assistant:Hello there!"]);
    await session.detach();
  },
  /** The splitter example: what its comments say each line gives. */
  splitter(ns) {
    const { view, title } = ns;
    assert.deepEqual({ ...title }, { key: 0, type: "heading", text: "# Title\n\n" });
    assert.equal(view.groups[0][0], title, "a finished block is the same object in every view");
    assert.equal(view.last.type, "code");
    assert.equal(view.last.lang, "js");
    assert.equal(view.groups.flat().map((b) => b.text).join(""), view.text);
    const first = ns.createTextBlocks().update("# Title\n\nFirst paragraph.\n\nSecond\n");
    assert.equal(first.done, 2);
    assert.equal(first.last.text, "Second\n");
  },
  /** The SQL sample: the tables sessionDatabase creates, column by column (name and type) and their primary keys. */
  async "session-sql"(ns, block) {
    const TYPES = { text: "text", integer: "integer", timestamptz: "timestamp with time zone", boolean: "boolean" };
    const { PGlite } = await import("@electric-sql/pglite");
    const { sessionDatabase } = await import(new URL("server/index.js", PKG));
    const pg = new PGlite();
    try {
      await sessionDatabase(pg).ready();
      const tables = [...block.code.matchAll(/CREATE TABLE (\w+) \(([^]*?), PRIMARY KEY \(([^)]*)\)\);/g)];
      assert.ok(tables.length > 0, "the sample has CREATE TABLE statements");
      for (const [, table, columns, key] of tables) {
        const want = columns.split(",").map((c) => c.trim().split(/\s+/)).map(([name, type]) => [name, TYPES[type] ?? type]);
        const got = (await pg.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position", [table])).rows;
        assert.deepEqual(got.map((r) => [r.column_name, r.data_type]), want, table);
        const pk = (await pg.query(`SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
          WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`, [table])).rows;
        assert.deepEqual(pk.map((r) => r.attname), key.split(",").map((k) => k.trim()), `${table}'s primary key`);
      }
    } finally {
      await pg.close();
    }
  },
  /** The event-flow sample: the events of `agent.prompt("Hello")` on a text answer, one line each. */
  async "event-flow"(ns, block) {
    // Each line names events, comma-separated, each with its fields in braces and a comment after them.
    const sample = block.code
      .split("\n")
      .flatMap((l) => l.replace(/\/\/.*$/, "").replace(/\{[^}]*\}/g, "").split(","))
      .map((name) => name.trim())
      .filter(Boolean);
    const a = new Agent({ initialState: { systemPrompt, model }, streamFn });
    const types = [];
    a.subscribe((e) => void types.push(e.type));
    await a.prompt("Hello");
    // The sample shows one message_update; there is one per stream event.
    const collapsed = types.filter((t, i) => !(t === "message_update" && types[i - 1] === "message_update"));
    assert.deepEqual(collapsed, sample);
  },
};
