// What pi-agent-wasm adds to the reference API: optional constructor options / streamFn (with
// setDefaultStreamFn), getSnapshot() and subscribeState() for UI frameworks.
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
