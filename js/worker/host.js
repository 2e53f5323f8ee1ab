// The worker half of pi-agent-wasm/worker: runs an Agent (its loop, stream
// function and the wasm) inside a dedicated Worker and speaks the protocol of
// protocol.js with the WorkerAgent on the main thread.
//
// Tools and hooks of the main thread are called over the channel (calls.js);
// tools, hooks and a stream function registered here with `serveAgent` run in
// the worker. Events leave as what changed since the last event (changes.js),
// in batches at least a frame apart while they stream (outbox.js).
import * as core from "../index.js";
import { TAG, HOOKS, Refs, pack, unpack, packError } from "./protocol.js";
import { RUN_TOOL_CALL } from "../../src/agent/state.js";
import { createOutbox } from "./outbox.js";
import { createEventEncoder } from "./changes.js";
import { createCalls } from "./calls.js";
import { workerExtension } from "./extension-halves.js";

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
  // Tool calls the page asked to run outside a run (a session's `resume()`), by id: their abort controllers.
  const toolRuns = new Map();
  const outbox = createOutbox(scope);
  const post = (msg) => outbox.post(msg);
  const mainTool = (name) => mainTools.find((t) => t.name === name) ?? local.tools?.find((t) => t.name === name) ?? { name };
  const calls = createCalls(refs, post, mainTool);

  const toolsOf = (decls) => {
    mainTools = decls.map(calls.tool);
    const names = new Set(decls.map((d) => d.name));
    return [...mainTools, ...(local.tools ?? []).filter((t) => !names.has(t.name))];
  };
  let defaultConvert;
  const hooksOf = (names) => {
    const out = {};
    for (const name of HOOKS) {
      out[name] = names.includes(name) ? calls.hook(name) : local[name];
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
      outbox.event({ s: known });
    }
  };
  const listener = createEventEncoder(refs, outbox, watchModel);

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
      case "ret":
        calls.settle(msg);
        break;
      case "update":
        calls.update(msg);
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
      case "ext":
        workerExtension(msg.name)?.(msg.v, { agent, post: (v) => post({ op: "ext", name: msg.name, v }) });
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
