// What pi-agent-wasm adds to the reference API: optional constructor options / streamFn (with
// setDefaultStreamFn), getSnapshot() and subscribeState() for UI frameworks, subscribe() without the
// per-token events.
import { Agent, type AgentMessage, type AgentSnapshot, type AgentTool, type Model, type ThinkingLevel } from "pi-agent-wasm";

export const bare = new Agent();
export const noStreamFn = new Agent({ initialState: { systemPrompt: "Be terse." } });

const snapshot: AgentSnapshot = bare.getSnapshot();
const messages: readonly AgentMessage[] = snapshot.messages;
const tools: readonly AgentTool<any>[] = snapshot.tools;
const model: Model<any> = snapshot.model;
const level: ThinkingLevel = snapshot.thinkingLevel;
const prompt: string = snapshot.systemPrompt;
const streaming: boolean = snapshot.isStreaming;
const partial: AgentMessage | undefined = snapshot.streamingMessage;
const pending: ReadonlySet<string> = snapshot.pendingToolCalls;
const error: string | undefined = snapshot.errorMessage;
console.log(messages.length, tools.length, model.id, level, prompt, streaming, partial, pending.size, error);

// A React-style external store.
let current = bare.getSnapshot();
const unsubscribe: () => boolean = bare.subscribeState(() => {
  current = bare.getSnapshot();
});
bare.subscribeState(() => console.log(current.messages.length), { coalesce: false });
unsubscribe();

// wasm-bindgen's explicit resource management.
{
  using scoped = new Agent();
  scoped.abort();
}
bare.free();

// pi-ai exports AssistantMessageEventStream as a type only; pi-agent-wasm exports the class.
import { AssistantMessageEventStream, type AssistantMessage } from "pi-agent-wasm";
export const constructed = new AssistantMessageEventStream();
export const done: Promise<AssistantMessage> = constructed.result();

// A stream function may return any async iterable of AssistantMessageEvent with result(), sync or as
// a promise, without a cast (the reference wants its own AssistantMessageEventStream class).
import { ready, type AssistantMessageEvent, type AssistantMessageEventSource, type StreamFn } from "pi-agent-wasm";
declare const final: AssistantMessage;
const events: AssistantMessageEvent[] = [{ type: "done", reason: "stop", message: final }];
export const plainStream: StreamFn = () => ({
  async *[Symbol.asyncIterator]() {
    yield* events;
  },
  result: async () => final,
});
export const plainStreamLater: StreamFn = async () => ({
  [Symbol.asyncIterator]() {
    let i = 0;
    return { next: async () => (i < events.length ? { value: events[i++], done: false } : { value: undefined, done: true }) };
  },
  result: () => Promise.resolve(final),
});
export const source: AssistantMessageEventSource = constructed;
export const withPlainStream = new Agent({ streamFn: plainStream });

// The wasm module loads on import; `ready` is for apps that want to preload or report a failure.
export const loaded: Promise<void> = ready;
ready.catch((error: unknown) => console.error(error));

// A listener without the per-token events (it reads the text so far from the state when it needs it).
bare.subscribe((event) => console.log(event.type, bare.state.streamingMessage), { deltas: false })();
