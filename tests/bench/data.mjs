// Deterministic inputs shared by the benchmark's scenarios (Node and the browser page) and its
// SSE server. Pure JavaScript: no Node or DOM APIs.

export const MODEL = Object.freeze({
  id: "bench-model",
  name: "Bench Model",
  api: "bench-api",
  provider: "bench-provider",
  baseUrl: "https://example.invalid",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
});

export function usage() {
  return {
    input: 10,
    output: 20,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 30,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

const WORDS = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore " +
  "et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea " +
  "commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum eu fugiat nulla pariatur").split(" ");

/** ASCII prose of exactly `length` characters, deterministic in `seed`. */
export function prose(length, seed = 0) {
  let out = "";
  let i = seed;
  while (out.length < length) out += WORDS[i++ % WORDS.length] + (i % 11 === 0 ? ". " : " ");
  return out.slice(0, length);
}

/** `count` text deltas of `size` characters each (distinct strings, like a real stream). */
export function textDeltas(count, size) {
  const all = prose(count * size, 3);
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = all.slice(i * size, (i + 1) * size);
  return out;
}

// ---- S3: a preloaded transcript ----------------------------------------------------------------

/** `count` messages alternating user / assistant, ~100 and ~300 characters of text. */
export function transcript(count) {
  const messages = new Array(count);
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      messages[i] = { role: "user", content: prose(100, i), timestamp: 1_000 + i };
    } else {
      messages[i] = {
        role: "assistant",
        content: [{ type: "text", text: prose(300, i) }],
        api: MODEL.api,
        provider: MODEL.provider,
        model: MODEL.id,
        usage: usage(),
        stopReason: "stop",
        timestamp: 1_000 + i,
      };
    }
  }
  return messages;
}

// ---- S4: proxy event scripts (what a streamProxy server sends) ---------------------------------

/** S4a: one text block of `count` deltas of `size` characters. */
export function s4aEvents(count = 20_000, size = 50) {
  const events = [{ type: "start" }, { type: "text_start", contentIndex: 0 }];
  for (const delta of textDeltas(count, size)) events.push({ type: "text_delta", contentIndex: 0, delta });
  events.push({ type: "text_end", contentIndex: 0 });
  events.push({ type: "done", reason: "stop", usage: usage() });
  return events;
}

/**
 * S4b tool-call arguments of about `bytes` bytes of JSON.
 *   "edits":  { path, edits: [{ line, oldText, newText }, …] }  — many small values (an edit tool)
 *   "string": { path, content: "<one long string with \n escapes>" } — one large value (a write tool)
 */
export function s4bArguments(shape, bytes = 200_000) {
  if (shape === "string") {
    const lines = [];
    let n = 0;
    let size = 40;
    while (size < bytes) {
      const line = prose(60, n++);
      lines.push(line);
      size += line.length + 2; // "\n" escaped
    }
    const args = { path: "src/generated/big-file.ts", content: lines.join("\n") };
    return trimTo(args, bytes, (a, over) => ({ ...a, content: a.content.slice(0, a.content.length - over) }));
  }
  if (shape !== "edits") throw new Error(`unknown S4b shape ${shape}`);
  const edits = [];
  const args = { path: "src/generated/big-file.ts", edits };
  let size = JSON.stringify(args).length;
  for (let i = 0; size < bytes; i++) {
    const edit = { line: i * 3 + 1, oldText: prose(40, i), newText: prose(46, i + 7) };
    edits.push(edit);
    size += JSON.stringify(edit).length + 1;
  }
  return trimTo(args, bytes, (a, over) => {
    const last = a.edits[a.edits.length - 1];
    return { ...a, edits: [...a.edits.slice(0, -1), { ...last, newText: last.newText.slice(0, last.newText.length - over) }] };
  });
}

function trimTo(args, bytes, shrink) {
  const over = JSON.stringify(args).length - bytes;
  return over > 0 ? shrink(args, over) : args;
}

/** S4b: one tool call whose JSON arguments text arrives in `count` equal deltas. */
export function s4bEvents(shape = "edits", count = 4_000, bytes = 200_000) {
  const args = s4bArguments(shape, bytes);
  const json = JSON.stringify(args);
  const size = Math.ceil(json.length / count);
  const events = [
    { type: "start" },
    { type: "toolcall_start", contentIndex: 0, id: "call_1", toolName: shape === "string" ? "write" : "edit" },
  ];
  for (let i = 0; i < count; i++) {
    const delta = json.slice(i * size, (i + 1) * size);
    if (delta) events.push({ type: "toolcall_delta", contentIndex: 0, delta });
  }
  events.push({
    type: "toolcall_end",
    contentIndex: 0,
    toolCall: { type: "toolCall", id: "call_1", name: shape === "string" ? "write" : "edit", arguments: args },
  });
  events.push({ type: "done", reason: "toolUse", usage: usage() });
  return events;
}

/** The SSE body a proxy server sends for `events`. */
export function sseBody(events) {
  let out = "";
  for (const event of events) out += `data: ${JSON.stringify(event)}\n\n`;
  return out;
}

/**
 * The SSE body cut at quarter boundaries of its tool-call deltas: [head (up to toolcall_start), Q1, Q2,
 * Q3, Q4, tail]. A gated stream sends part k+1 only once the client has opened gate k (after its mark
 * q<k>), so a client cannot parse ahead of the quarter its consumer is in.
 */
export function ssePartsByQuarter(events) {
  const deltas = [];
  events.forEach((e, i) => {
    if (e.type === "toolcall_delta") deltas.push(i);
  });
  const q = deltas.length / 4;
  const cuts = [0, 1, 2, 3, 4].map((k) => (k === 0 ? deltas[0] : deltas[k * q - 1] + 1));
  const parts = [];
  let from = 0;
  for (const cut of [...cuts, events.length]) {
    parts.push(sseBody(events.slice(from, cut)));
    from = cut;
  }
  return parts;
}

/** The routes the bench server answers on POST {base}/{variant}/api/stream. */
export const PROXY_VARIANTS = {
  "s4a": () => s4aEvents(20_000, 50),
  "s4a-warm": () => s4aEvents(2_000, 50),
  "s4b-edits": () => s4bEvents("edits", 4_000, 200_000),
  "s4b-string": () => s4bEvents("string", 4_000, 200_000),
  // Warm-up: same shape, 1/10 of the deltas (1/100 of the reference's quadratic cost).
  "s4b-edits-warm": () => s4bEvents("edits", 400, 20_000),
  "s4b-string-warm": () => s4bEvents("string", 400, 20_000),
};
