// pi-agent-wasm's additions are as strict as the rest.
import { Agent } from "pi-agent-wasm";

const agent = new Agent();
// @ts-expect-error -- snapshots are frozen
agent.getSnapshot().messages.push({ role: "user", content: "", timestamp: 0 });
// @ts-expect-error -- snapshots are frozen
agent.getSnapshot().isStreaming = false;
// @ts-expect-error -- snapshots are frozen
agent.getSnapshot().pendingToolCalls.clear();
// @ts-expect-error -- the listener takes no arguments
agent.subscribeState((snapshot: string) => console.log(snapshot));
// @ts-expect-error -- not an option
agent.subscribeState(() => {}, { debounce: 16 });

// A structural stream still has to carry AssistantMessageEvents and a final AssistantMessage.
import type { AssistantMessage, StreamFn } from "pi-agent-wasm";
declare const final: AssistantMessage;
const wrongEventsSource = {
  async *[Symbol.asyncIterator]() {
    yield { type: "text_delta" as const, text: "no contentIndex, no partial" };
  },
  result: async () => final,
};
// @ts-expect-error -- the events are not AssistantMessageEvents
export const wrongEvents: StreamFn = () => wrongEventsSource;
const wrongResultSource = { async *[Symbol.asyncIterator]() {}, result: async () => "done" };
// @ts-expect-error -- result() must give an AssistantMessage
export const wrongResult: StreamFn = async () => wrongResultSource;
// @ts-expect-error -- result() is required
export const noResult: StreamFn = () => ({ async *[Symbol.asyncIterator]() {} });
// @ts-expect-error -- `ready` is a promise, not a function
ready();
import { ready } from "pi-agent-wasm";
