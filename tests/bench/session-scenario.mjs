// S1 with and without a session (pi-agent-wasm/session), written once for Node and the page:
// one prompt answered by `deltas.length` text deltas, BATCH per macrotask, a listener reading
// event.message (as scenarios.mjs's S1). Returns the run's times and what the store received:
// `run` and `flushed` (ms from the prompt to its end, and to the session's writes landing) by
// `now()`, and `runCpu` / `flushedCpu` by `cpu()` (main-thread CPU ms; may be async) when given.
// `mode`: false (no session), true (a session attached), or "alone": no session, and once the
// run is over the answer's text is appended to the store as is, the least any app keeping the
// answer pays (its `flushed` is when that write landed).
export const BATCH = 100;

export async function s1Session(env, mode) {
  const withSession = mode === true;
  const { Agent, createAssistantMessageEventStream, attachSession, store, tick, now, deltas, MODEL, usage } = env;
  const cpu = env.cpu ?? (() => 0);
  const streamFn = (model) => {
    const stream = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() };
    const n = deltas.length;
    let i = 0;
    const step = () => {
      const end = Math.min(n + 4, i + BATCH);
      for (; i < end; i++) {
        if (i === 0) stream.push({ type: "start", partial });
        else if (i === 1) {
          partial.content.push({ type: "text", text: "" });
          stream.push({ type: "text_start", contentIndex: 0, partial });
        } else if (i < n + 2) {
          const delta = deltas[i - 2];
          partial.content[0].text += delta;
          stream.push({ type: "text_delta", contentIndex: 0, delta, partial });
        } else if (i === n + 2) stream.push({ type: "text_end", contentIndex: 0, content: partial.content[0].text, partial });
        else stream.push({ type: "done", reason: "stop", message: partial });
      }
      if (i < n + 4) tick(step);
    };
    tick(step);
    return stream;
  };
  const agent = new Agent({ initialState: { systemPrompt: "You are a benchmark.", model: MODEL }, streamFn });
  let sink = 0;
  agent.subscribe((event) => {
    if (event.type === "message_update") sink += event.message.content[0].text.length;
  });
  let written = 0;
  let writes = 0;
  const counting = {
    load: (id) => store.load(id),
    clear: (id) => store.clear(id),
    replace: (id, text) => store.replace(id, text),
    append: (id, text) => ((written += text.length), writes++, store.append(id, text)),
  };
  const id = `bench-${Math.random().toString(36).slice(2)}`;
  const session = withSession ? await attachSession(agent, { id, store: counting, tabs: false, ...env.sessionOptions }) : undefined;
  const c0 = await cpu();
  const t0 = now();
  await agent.prompt("Write a long answer.");
  const run = now() - t0;
  const runCpu = (await cpu()) - c0;
  await session?.flush();
  if (mode === "alone") await counting.append(id, agent.state.messages[agent.state.messages.length - 1].content[0].text);
  const flushed = now() - t0;
  const flushedCpu = (await cpu()) - c0;
  await session?.detach();
  await store.clear(id);
  return { run, flushed, runCpu, flushedCpu, written, writes, sink: sink > 0, messages: agent.state.messages.length };
}
