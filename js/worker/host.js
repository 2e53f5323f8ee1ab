// The worker half of pi-agent-wasm/worker: runs an Agent (its loop, stream
// function and the wasm) inside a dedicated Worker and speaks the protocol of
// protocol.js with the WorkerAgent on the main thread.
//
// Tools and hooks of the main thread are called over the channel; tools,
// hooks and a stream function registered here with `serveAgent` run in the
// worker. Events leave as what changed since the last event, in batches at
// least a frame apart while they stream.
import * as core from "../index.js";
import { TAG, EXPLICIT, HOOKS, Refs, pack, unpack, packError, unpackError } from "./protocol.js";
import { RUN_TOOL_CALL } from "../../src/agent/state.js";

/**
 * Serves the WorkerAgent that created this worker. `setup` is an object, or a
 * function of the main thread's `workerOptions` returning one (or a promise of
 * one), with what runs in the worker: `streamFn`, `tools` (appended to the main
 * thread's, which win on a name clash) and any hook of `AgentOptions` (used
 * when the main thread sets none of that name).
 */
export function serveAgent(setup, scope = globalThis) {
  const refs = new Refs(1);
  let agent;
  let local = {};
  let mainTools = [];
  let waiting = [];
  const calls = new Map();
  let nextCall = 1;
  // Tool calls the page asked to run outside a run (a session's `resume()`), by id: their abort controllers.
  const toolRuns = new Map();
  let batch = [];
  // The batch's runs of text and thinking deltas (see `encodeUpdate`): the text they append, joined into one
  // string at the flush, and per delta the length it appends and the length of its `delta`. One string and
  // one transferred array per post: a string or a number per delta would each cost the page a step of
  // structured-clone reading.
  let texts = [];
  let lens = [];
  // The run being extended (its code and block), the text appended to that block that no delta has covered
  // yet, and the blocks of the streaming message that had a delta. A stream that mutates its partial before
  // the loop reads its events runs ahead of them: the text it ran ahead by is what its next deltas are, so
  // they need not cross again. The page keeps the same state from the same items (index.js, `#deltas`).
  let runCode = 0;
  let runBlock = -1;
  let ahead = "";
  let streamed = new Set();
  let flushScheduled = false;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => flush();
  // Node (serveAgent on a port of its own): this channel must not keep the process alive.
  channel.port1.unref?.();

  const post = (msg) => {
    if (batch.length) flush();
    scope.postMessage({ [TAG]: msg });
  };
  // Each post costs the page a task (about as much as a few hundred deltas): while events keep coming, posts
  // are at least a frame apart. A call into the page, the end of a run and anything else flushes at once.
  const FRAME_MS = 16;
  let lastFlush = -Infinity;
  function flush() {
    flushScheduled = false;
    if (!batch.length) return;
    lastFlush = performance.now();
    const msg = { op: "ev", events: batch };
    batch = [];
    if (lens.length === 0) return void scope.postMessage({ [TAG]: msg });
    msg.text = texts.join("");
    msg.lens = new Uint32Array(lens);
    texts = [];
    lens = [];
    scope.postMessage({ [TAG]: msg }, [msg.lens.buffer]);
  }
  const schedule = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    const wait = lastFlush + FRAME_MS - performance.now();
    if (wait > 0) setTimeout(flush, wait);
    else channel.port2.postMessage(0);
  };
  const queueEvent = (item) => {
    runCode = 0;
    ahead = "";
    batch.push(item);
    schedule();
  };
  /**
   * Adds a text (code 1) or thinking (code 2) delta of block `ci` to a run: the block grew by `appended`
   * (from `before`). Per delta, `lens` gets the length appended and the delta's length, plus EXPLICIT when the
   * delta is not the next part of the text the run ran ahead by and crosses in `text` itself.
   */
  const queueDelta = (code, ci, before, appended, delta) => {
    const first = streamed.size === 0;
    if (runCode !== code || runBlock !== ci) {
      runCode = code;
      runBlock = ci;
      // A block that no delta covered yet (a stream that filled it before its first event) is all ahead.
      ahead = streamed.has(ci) ? "" : before;
    }
    streamed.add(ci);
    const next = ahead === "" ? appended : appended === "" ? ahead : ahead + appended;
    let length = delta.length;
    if (next.startsWith(delta)) ahead = next.length === length ? "" : next.slice(length);
    else {
      ahead = "";
      length += EXPLICIT;
    }
    if (appended !== "") texts.push(appended);
    if (length >= EXPLICIT) texts.push(delta);
    lens.push(appended.length, length);
    const last = batch[batch.length - 1];
    if (last !== undefined && last[0] === code && last[1] === ci) last[2]++;
    else {
      batch.push([code, ci, 1]);
      schedule();
    }
    // The answer's first text goes at the end of this task, not a frame after the last post (its
    // message_start): the first token on screen waits for no timer.
    if (first) {
      flushScheduled = true;
      channel.port2.postMessage(0);
    }
  };

  const mainTool = (name) => mainTools.find((t) => t.name === name) ?? local.tools?.find((t) => t.name === name) ?? { name };

  /** Calls `fn` on the main thread; its signal's abort crosses as a message. */
  function callMain(fn, args, signal, onUpdate) {
    const id = nextCall++;
    return new Promise((resolve, reject) => {
      calls.set(id, { resolve, reject, onUpdate });
      post({ op: "call", id, fn, a: pack(args, refs), s: signal !== undefined });
      if (signal) {
        const abort = () => post({ op: "abortCall", id, reason: cloneable(signal.reason) });
        if (signal.aborted) abort();
        else signal.addEventListener("abort", abort, { once: true });
      }
    });
  }

  const remoteTool = (d) => ({
    ...d,
    execute: (toolCallId, params, signal, onUpdate) => callMain("tool:" + d.name, [toolCallId, params], signal, onUpdate),
  });
  const toolsOf = (decls) => {
    mainTools = decls.map(remoteTool);
    const names = new Set(decls.map((d) => d.name));
    return [...mainTools, ...(local.tools ?? []).filter((t) => !names.has(t.name))];
  };
  const hookOf = (name) => (...args) => {
    const signal = args.at(-1) instanceof AbortSignal ? args.pop() : undefined;
    return callMain(name, args, signal);
  };
  let defaultConvert;
  const hooksOf = (names) => {
    const out = {};
    for (const name of HOOKS) {
      out[name] = names.includes(name) ? hookOf(name) : local[name];
      if (name === "convertToLlm") out[name] ??= defaultConvert;
    }
    return out;
  };
  // The model and thinking level as the main thread knows them: changes the worker's agent makes are posted.
  let known = [];
  const watchModel = () => {
    const s = agent.state;
    if (s.model !== known[0] || s.thinkingLevel !== known[1]) {
      known = [s.model, s.thinkingLevel];
      queueEvent({ s: known });
    }
  };

  // ---- events: what changed since the last one --------------------------------------------
  let mirror; // the streaming message as last sent: top-level fields and its blocks' fields
  const encodeFields = (event, streaming) => {
    const out = [];
    for (const key of Object.keys(event)) {
      const v = event[key];
      // The streaming message changes before the batch is posted: it crosses as it is now.
      const packed = streaming && key === "message" ? refs.enc(v, { ...v, content: mirror.blocks.map((b) => ({ ...b })) })
        : Array.isArray(v) ? ["a", v.map((x) => refs.enc(x))] : encFinal(v);
      out.push(key, packed);
    }
    return out;
  };
  /** The final message when it is the streamed partial itself (providers mutate one object): what changed last. */
  const encFinal = (v) => {
    if (!mirror || v !== mirror.partial || refs.ids.has(v)) return refs.enc(v);
    const { t, n, o } = changes(v, undefined, undefined);
    const id = refs.next;
    refs.next += 2;
    refs.ids.set(v, id);
    refs.objects.set(id, v);
    return ["P", id, t, n, o];
  };
  const startMirror = (message) => {
    streamed = new Set();
    mirror = { top: {}, blocks: [], pcontent: message.content };
    for (const key of Object.keys(message)) if (key !== "content") mirror.top[key] = stamp(message[key]);
    const content = Array.isArray(message.content) ? message.content : [];
    for (const block of content) mirror.blocks.push({ ...block });
  };
  function listener(event) {
    const type = event.type;
    if (type === "message_update" && mirror) {
      const item = encodeUpdate(event);
      if (item) queueEvent(item);
      return;
    }
    watchModel();
    if (type === "message_start") startMirror(event.message);
    queueEvent(encodeFields(event, type === "message_start" && Array.isArray(event.message?.content)));
    if (type === "message_end") mirror = undefined;
  }
  function encodeUpdate(event) {
    const ame = event.assistantMessageEvent;
    const ci = ame?.contentIndex;
    const was = mirror.blocks[ci];
    const before = was === undefined ? undefined : ame.type === "text_delta" ? was.text : was.thinking;
    const { t, n, o } = changes(event.message, ci, ame?.delta);
    const content = Array.isArray(event.message.content) ? event.message.content : [];
    const block = content[ame?.contentIndex];
    // A plain text or thinking delta joins a run of them ([code, contentIndex, count], see `queueDelta`) when
    // nothing else changed but that block's text, by an append.
    const code = ame?.type === "text_delta" ? 1 : ame?.type === "thinking_delta" ? 2 : 0;
    if (code && t.length === 0 && n.length === 0 && typeof ame.delta === "string" && ame.partial === mirror.partial &&
      ame.partial?.content === mirror.pcontent && Object.keys(ame).join() === "type,contentIndex,delta,partial") {
      const key = code === 1 ? "text" : "thinking";
      const appended = o.length === 0 ? "" : o.length === 4 && o[0] === ame.contentIndex && o[1] === key && o[2] === 1 ? o[3] : undefined;
      if (appended !== undefined && typeof before === "string") {
        queueDelta(code, ame.contentIndex, before, appended, ame.delta);
        return undefined;
      }
    }
    if (code) streamed.add(ame.contentIndex);
    const fields = [];
    if (ame && typeof ame === "object") {
      for (const key of Object.keys(ame)) {
        const v = ame[key];
        if (key === "partial") {
          // Whether the partial (and its content array) is a new object since the last event, as some streams make.
          fields.push(key, 1, (v !== mirror.partial ? 1 : 0) | (v?.content !== mirror.pcontent ? 2 : 0));
          mirror.partial = v;
          mirror.pcontent = v?.content;
        } else if (key === "content" && block && (v === block.text || v === block.thinking)) fields.push(key, 2, null);
        else if (key === "toolCall" && v === block) fields.push(key, 3, null);
        else if (v !== null && typeof v === "object") fields.push(key, 4, encFinal(v));
        else fields.push(key, 0, v);
      }
    }
    return { t, n, o, e: fields };
  }
  function changes(message, ci, delta) {
    const top = [];
    for (const key of Object.keys(message)) {
      if (key === "content") continue;
      const s = stamp(message[key]);
      if (s !== mirror.top[key]) {
        mirror.top[key] = s;
        top.push(key, message[key]);
      }
    }
    const content = Array.isArray(message.content) ? message.content : [];
    const added = [];
    const ops = [];
    for (let i = 0; i < content.length; i++) {
      if (i >= mirror.blocks.length) {
        mirror.blocks.push({ ...content[i] });
        added.push({ ...content[i] });
      } else if (ci === undefined || i === ci || i === content.length - 1) {
        diffBlock(mirror.blocks[i], content[i], delta, i, ops);
      }
    }
    return { t: top, n: added, o: ops };
  }

  // ---- requests from the main thread -------------------------------------------------------
  async function init(config) {
    try {
      local = (typeof setup === "function" ? await setup(config.workerOptions) : setup) ?? {};
      const s = config.state;
      const proxy = config.proxy;
      const streamFn = proxy
        ? (model, context, options) => core.streamProxy(model, context, { ...options, ...proxy })
        : local.streamFn;
      agent = new core.Agent({
        ...config.options,
        ...hooksOf(config.hooks),
        ...(streamFn ? { streamFn } : {}),
        initialState: {
          model: s.model,
          thinkingLevel: s.thinkingLevel,
          tools: toolsOf(s.tools).slice(0, s.tools.length),
          messages: s.messages.map((m) => refs.dec(m)),
        },
      });
      // The worker's own tools are declared at the first request (a system message the main thread sees).
      if (local.tools?.length) agent.state.tools = toolsOf(s.tools);
      defaultConvert = agent.convertToLlm;
      known = [agent.state.model, agent.state.thinkingLevel];
      agent.subscribe(listener);
      post({ op: "ready" });
      // Without top-level await the entry loads the wasm in the background: a failure is reported here.
      core.ready?.catch?.((e) => post({ op: "fatal", error: packError(e) }));
    } catch (e) {
      post({ op: "fatal", error: packError(e) });
      return;
    }
    for (const msg of waiting) handle(msg);
    waiting = [];
  }

  function handle(msg) {
    switch (msg.op) {
      case "run": {
        const input = unpack(msg.input, refs, mainTool);
        let run;
        try {
          run = msg.kind === "prompt" ? agent.prompt(...input) : agent.continue();
        } catch (e) {
          run = Promise.reject(e);
        }
        Promise.resolve(run).then(
          () => post({ op: "done", id: msg.id, ok: true }),
          (e) => post({ op: "done", id: msg.id, ok: false, error: packError(e) }),
        );
        break;
      }
      case "ret": {
        const call = calls.get(msg.id);
        if (!call) break;
        calls.delete(msg.id);
        if (msg.tr) {
          refs.dec(msg.tr[0]);
          refs.dec(msg.tr[1]);
          call.resolve(refs.dec(msg.tr[2]));
        } else if (msg.ok) call.resolve(unpack(msg.v, refs, mainTool));
        else call.reject(unpackError(msg.error));
        break;
      }
      case "update":
        calls.get(msg.id)?.onUpdate?.(refs.dec(msg.v));
        break;
      case "runTool": {
        const id = msg.id;
        const controller = new AbortController();
        toolRuns.set(id, controller);
        Promise.resolve()
          .then(() => {
            const [toolCall, assistantMessage] = unpack(msg.input, refs, mainTool);
            return agent[RUN_TOOL_CALL](toolCall, assistantMessage, controller.signal);
          })
          .then((outcome) => post({ op: "toolRan", id, ok: true, v: pack(outcome, refs) }))
          // Its outcome or failure, or why the outcome could not cross: the page's promise always settles.
          .catch((e) => post({ op: "toolRan", id, ok: false, error: packError(e) }))
          .finally(() => toolRuns.delete(id));
        break;
      }
      case "abortTool":
        toolRuns.get(msg.id)?.abort();
        break;
      case "steer":
      case "followUp":
        agent[msg.op](refs.dec(msg.m));
        break;
      case "clear":
        agent[msg.which]();
        break;
      case "abort":
        agent.abort();
        // What the page's calls settled to on the abort: taken before anything can abandon them.
        for (const ret of msg.rets ?? []) handle(ret);
        break;
      case "reset":
        try {
          agent.reset();
        } catch {}
        break;
      case "keep":
        refs.keep(msg.ids);
        post({ op: "kept" });
        break;
      case "set": {
        const v = msg.v;
        if (msg.key === "messages") agent.state.messages = v.map((m) => refs.dec(m));
        else if (msg.key === "tools") agent.state.tools = toolsOf(v);
        else if (msg.key === "hooks") Object.assign(agent, hooksOf(v));
        else if (msg.key === "model" || msg.key === "thinkingLevel") {
          agent.state[msg.key] = v;
          known = [agent.state.model, agent.state.thinkingLevel];
        }
        else agent[msg.key] = v;
        break;
      }
    }
  }

  scope.addEventListener("message", (event) => {
    const msg = event.data?.[TAG];
    if (!msg) return;
    if (msg.op === "init") init(msg.config);
    else if (!agent) waiting.push(msg);
    else handle(msg);
  });
  // The main thread holds its messages until this one: any posted before the listener existed would be lost.
  scope.postMessage({ [TAG]: { op: "hello" } });
}

