// Agent options, fields and methods reject wrong types.
import { Agent, type ImageContent, type StreamFn, type UserMessage } from "pi-agent-wasm";

declare const streamFn: StreamFn;
declare const images: ImageContent[];
declare const message: UserMessage;

// @ts-expect-error -- "sequential" | "parallel"
new Agent({ streamFn, toolExecution: "serial" });
// @ts-expect-error -- "all" | "one-at-a-time"
new Agent({ streamFn, steeringMode: "batch" });
// @ts-expect-error -- not an option
new Agent({ streamFn, systemPrompt: "belongs in initialState" });
// @ts-expect-error -- isStreaming cannot be seeded
new Agent({ streamFn, initialState: { isStreaming: true } });

const agent = new Agent({ streamFn });

// @ts-expect-error -- not a QueueMode
agent.steeringMode = "batch";
// @ts-expect-error -- not a Transport
agent.transport = "carrier-pigeon";
// @ts-expect-error -- a prompt is text, a message or messages
agent.prompt(123);
// @ts-expect-error -- images go with text prompts only
agent.prompt(message, images);
// @ts-expect-error -- read-only
agent.state = agent.state;
// @ts-expect-error -- read-only
agent.signal = new AbortController().signal;
// @ts-expect-error -- steer takes one message
agent.steer([message]);

// @ts-expect-error -- `block` is a boolean
agent.beforeToolCall = async () => ({ block: "yes" });
// @ts-expect-error -- "continue" | "end"
agent.finishTurn = async () => ({ action: "stop" });
// @ts-expect-error -- prepareRequest cannot append messages
agent.prepareRequest = async () => ({ messages: [message] });
// @ts-expect-error -- listeners receive (event, signal)
agent.subscribe((event: string) => console.log(event));
