// What the README's Chromium examples may use (`<!-- example: chromium; uses: … -->`), in the page and in
// the examples' workers, and the checks run after them. Importing it routes the examples' server
// (https://my-app.example) to the stand-in of tests/support/example-model.mjs, in whichever global it runs.
import { Agent, createAssistantMessageEventStream } from "/pkg/index.js";
import { WorkerAgent } from "/pkg/worker/index.js";
import { attachSession, memoryStore } from "/pkg/session/index.js";
import { exampleStreamFn, routeExampleFetch } from "/support/example-model.mjs";

export { Agent, WorkerAgent, attachSession };

/** What the examples' server was sent (in this global). */
export const requests = routeExampleFetch(globalThis);

export const userSessionToken = "session-123";
export const systemPrompt = "You are a helpful assistant.";
export const model = { id: "claude-sonnet-4-6", name: "Claude Sonnet 4.6", api: "anthropic-messages", provider: "anthropic", baseUrl: "",
  reasoning: true, input: ["text"], cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 8192 };
export const streamFn = exampleStreamFn(createAssistantMessageEventStream);
const tool = (name, description, execute) => ({ name, label: name, description, parameters: { type: "object", properties: {} }, execute });
export const add = {
  ...tool("add", "Add two numbers", async (id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } })),
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
};
export const tools = [add];
export const initialState = { systemPrompt, model, tools };
/** A tool the examples' worker registers. */
export const searchIndex = {
  ...tool("searchIndex", "Search the index", async (id, { query }) => ({ content: [{ type: "text", text: `found ${query}` }], details: {} })),
  parameters: { type: "object", properties: { query: { type: "string" } } },
};
/** The app's markdown component (React): here, the text as it is. */
export const Markdown = ({ children }) => children;
/** The app's markdown renderer: here, the text, escaped. */
export const renderMarkdown = (text) => text.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
/** The props each message's Row was last rendered with, by message. */
export const rowProps = new Map();
/** The app's row of a message (React): its role, and "2/3" for a message with versions. */
export const Row = (props) => {
  rowProps.set(props.message, props);
  return `${props.message.role}${props.versions ? ` ${props.versions.version + 1}/${props.versions.count}` : ""};`;
};
/** A worker's `transformContext`: keeps the context as it is. */
export const trimOldMessages = async (messages) => messages;
/** A worker script whose `serveAgent` streams from the example model. */
export const workerUrl = new URL("./agent-worker.js", import.meta.url);

export let banners = [];
export let asked = [];
export const showBanner = (text) => void banners.push(text);
export const askUser = async (toolCall) => (asked.push(toolCall.id), true);
export const beforeToolCall = async ({ toolCall }) => ((await askUser(toolCall)) ? undefined : { block: true, reason: "denied" });
/** An Agent on the example model, with `tools`, that has answered "Hello!". */
export let agent;
/** For `react-branches`: the session `agent` runs with (in memory). */
export let session;

export async function reset(block) {
  banners = [];
  asked = [];
  requests.length = 0;
  rowProps.clear();
  agent = new Agent({ initialState, streamFn });
  session = block?.check === "react-branches" ? await attachSession(agent, { id: "chat-1", store: memoryStore(), tabs: false }) : undefined;
  await agent.prompt("Hello!");
}

