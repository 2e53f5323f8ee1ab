// Shared by the React and the Svelte page: the agent, the scripted 2,000-delta stream, and the counters.
import { Agent, createAssistantMessageEventStream } from "pi-agent-wasm";

export const T = window.__T;
export const DELTAS = 2000;

// Rows are keyed by message object; ids only label them in the DOM and the counters.
const ids = new WeakMap();
let nextId = 0;
export const idOf = (message) => {
  let id = ids.get(message);
  if (id === undefined) ids.set(message, (id = `m${nextId++}`));
  return id;
};
export const textOf = (message) =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((c) => (c.type === "text" ? c.text : c.type === "thinking" ? c.thinking : `[${c.type}]`)).join("");

// ---- counters ----------------------------------------------------------------------------
T.rowRenders = {}; // row id -> renders (React: component body runs; Svelte: per-row effect runs)
T.streamRenders = []; // one entry per streaming-row render: the frame it happened in
T.rowRender = (id) => {
  T.rowRenders[id] = (T.rowRenders[id] ?? 0) + 1;
};
T.streamRender = () => {
  T.streamRenders.push(T.frameIndex);
};
// DOM mutations inside each row (an independent check that finished rows are left alone).
T.rowMutations = {};
const observe = (root) =>
  new MutationObserver((records) => {
    for (const r of records) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const row = el?.closest("[data-row-id]");
      if (row) T.rowMutations[row.dataset.rowId] = (T.rowMutations[row.dataset.rowId] ?? 0) + 1;
    }
  }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });

const nextFrame = () => new Promise((r) => requestAnimationFrame(r));

// ---- the agent ---------------------------------------------------------------------------
const MODEL = {
  id: "scripted",
  name: "Scripted",
  api: "scripted",
  provider: "scripted",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000,
  maxTokens: 1000,
};
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const assistant = (text, timestamp) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: MODEL.api,
  provider: MODEL.provider,
  model: MODEL.id,
  usage: usage(),
  stopReason: "stop",
  timestamp,
});

export const deltaText = (i) => `w${i} `;
export const EXPECTED_TEXT = Array.from({ length: DELTAS }, (_, i) => deltaText(i)).join("");

/**
 * The scripted stream: 2,000 text deltas, one per MessageChannel task, with a timer pause every 25 deltas,
 * so the run spans many animation frames and several deltas land in most frames.
 */
function scriptedStream(model) {
  const stream = createAssistantMessageEventStream();
  const channel = new MessageChannel();
  let wake;
  channel.port1.onmessage = () => wake();
  const task = () => new Promise((r) => ((wake = r), channel.port2.postMessage(0)));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const at = Date.now();
  const partial = (text) => ({ ...assistant(text, at), model: model.id, content: text === null ? [] : [{ type: "text", text }] });
  (async () => {
    await task();
    T.streamStartFrame = T.frameIndex;
    stream.push({ type: "start", partial: partial(null) });
    stream.push({ type: "text_start", contentIndex: 0, partial: partial("") });
    let text = "";
    for (let i = 0; i < DELTAS; i++) {
      const delta = deltaText(i);
      text += delta;
      stream.push({ type: "text_delta", contentIndex: 0, delta, partial: partial(text) });
      if (i % 25 === 24) await sleep(4);
      else await task();
    }
    stream.push({ type: "text_end", contentIndex: 0, content: text, partial: partial(text) });
    stream.push({ type: "done", reason: "stop", message: partial(text) });
    T.streamEndFrame = T.frameIndex;
  })();
  return stream;
}

export function createAgent() {
  const messages = [];
  for (let i = 0; i < 4; i++) {
    messages.push({ role: "user", content: `question ${i}`, timestamp: 1000 + 2 * i });
    messages.push(assistant(`answer ${i}`, 1001 + 2 * i));
  }
  return new Agent({ initialState: { systemPrompt: "You are scripted.", model: MODEL, messages }, streamFn: scriptedStream });
}

/** Mounts the app (via `mountApp(agent, target)`), runs one prompt through the stream, returns the counts. */
export async function run(mountApp, coalesce) {
  const agent = createAgent();
  const target = document.getElementById("app");
  observe(target);
  mountApp(agent, target);
  await nextFrame();
  await nextFrame();
  const history = agent.getSnapshot().messages.map(idOf);
  const before = { ...T.rowRenders };
  for (const id of history) T.rowMutations[id] = 0;
  const mountedRows = target.querySelectorAll("[data-row-id]").length;

  // A rAF ticker so every frame of the run is numbered, whether or not the package asked for it.
  let ticking = true;
  const tick = () => ticking && requestAnimationFrame(tick);
  requestAnimationFrame(tick);
  await nextFrame();
  T.streamRenders = [];
  const startFrame = T.frameIndex;
  const started = performance.now();
  await agent.prompt("go");
  await nextFrame();
  await nextFrame();
  const endFrame = T.frameIndex;
  ticking = false;
  const ms = performance.now() - started;

  const perFrame = {};
  for (const f of T.streamRenders) perFrame[f] = (perFrame[f] ?? 0) + 1;
  const final = agent.state.messages.at(-1);
  const rows = [...target.querySelectorAll("[data-row-id]")];
  return {
    coalesce,
    ms,
    frames: endFrame - startFrame,
    streamFrames: T.streamEndFrame - T.streamStartFrame,
    rafCallbacks: T.rafCallbacks,
    streamRenders: T.streamRenders.length,
    maxRendersInOneFrame: Math.max(0, ...Object.values(perFrame)),
    framesWithStreamRender: Object.keys(perFrame).length,
    mountedRows,
    history: history.map((id) => ({ id, rendersBefore: before[id] ?? 0, rendersAfter: T.rowRenders[id] ?? 0, mutations: T.rowMutations[id] ?? 0 })),
    rowRenders: { ...T.rowRenders },
    rows: rows.map((el) => ({ id: el.dataset.rowId, text: el.textContent })),
    streamingRowLeft: target.querySelectorAll("[data-streaming]").length,
    finalId: idOf(final),
    finalRole: final.role,
    finalText: textOf(final),
    expectedText: EXPECTED_TEXT,
    messageCount: agent.state.messages.length,
    isStreaming: agent.state.isStreaming,
  };
}