/** A value for comparing a top-level field with the last one sent (objects such as `usage` change in place). */
function stamp(v) {
  if (v === null || typeof v !== "object") return v;
  try {
    return "\u0000" + JSON.stringify(v);
  } catch {
    return v;
  }
}

const cloneable = (v) => {
  try {
    structuredClone(v);
    return v;
  } catch {
    return String(v);
  }
};

/**
 * Ops that turn the block as last sent (`prev`, updated here) into `next`:
 * `[index, key, 1, suffix]` appends to a string, `[index, key, 2, ops]` patches
 * an object (tool-call arguments) along what changed, `[index, key, 0, value]`
 * sets, `[index, key, 3]` deletes.
 */
const APPEND_ONLY = new Set(["text", "thinking", "partialJson"]);
function diffBlock(prev, next, delta, index, ops) {
  for (const key of Object.keys(next)) {
    const v = next[key];
    const p = prev[key];
    if (v === p) continue;
    prev[key] = v;
    if (typeof v === "string" && typeof p === "string" && typeof delta === "string" && v.length === p.length + delta.length) {
      // The event's delta, appended (trusted by length: comparing the text would make each delta O(text)).
      ops.push(index, key, 1, delta);
    } else if (typeof v === "string" && typeof p === "string" && v.length > p.length && (APPEND_ONLY.has(key) || v.startsWith(p))) {
      // A streamed field grows by appends only; comparing it (a rope of the whole text) would cost O(text).
      ops.push(index, key, 1, v.slice(p.length));
    } else if (isContainer(v) && isContainer(p) && Array.isArray(v) === Array.isArray(p)) {
      const patch = [];
      diffValue(p, v, [], patch);
      ops.push(index, key, 2, patch);
    } else {
      ops.push(index, key, 0, v);
    }
  }
  for (const key of Object.keys(prev)) {
    if (!(key in next)) {
      delete prev[key];
      ops.push(index, key, 3, null);
    }
  }
}

const isContainer = (x) => x !== null && typeof x === "object" &&
  (Array.isArray(x) || Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null);

/** `[path, 0, value]` set, `[path, 1, suffix]` append, `[path, 3]` delete, `[path, 4, length]` truncate. */
function diffValue(prev, next, path, out) {
  if (prev === next) return;
  if (typeof next === "string" && typeof prev === "string" && next.length > prev.length && next.startsWith(prev)) {
    out.push([path, 1, next.slice(prev.length)]);
    return;
  }
  if (isContainer(prev) && isContainer(next) && Array.isArray(prev) === Array.isArray(next)) {
    for (const key of Object.keys(next)) {
      if (!Object.prototype.hasOwnProperty.call(prev, key)) out.push([[...path, key], 0, next[key]]);
      else diffValue(prev[key], next[key], [...path, key], out);
    }
    if (Array.isArray(next)) {
      if (prev.length > next.length) out.push([path, 4, next.length]);
    } else {
      for (const key of Object.keys(prev)) if (!Object.prototype.hasOwnProperty.call(next, key)) out.push([[...path, key], 3]);
    }
    return;
  }
  out.push([path, 0, next]);
}
