// EventStream / AssistantMessageEventStream as pi-ai exposes them: construction, subclassing,
// iteration, result().
import {
  EventStream,
  createAssistantMessageEventStream,
  type AssistantMessage,
  type AssistantMessageEvent,
  type AssistantMessageEventStream,
} from "pi-agent-wasm";

// A generic stream: completes on the first negative number, with its absolute value.
const numbers = new EventStream<number, number>(
  (n) => n < 0,
  (n) => -n,
);
numbers.push(1);
numbers.push(-5);
numbers.end();

export async function total(): Promise<number> {
  let sum = 0;
  for await (const n of numbers) sum += n;
  const last: number = await numbers.result();
  return sum + last;
}

// `R` defaults to `T`.
export const same: EventStream<string> = new EventStream<string>(
  (s) => s === "end",
  (s) => s.toUpperCase(),
);

// Subclassing, as pi-ai's own tests do.
class ScriptedStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
  constructor(private readonly script: AssistantMessageEvent[]) {
    super(
      (event) => event.type === "done" || event.type === "error",
      (event) => {
        if (event.type === "done") return event.message;
        if (event.type === "error") return event.error;
        throw new Error("not terminal");
      },
    );
  }
  play(): this {
    for (const event of this.script) this.push(event);
    return this;
  }
}
export const scripted = new ScriptedStream([]).play();

export const created: AssistantMessageEventStream = createAssistantMessageEventStream();
export const asIterable: AsyncIterable<AssistantMessageEvent> = created;
declare const message: AssistantMessage;
created.push({ type: "done", reason: "toolUse", message });
created.end(message);
export const finalMessage: Promise<AssistantMessage> = created.result();
