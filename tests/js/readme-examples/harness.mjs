// What the README's Node examples may use (`<!-- example: node; uses: … -->`) and the checks run after
// them (`check: …`). Every example imports its values from here; `reset()` gives each a fresh set.
// The examples' server (https://my-app.example) and model are tests/support/example-model.mjs.
import assert from "node:assert/strict";
import { exampleStreamFn, routeExampleFetch } from "../../support/example-model.mjs";

const PKG = new URL("../../../pkg/", import.meta.url);
const lib = await import(new URL("index.js", PKG));
const session = await import(new URL("session/index.js", PKG));
const replayEntry = await import(new URL("replay/index.js", PKG));

export const { Agent } = lib;
export const { attachSession, memoryStore } = session;

/** What the examples' server was sent. */
export const requests = routeExampleFetch(globalThis);

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
export let output = { textContent: "" };
/** Shows an error to the user: here, records its text. */
export const showBanner = (text) => void banners.push(text);
/** Saves a file: here, records its text. */
export const download = (text) => void downloads.push(text);
/** Asks the user to approve a tool call: here, approves. */
export const askUser = async (toolCall) => (asked.push(toolCall.id), true);
export const beforeToolCall = async ({ toolCall }) => ((await askUser(toolCall)) ? undefined : { block: true, reason: "denied" });
/** An Agent on the example model, with `tools`, that has not run yet. */
export let agent;
/** The JSON text of a recorded run: "Hello!" answered by the example model, from `systemPrompt` and `model`. */
export let logJson;

export async function reset() {
  banners = [];
  downloads = [];
  asked = [];
  output = { textContent: "" };
  requests.length = 0;
  agent = new Agent({ initialState: { systemPrompt, model, tools }, streamFn });
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
  "quick-start"(ns) {
    assert.equal(output.textContent, "Hello there!");
    const last = ns.agent.state.messages.at(-1);
    assert.equal(last.stopReason, "stop");
    assert.equal(requests.length, 1);
    assert.equal(requests[0].url, "https://my-app.example/api/stream");
    assert.equal(requests[0].headers.authorization, "Bearer session-123");
    assert.deepEqual(requests[0].body.context.messages.map((m) => m.role), ["system", "user"]);
    assert.equal(requests[0].body.options.apiKey, undefined, "no key leaves the page");
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
    assert.ok(ns.recorder.log().pi === "replay");
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
  /** The event-flow sample: the events of `agent.prompt("Hello")` on a text answer, one line each. */
  async "event-flow"(ns, block) {
    const sample = block.code.split("\n").map((l) => l.trim().split(/\s+/)[0]).filter(Boolean);
    const a = new Agent({ initialState: { systemPrompt, model }, streamFn });
    const types = [];
    a.subscribe((e) => void types.push(e.type));
    await a.prompt("Hello");
    // The sample shows one message_update; there is one per stream event.
    const collapsed = types.filter((t, i) => !(t === "message_update" && types[i - 1] === "message_update"));
    assert.deepEqual(collapsed, sample);
  },
};