const BLOCKS_TEXT = "# Title\n\nFirst paragraph.\n\n- a list\n";
const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));
const assert = (ok, message) => {
  if (!ok) throw new Error(message);
};
const equal = (got, want, what) => assert(got === want, `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
const until = async (what, ok) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert(ok(), `timed out waiting for ${what}`);
};

/** A WorkerAgent on the example's worker file `name`, proxying to the examples' server. */
const onWorker = (dir, name, options = {}) =>
  new WorkerAgent({ worker: () => new Worker(new URL(name, dir), { type: "module" }), initialState: { systemPrompt, model }, ...options });

/** Checks by name: `(ns, { dir, block, target })`; `ns` holds what the block declares at its top level. */
export const checks = {
  /** The page runs under the README's Content-Security-Policy: the package loads and streams through streamProxy. */
  async csp() {
    let refused = false;
    try {
      (0, eval)("1");
    } catch {
      refused = true;
    }
    assert(refused, "the page is served with the Content-Security-Policy (eval is refused)");
    const { streamProxy } = await import("/pkg/index.js");
    const a = new Agent({ initialState: { systemPrompt, model }, streamFn: (m, c, o) => streamProxy(m, c, { ...o, proxyUrl: "https://my-proxy.example", authToken: userSessionToken }) });
    await a.prompt("Hello!");
    equal(textOf(a.state.messages.at(-1)), "Hello there!", "the answer through streamProxy");
  },
  async "worker-script"(ns, { dir, block }) {
    const a = onWorker(dir, block.arg, { proxy: { proxyUrl: "https://my-app.example", authToken: userSessionToken } });
    await a.prompt("Hello!");
    equal(textOf(a.state.messages.at(-1)), "Hello there!", "the answer streamed in the worker");
    a.terminate();
  },
  async "worker-host"(ns, { dir, block }) {
    const a = onWorker(dir, block.arg);
    await a.prompt("searchIndex pi");
    const result = a.state.messages.find((m) => m.role === "toolResult");
    equal(textOf(result), "found pi", "the worker's tool ran");
    equal(textOf(a.state.messages.at(-1)), "Result: found pi", "the answer");
    a.terminate();
  },
  async "worker-agent"(ns) {
    equal(textOf(ns.agent.state.messages.at(-1)), "Hello there!", "the answer");
    await ns.agent.prompt("add 2 3");
    equal(textOf(ns.agent.state.messages.at(-1)), "Result: 5", "the page's tool ran");
    equal(asked.length, 1, "beforeToolCall asked the user in the page");
    ns.agent.terminate();
  },
  async "worker-session"(ns) {
    equal(ns.session.restored, false, "session.restored");
    await ns.agent.prompt("add 1 2");
    equal(textOf(ns.agent.state.messages.at(-1)), "Result: 3", "the answer");
    await ns.session.detach();
    ns.agent.terminate();
  },
  async react(ns, { target }) {
    const root = ns.mount(target, { agent });
    await agent.prompt("Hello again!");
    ns.unmount(root);
  },
  /** The branches of the session, through the example's Chat: a row per message, "2/2" once a message is edited, a Row's onSwitch. */
  async "react-branches"(ns, { target }) {
    const root = ns.mount(target, { agent, session });
    await until("a row per message", () => target.textContent === "system;user;assistant;");
    await session.branches.edit(1, "Hello again!");
    await until("the edited message's versions", () => target.textContent === "system;user 2/2;assistant;");
    rowProps.get(agent.state.messages[1]).onSwitch(0);
    await until("the first version again", () => target.textContent === "system;user 1/2;assistant;" && textOf(agent.state.messages[1]) === "Hello!");
    ns.unmount(root);
    await session.detach();
  },
  async vue(ns, { target }) {
    const { app, state } = ns.mount(target);
    assert(state.snapshot.value === agent.getSnapshot(), "snapshot.value is the agent's snapshot");
    await agent.prompt("Hello again!");
    await until("the snapshot to follow the agent", () => state.snapshot.value.messages.length === agent.state.messages.length);
    app.unmount();
  },
  /** The React block renderer: one element per block, each block's text rendered by the example's renderBlock. */
  async "react-blocks"(ns, { target }) {
    const root = ns.mount(target, { message: { role: "assistant", content: [{ type: "text", text: BLOCKS_TEXT }] } });
    await until("the blocks", () => target.querySelectorAll("[data-block]").length === 3);
    equal(target.textContent, BLOCKS_TEXT, "the rendered text");
    ns.unmount(root);
  },
  /** The Vue block renderer, mounted as the example's comment shows (with a <p> for its Markdown). */
  async "vue-blocks"(ns, { target }) {
    const app = ns.__vueCreateApp({ render: () => ns.__vueH(ns.TextBlocks, { text: BLOCKS_TEXT, renderBlock: (block) => ns.__vueH("p", block.text) }) });
    app.mount(target);
    await until("the blocks", () => target.querySelectorAll("[data-block]").length === 3);
    equal(target.textContent, BLOCKS_TEXT, "the rendered text");
    app.unmount();
  },
  async "svelte-blocks"(ns, { target }) {
    const component = ns.mount(target, { text: BLOCKS_TEXT });
    await until("the blocks", () => target.querySelectorAll("[data-block]").length === 3);
    equal(target.textContent, BLOCKS_TEXT, "the rendered text");
    ns.unmount(component);
  },
  async svelte(ns, { target }) {
    const component = ns.mount(target);
    await until("a row per message", () => target.textContent === "…".repeat(agent.state.messages.length));
    await agent.prompt("Hello again!");
    await until("a row per message after a prompt", () => target.textContent === "…".repeat(agent.state.messages.length));
    ns.unmount(component);
  },
};
