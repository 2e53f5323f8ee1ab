// The UI benchmark's workloads (tests/bench/ui/): one answer streamed to a chat transcript, as the
// pi proxy protocol (what `streamProxy` reads) and as the AI SDK's UI message stream (what `useChat`
// reads). Pure JavaScript, shared by the server (which sends the bodies) and the pages (which check
// that the whole answer reached the screen).
//
//   fast    20,000 deltas of 50 characters (a 1 MB answer), written as fast as the socket takes them
//   paced   2,000 deltas of 50 characters, 100 every 16 ms (a fast model at a screen's pace)
//   long    20,000 deltas of 50 characters, 100 every 16 ms (a 1 MB answer over 3.2 s: frames late in
//           it beside frames early in it)
import { prose, usage } from "../data.mjs";

export const WORKLOADS = {
  fast: { deltas: 20_000, size: 50, perTick: 0, tickMs: 0 },
  paced: { deltas: 2_000, size: 50, perTick: 100, tickMs: 16 },
  long: { deltas: 20_000, size: 50, perTick: 100, tickMs: 16 },
};

/**
 * A markdown answer of exactly `length` characters: headings, paragraphs of 300–900 characters, lists and
 * code fences, in a deterministic order. Its shape matters to renderers that split an answer into blocks;
 * a renderer of one text node sees the same characters.
 */
export function answerText(length) {
  let out = "";
  let n = 0;
  while (out.length < length) {
    const kind = n % 9;
    if (kind === 0) out += `## Part ${n / 9 + 1}: ${prose(24, n)}\n\n`;
    else if (kind === 4) {
      for (let i = 0; i < 4; i++) out += `- ${prose(40 + 13 * i, n + i)}\n`;
      out += "\n";
    } else if (kind === 7) {
      out += "```js\n";
      for (let i = 0; i < 6; i++) out += `const v${i} = "${prose(30 + 7 * i, n + i)}";\n`;
      out += "```\n\n";
    } else out += `${prose(300 + ((n * 137) % 600), n)}\n\n`;
    n++;
  }
  return out.slice(0, length);
}

const cache = new Map();
/** The workload's deltas (`size`-character slices of `answerText`) and the answer they add up to. */
export function workloadDeltas(name) {
  if (!cache.has(name)) {
    const { deltas, size } = WORKLOADS[name];
    const text = answerText(deltas * size);
    const out = new Array(deltas);
    for (let i = 0; i < deltas; i++) out[i] = text.slice(i * size, (i + 1) * size);
    cache.set(name, { deltas: out, text });
  }
  return cache.get(name);
}

/** The pi proxy events (`data: <ProxyAssistantMessageEvent>` lines) of one text answer. */
export function piEvents(name) {
  const { deltas } = workloadDeltas(name);
  const events = [{ type: "start" }, { type: "text_start", contentIndex: 0 }];
  for (const delta of deltas) events.push({ type: "text_delta", contentIndex: 0, delta });
  events.push({ type: "text_end", contentIndex: 0 });
  events.push({ type: "done", reason: "stop", usage: usage() });
  return events;
}

/**
 * Splits an SSE body into the parts a paced server writes: everything up to the first delta and the first
 * `perTick` deltas, then `perTick` deltas a part, the rest with the last deltas. `isDelta(block)` tells a
 * delta's `data:` block.
 */
export function pacedParts(body, perTick, isDelta) {
  const blocks = body.split(/(?<=\n\n)/);
  const parts = [];
  let current = "";
  let inPart = 0;
  for (const block of blocks) {
    current += block;
    if (isDelta(block) && ++inPart === perTick) {
      parts.push(current);
      current = "";
      inPart = 0;
    }
  }
  if (current) {
    if (parts.length && inPart === 0) parts.push(current);
    else if (parts.length) parts[parts.length - 1] += current;
    else parts.push(current);
  }
  return parts;
}
