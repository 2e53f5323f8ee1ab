// Loading of the WebAssembly module without top-level await, so that every
// entry is a synchronous module: Vite's iife workers, `require()` in Node and
// bundlers without async-module support all take it as it is.
//
// The entry calls `start()` at import; the module then compiles in the
// background. Until it is ready, what needs no wasm works at once: an `Agent`
// built now keeps its state, options and queues in JS and gets its wasm core
// when the module is ready (same `state` object); its runs, and the
// low-level functions, wait for the module. The streams `agentLoop` and
// `streamProxy` return are returned at once and fill once it is ready.
import initWasm, * as core from "../pi_agent_wasm.js";
import { agentEventStream, createAssistantMessageEventStream } from "../../src/js/glue.js";
import { agentInit, defineAgent, loopBeforeToolCall, preparedAgents } from "../../src/agent/options.js";
import { RUN_TOOL_CALL, resetState } from "../../src/agent/state.js";
import { markHandled } from "../../src/agent_loop/tools.js";

let loaded = false;
/**
 * Settles when the module is ready: resolves, or rejects with an `Error`
 * naming the module's URL and the reason (an HTTP status, a Content-Security-
 * Policy without `'wasm-unsafe-eval'`, a response that is not WebAssembly).
 * Runs started before it settled, and every one after a failure, settle the
 * same way.
 */
export let ready;
// Agents built before the module was ready, with their JS-side state.
const early = new Map();
const cores = new WeakMap();
// A `setDefaultStreamFn` call made before the module was ready.
let earlyDefault;

/**
 * Starts loading the module: `source` is its bytes (compiled at once, as in
 * Node, where `where` names the file) or its URL (fetched). Called once, by
 * the entry.
 */
export function start(source, where = "the inlined module") {
  if (source instanceof Uint8Array) {
    try {
      core.initSync({ module: source });
      done();
      ready = Promise.resolve();
    } catch (e) {
      ready = Promise.reject(loadError(e, where));
    }
  } else {
    ready = fetchAgain(source, 3)
      .then((response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
        return initWasm({ module_or_path: response }).catch((e) => {
          throw new Error(`${e?.message ?? e} (content-type: ${response.headers.get("content-type")})`, { cause: e });
        });
      })
      .then(done, (e) => {
        throw loadError(e, source);
      });
  }
  // A failed load shows where the app waits (`ready`, a run); an app that
  // never waits is not sent an unhandled rejection.
  markHandled(ready);
}

// A fetch that fails on the network (a connection dropped, a worker started as its page reloads) is
// tried again twice, a little later: the module is fetched once per page, and a failed load fails every
// run of that page. An HTTP error or a bad module is not tried again.
const fetchAgain = (url, tries) =>
  fetch(url).catch((e) => (tries > 1 ? new Promise((r) => setTimeout(r, 250)).then(() => fetchAgain(url, tries - 1)) : Promise.reject(e)));

function done() {
  loaded = true;
  if (earlyDefault) core.setDefaultStreamFn(earlyDefault[0]);
  for (const [agent, js] of early) wake(agent, js);
  early.clear();
}

const loadError = (cause, where) =>
  new Error(`pi-agent-wasm: could not load the WebAssembly module from ${where}: ${cause?.message ?? cause}`, { cause });

// A wrapper keeps the wrapped function's `name` and `length`, as apps and
// tests may read them.
const like = (f, wrapper) => Object.defineProperties(wrapper, { name: { value: f.name }, length: { value: f.length } });

const whenReady = (f) =>
  like(f, function (...args) {
    return loaded ? f.apply(this, args) : ready.then(() => f.apply(this, args));
  });

// The run's stream now; the events once the module is ready. After a failed
// load the stream ends and `result()` rejects with the load error.
const streamWhenReady = (f, make) =>
  like(f, function (...args) {
    if (loaded) return f.apply(this, args);
    const out = make();
    ready
      .then(async () => {
        const from = f.apply(this, args);
        for await (const event of from) out.push(event);
        out.end(await from.result());
      })
      .catch((error) => {
        const result = Promise.reject(error);
        markHandled(result);
        out.result = () => result;
        out.end();
      });
    return out;
  });

export const agentLoop = /* @__PURE__ */ streamWhenReady(core.agentLoop, agentEventStream);
export const agentLoopContinue = /* @__PURE__ */ streamWhenReady(core.agentLoopContinue, agentEventStream);
export const streamProxy = /* @__PURE__ */ streamWhenReady(core.streamProxy, createAssistantMessageEventStream);
export const runAgentLoop = /* @__PURE__ */ whenReady(core.runAgentLoop);
export const runAgentLoopContinue = /* @__PURE__ */ whenReady(core.runAgentLoopContinue);
export const runToolCall = /* @__PURE__ */ whenReady(core.runToolCall);

