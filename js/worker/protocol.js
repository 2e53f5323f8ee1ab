// The channel between a WorkerAgent (main thread) and its worker
// (host.js): message tags, object references that keep identity across
// the channel, and the packing of hook arguments.
//
// Every value crosses by structured clone. What one side has already sent (or
// received) gets a number, so a message that crosses back and forth is
// resolved to the receiver's own object: `event.message === theMessageYouSent`
// holds on both sides, and a finished message crosses once.

/** The tag on every message of the protocol; anything else on the port is ignored. */
export const TAG = "pi-agent-wasm/worker";

/** The AgentOptions hooks, which run where they were given (the page's are called over the channel). */
export const HOOKS = ["convertToLlm", "transformContext", "getApiKey", "onPayload", "onResponse", "onProviderStreamEvent",
  "beforeToolCall", "afterToolCall", "finishTurn", "prepareRequest", "prepareNextTurn", "prepareNextTurnWithContext"];

/**
 * Added to a delta's length in a run of text or thinking deltas when the delta crosses as its own text
 * rather than as the next part of what its block was appended (host.js, `queueDelta`).
 */
export const EXPLICIT = 2 ** 31;

/**
 * Numbers for objects that crossed the channel. The main thread numbers its
 * objects with even ids and the worker with odd ones, so the two never clash.
 */
export class Refs {
  constructor(first) {
    this.next = first;
    this.ids = new WeakMap();
    this.objects = new Map();
  }
  /**
   * `[id]` when the other side has `value`, `[id, value, fields?]` the first
   * time (`fields`: references for its `content`/`details`), `[0, value]` for
   * anything that is not an object. `snapshot`, when given, is what crosses
   * for a new `value` (a copy taken now, of an object that changes before the
   * batch is posted).
   */
  enc(value, snapshot = value) {
    if (value === null || typeof value !== "object") return [0, value];
    const known = this.ids.get(value);
    if (known !== undefined) return [known];
    const id = this.next;
    this.next += 2;
    this.ids.set(value, id);
    this.objects.set(id, value);
    let fields;
    let sent = snapshot;
    for (const key of ["content", "details", "result", "partialResult"]) {
      const inner = value[key];
      if (inner === null || typeof inner !== "object") continue;
      const innerId = this.ids.get(inner);
      if (innerId === undefined) continue;
      if (sent === snapshot) sent = { ...snapshot };
      sent[key] = null;
      (fields ??= {})[key] = innerId;
    }
    return fields ? [id, sent, fields] : [id, sent];
  }
  dec(packed) {
    const [id, value, fields] = packed;
    if (packed.length === 1) return this.objects.get(id) ?? this.retired?.get(id);
    if (id === 0) return value;
    if (fields) for (const key in fields) value[key] = this.objects.get(fields[key]);
    this.ids.set(value, id);
    this.objects.set(id, value);
    return value;
  }
  /**
   * The main thread's side of a sweep: forgets every object but those in `live` (which keep their
   * numbers), and gives the numbers kept, for the worker's `keep`; undefined when every object is
   * live (nothing to forget, nothing to tell the worker). Until as many `settle()`s as sweeps, the
   * numbers given before still resolve, for what the worker sent before its `keep`.
   */
  retain(live) {
    const kept = new Map();
    for (const o of live) {
      const id = o !== null && typeof o === "object" ? this.ids.get(o) : undefined;
      if (id !== undefined) kept.set(id, o);
    }
    if (kept.size === this.objects.size) return undefined;
    this.retired ??= new Map();
    for (const [id, o] of this.objects) this.retired.set(id, o);
    this.sweeps = (this.sweeps ?? 0) + 1;
    this.#replace(kept);
    return [...kept.keys()];
  }
  /** The worker's side of a sweep: forgets every object but those numbered `ids`. */
  keep(ids) {
    const kept = new Map();
    for (const id of ids) {
      const o = this.objects.get(id);
      if (o !== undefined) kept.set(id, o);
    }
    this.#replace(kept);
  }
  /** The worker acknowledged a sweep. */
  settle() {
    if (--this.sweeps === 0) this.retired = undefined;
  }
  #replace(kept) {
    this.objects = kept;
    this.ids = new WeakMap();
    for (const [id, o] of kept) this.ids.set(o, id);
  }
}

const isPlain = (x) => {
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
};

/**
 * Hook arguments and results: a structured-cloneable copy of `value` in which
 * messages and tool results become references (`refs`) and tools become their
 * names, with the places of those substitutions. Walks at most four levels
 * (a context's `messages` array sits at two).
 */
export function pack(value, refs) {
  const subs = [];
  const walk = (x, path, depth) => {
    if (x === null || typeof x !== "object") return typeof x === "function" ? undefined : x;
    if (typeof x.role === "string" || (path.length > 0 && (path.at(-1) === "result" || path.at(-1) === "partialResult"))) {
      subs.push([path, 0, refs.enc(x)]);
      return null;
    }
    if (typeof x.execute === "function" && typeof x.name === "string") {
      subs.push([path, 1, x.name]);
      return null;
    }
    if (depth >= 4 || !(Array.isArray(x) || isPlain(x))) return x;
    if (Array.isArray(x)) return x.map((e, i) => walk(e, [...path, i], depth + 1));
    const out = {};
    for (const key of Object.keys(x)) out[key] = walk(x[key], [...path, key], depth + 1);
    return out;
  };
  const v = walk(value, [], 0);
  return subs.length ? [v, subs] : [v];
}

/** The inverse of `pack`; `tool(name)` gives the receiver's tool object for a name. */
export function unpack([value, subs], refs, tool) {
  if (!subs) return value;
  let root = value;
  for (const [path, kind, packed] of subs) {
    const resolved = kind === 0 ? refs.dec(packed) : tool(packed);
    if (path.length === 0) {
      root = resolved;
      continue;
    }
    let at = root;
    for (let i = 0; i < path.length - 1; i++) at = at[path[i]];
    at[path[path.length - 1]] = resolved;
  }
  return root;
}

/** An error as plain data (`Error`s clone, but their subclasses and extra fields do not). */
export const packError = (e) =>
  e instanceof Error ? { name: e.name, message: e.message, stack: e.stack } : { value: typeof e === "object" ? String(e) : e };

export function unpackError(p) {
  if (!p || !("message" in p)) return p?.value;
  const Ctor = { TypeError, RangeError, SyntaxError }[p.name] ?? Error;
  const e = new Ctor(p.message);
  if (!(p.name in { TypeError: 1, RangeError: 1, SyntaxError: 1, Error: 1 })) e.name = p.name;
  if (p.stack) e.stack = p.stack;
  return e;
}
