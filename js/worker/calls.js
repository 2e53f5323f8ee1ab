// Calls from the worker into the page (host.js): the page's tools and hooks become functions of
// the worker's agent that post a call (a request with an id) and settle with the page's answer.
// Their AbortSignal's abort crosses as a message of its own.
import { pack, unpack, unpackError } from "./protocol.js";

/**
 * The worker's calls into the page: objects cross as `refs`, messages go out through `post`, and
 * `toolNamed(name)` gives the worker's tool object for a name in an answer.
 */
export function createCalls(refs, post, toolNamed) {
  const calls = new Map();
  let nextCall = 1;

  /** Calls `fn` on the main thread; its signal's abort crosses as a message. */
  function call(fn, args, signal, onUpdate) {
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

  return {
    /** A tool of the page, from its declaration: `execute` runs it in the page. */
    tool: (d) => ({
      ...d,
      execute: (toolCallId, params, signal, onUpdate) => call("tool:" + d.name, [toolCallId, params], signal, onUpdate),
    }),
    /** A hook of the page, `name` of `AgentOptions`. */
    hook: (name) => (...args) => {
      const signal = args.at(-1) instanceof AbortSignal ? args.pop() : undefined;
      return call(name, args, signal);
    },
    /** The page's answer to a call (`ret`): a tool's result keeps the identity of its content and details. */
    settle(msg) {
      const c = calls.get(msg.id);
      if (!c) return;
      calls.delete(msg.id);
      if (msg.tr) {
        refs.dec(msg.tr[0]);
        refs.dec(msg.tr[1]);
        c.resolve(refs.dec(msg.tr[2]));
      } else if (msg.ok) c.resolve(unpack(msg.v, refs, toolNamed));
      else c.reject(unpackError(msg.error));
    },
    /** A tool's `onUpdate` in the page. */
    update(msg) {
      calls.get(msg.id)?.onUpdate?.(refs.dec(msg.v));
    },
  };
}

const cloneable = (v) => {
  try {
    structuredClone(v);
    return v;
  } catch {
    return String(v);
  }
};