/** Sets (or, with `undefined`, clears) the stream function used when none is given. */
export function setDefaultStreamFn(streamFn) {
  if (loaded) return core.setDefaultStreamFn(streamFn);
  if (streamFn != null && typeof streamFn !== "function") throw new TypeError("streamFn must be a function");
  earlyDefault = [streamFn ?? undefined];
}

const modeOf = (mode) => (mode === "all" ? "all" : "one-at-a-time");
const peek = (queue, mode) => (mode === "all" ? queue.slice() : queue[0] ? [queue[0]] : []);

/** A stateful agent (see the README); usable as soon as the package is imported. */
export class Agent extends core.Agent {
  constructor(options) {
    if (loaded) {
      super(options);
    } else {
      // Checked and built as the wasm constructor would (options.js `agentInit`);
      // the wasm core takes this same state when the module is ready.
      const init = agentInit(options, earlyDefault?.[0]);
      const agent = Object.create(new.target.prototype);
      agent.__wbg_ptr = 0;
      early.set(agent, { init, steering: [], followUp: [], modes: [modeOf(init[3]), modeOf(init[4])], aborts: 0 });
      return agent;
    }
  }
  /** The seam pi-agent-wasm/session resumes restored tool calls through (src/agent/state.js). */
  [RUN_TOOL_CALL](toolCall, assistantMessage, signal) {
    const { tools, systemPrompt, messages } = this.state;
    return runToolCall(toolCall, {
      tools, assistantMessage, context: { systemPrompt, messages: messages.slice(), tools },
      beforeToolCall: loopBeforeToolCall(this), afterToolCall: this.afterToolCall, signal,
    });
  }
  free() {
    const inner = cores.get(this);
    early.delete(this);
    if (!inner) return super.free();
    cores.delete(this);
    this.__wbg_ptr = 0;
    inner.free();
  }
}

// Gives an early agent its wasm core: built from the same `agentInit` result,
// then the queues and modes set meanwhile. The core object owns the pointer
// (and frees it when collected); the agent shares it.
function wake(agent, js) {
  const token = {};
  preparedAgents.set(token, js.init);
  const inner = new core.Agent(token);
  inner.steeringMode = js.modes[0];
  inner.followUpMode = js.modes[1];
  for (const m of js.steering) inner.steer(m);
  for (const m of js.followUp) inner.followUp(m);
  cores.set(agent, inner);
  agent.__wbg_ptr = inner.__wbg_ptr;
}

// What an early agent does before the module is ready, by member (any other
// getter reads `undefined`: `signal`, as no run has started); any other
// method waits for the module (`prompt`, `continue`, `waitForIdle`).
const GET = {
  state: (js) => js.init[1],
  steeringMode: (js) => js.modes[0],
  followUpMode: (js) => js.modes[1],
};
const SET = {
  steeringMode: (js, mode) => void (js.modes[0] = modeOf(mode)),
  followUpMode: (js, mode) => void (js.modes[1] = modeOf(mode)),
};
const CALL = {
  steer: (js, message) => void js.steering.push(message),
  followUp: (js, message) => void js.followUp.push(message),
  clearSteeringQueue: (js) => void (js.steering = []),
  clearFollowUpQueue: (js) => void (js.followUp = []),
  clearAllQueues: (js) => void (js.steering = js.followUp = []),
  hasQueuedMessages: (js) => js.steering.length > 0 || js.followUp.length > 0,
  peekQueuedMessages: (js) => {
    const steering = peek(js.steering, js.modes[0]);
    return steering.length ? steering : peek(js.followUp, js.modes[1]);
  },
  reset: (js) => {
    resetState(js.init[1]);
    js.steering = js.followUp = [];
  },
  abort: (js) => void js.aborts++,
};
const proto = core.Agent.prototype;
const early_ = (real, local) =>
  like(real, function (...args) {
    const js = this.__wbg_ptr ? undefined : early.get(this);
    if (!js) return real.apply(this, args);
    if (local) return local(js, ...args);
    // An `abort()` after this call (and before the module was ready) aborts
    // the run it starts, as it would have aborted a run already going.
    const aborts = js.aborts;
    // The module's own method, not `this[key]`: a wrapper the app (or a session, a recorder) set
    // on the agent already ran for this call.
    return ready.then(() => {
      const result = real.apply(this, args);
      if (js.aborts !== aborts) proto.abort.call(this);
      return result;
    });
  });
for (const key of Object.getOwnPropertyNames(proto)) {
  if (key === "constructor" || key === "free" || key.startsWith("__")) continue;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  if (d.get) d.get = early_(d.get, GET[key] ?? (() => undefined));
  if (d.set) d.set = early_(d.set, SET[key] ?? (() => {}));
  if (typeof d.value === "function") d.value = early_(d.value, CALL[key]);
  Object.defineProperty(Agent.prototype, key, d);
}
defineAgent(core.Agent);
