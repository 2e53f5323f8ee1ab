// The worker's events as what changed since the last one (host.js): the streaming message's
// top-level fields and blocks as last sent are kept here, and each event crosses as the changes to
// them. The page applies them to its own copy (index.js `#apply`, `patch`).

/**
 * An encoder of `agent` events into outbox items: `encode(event)` queues it on `outbox`
 * (outbox.js), with objects crossing as `refs` (protocol.js). `beforeEvent()` runs before each
 * event that is not a streamed update (the host posts state the agent changed then).
 */
export function createEventEncoder(refs, outbox, beforeEvent) {
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
    outbox.newMessage();
    mirror = { top: {}, blocks: [], pcontent: message.content };
    for (const key of Object.keys(message)) if (key !== "content") mirror.top[key] = stamp(message[key]);
    const content = Array.isArray(message.content) ? message.content : [];
    for (const block of content) mirror.blocks.push({ ...block });
  };
  function encode(event) {
    const type = event.type;
    if (type === "message_update" && mirror) {
      const item = encodeUpdate(event);
      if (item) outbox.event(item);
      return;
    }
    beforeEvent();
    if (type === "message_start") startMirror(event.message);
    outbox.event(encodeFields(event, type === "message_start" && Array.isArray(event.message?.content)));
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
    // A plain text or thinking delta joins a run of them ([code, contentIndex, count], see outbox.js `delta`)
    // when nothing else changed but that block's text, by an append.
    const code = ame?.type === "text_delta" ? 1 : ame?.type === "thinking_delta" ? 2 : 0;
    if (code && t.length === 0 && n.length === 0 && typeof ame.delta === "string" && ame.partial === mirror.partial &&
      ame.partial?.content === mirror.pcontent && Object.keys(ame).join() === "type,contentIndex,delta,partial") {
      const key = code === 1 ? "text" : "thinking";
      const appended = o.length === 0 ? "" : o.length === 4 && o[0] === ame.contentIndex && o[1] === key && o[2] === 1 ? o[3] : undefined;
      if (appended !== undefined && typeof before === "string") {
        outbox.delta(code, ame.contentIndex, before, appended, ame.delta);
        return undefined;
      }
    }
    if (code) outbox.streamed(ame.contentIndex);
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
  return encode;
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
