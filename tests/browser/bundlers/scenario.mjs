// The app code every toolchain test runs (toolchains.test.mjs, nextjs.test.mjs), as source text: one
// prompt with one tool call, through an Agent built at import (the module may still be loading).
// Written out as an ES module and as CommonJS (for `require()`).
export const SCENARIO = `
const MODEL = { id: "scripted", name: "Scripted", api: "scripted", provider: "scripted", baseUrl: "", reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const assistant = (content, stopReason) => ({ role: "assistant", content, api: "scripted", provider: "scripted",
  model: "scripted", usage: usage(), stopReason, timestamp: Date.now() });
const echo = {
  name: "echo", label: "Echo", description: "Echoes its text.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (_id, args) => ({ content: [{ type: "text", text: "echo:" + args.text }], details: {} }),
};

/** Builds an agent now (the module may still be loading), then prompts; resolves with what happened. */
function run(pkg) {
  const { Agent, createAssistantMessageEventStream, ready } = pkg;
  // A stream function: a tool call first, then the tool's text as the answer.
  const streamFn = (_model, context) => {
    const stream = createAssistantMessageEventStream();
    const result = context.messages.filter((m) => m.role === "toolResult").at(-1);
    const message = result
      ? assistant([{ type: "text", text: "got " + result.content[0].text }], "stop")
      : assistant([{ type: "toolCall", id: "call_1", name: "echo", arguments: { text: "ping" } }], "toolUse");
    setTimeout(() => {
      stream.push({ type: "start", partial: message });
      stream.push({ type: "done", reason: message.stopReason, message });
    });
    return stream;
  };
  const agent = new Agent({ initialState: { systemPrompt: "Test.", model: MODEL, tools: [echo] }, streamFn });
  const events = [];
  agent.subscribe((event) => void events.push(event.type));
  // Synchronous members, before the module is ready.
  agent.followUp({ role: "user", content: "later", timestamp: 1 });
  const early = { queued: agent.hasQueuedMessages(), mode: agent.steeringMode, idle: agent.signal === undefined };
  agent.clearFollowUpQueue();
  early.cleared = !agent.hasQueuedMessages();
  early.state = agent.state.messages.length;
  // A wrapper on the agent's own property, as pi-agent-wasm/session and /replay wrap prompt():
  // a prompt made before the module is ready goes through it once.
  let promptCalls = 0;
  const prompt = agent.prompt;
  agent.prompt = function (...args) {
    promptCalls++;
    return prompt.apply(this, args);
  };
  return agent.prompt("hello").then(() => ready).then(() => ({
    early,
    promptCalls,
    roles: agent.state.messages.map((m) => m.role),
    answer: agent.state.messages.at(-1).content[0].text,
    agentEnds: events.filter((t) => t === "agent_end").length,
    toolEnds: events.filter((t) => t === "tool_execution_end").length,
  }));
}
`;

/** What `run()` resolves with. */
export const EXPECTED = {
  early: { queued: true, mode: "one-at-a-time", idle: true, cleared: true, state: 1 },
  promptCalls: 1,
  roles: ["system", "user", "assistant", "toolResult", "assistant"],
  answer: "got echo:ping",
  agentEnds: 1,
  toolEnds: 1,
};

