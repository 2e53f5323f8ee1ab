// Stream functions of the worker benchmark (tests/bench/worker.mjs), for the page and for the worker:
// S1's scripted text stream (as in scenarios.mjs: one partial mutated in place, BATCH events per
// macrotask through a MessageChannel) and S4a's streamProxy request.
import { MODEL, textDeltas, usage } from "./data.mjs";

export const BATCH = 100;
export { MODEL };

const channel = new MessageChannel();
const queue = [];
channel.port1.onmessage = () => queue.shift()();
const tick = (fn) => {
  queue.push(fn);
  channel.port2.postMessage(0);
};

const deltasCache = new Map();
export function deltasFor(count, size) {
  const key = `${count}:${size}`;
  if (!deltasCache.has(key)) deltasCache.set(key, textDeltas(count, size));
  return deltasCache.get(key);
}

export function textStreamFn(impl, deltas) {
  return (model) => {
    const stream = impl.createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() };
    const n = deltas.length;
    const total = n + 4;
    let i = 0;
    const pushOne = (i) => {
      if (i === 0) stream.push({ type: "start", partial });
      else if (i === 1) {
        partial.content.push({ type: "text", text: "" });
        stream.push({ type: "text_start", contentIndex: 0, partial });
      } else if (i < n + 2) {
        const delta = deltas[i - 2];
        partial.content[0].text += delta;
        stream.push({ type: "text_delta", contentIndex: 0, delta, partial });
      } else if (i === n + 2) {
        stream.push({ type: "text_end", contentIndex: 0, content: partial.content[0].text, partial });
      } else stream.push({ type: "done", reason: "stop", message: partial });
    };
    const step = () => {
      const end = Math.min(total, i + BATCH);
      while (i < end) pushOne(i++);
      if (i < total) tick(step);
    };
    tick(step);
    return stream;
  };
}
