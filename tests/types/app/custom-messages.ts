// App-specific messages added to AgentMessage by declaration merging, as in the reference README.
import { Agent, type AgentMessage, type Message, type StreamFn } from "pi-agent-wasm";

declare module "pi-agent-wasm" {
  interface CustomAgentMessages {
    note: { role: "note"; text: string; timestamp: number };
    notification: NotificationMessage;
  }
}

interface NotificationMessage {
  role: "notification";
  level: "info" | "warning";
  text: string;
  timestamp: number;
}

declare const streamFn: StreamFn;

// Now valid.
const note: AgentMessage = { role: "note", text: "remember the milk", timestamp: Date.now() };
const info: AgentMessage = { role: "notification", level: "info", text: "Info", timestamp: Date.now() };

const agent = new Agent({
  streamFn,
  initialState: { messages: [note, info] },
  convertToLlm: (messages) =>
    messages.flatMap((m): Message[] => {
      if (m.role === "notification") return []; // UI only
      if (m.role === "note") return [{ role: "user", content: `Note: ${m.text}`, timestamp: m.timestamp }];
      return [m];
    }),
});

agent.state.messages.push({ role: "note", text: "pushed", timestamp: Date.now() });
agent.state.messages = [...agent.state.messages, { role: "notification", level: "warning", text: "careful", timestamp: 0 }];
agent.steer({ role: "note", text: "steer with a custom message", timestamp: Date.now() });
agent.followUp({ role: "user", content: "and a normal one", timestamp: Date.now() });

export const notes: string[] = agent.state.messages.flatMap((m) => (m.role === "note" ? [m.text] : []));

// Every role is known: LLM roles plus the custom ones.
export function roleLabel(m: AgentMessage): string {
  switch (m.role) {
    case "system":
    case "user":
    case "assistant":
    case "toolResult":
      return m.role;
    case "note":
      return `note: ${m.text}`;
    case "notification":
      return `${m.level}: ${m.text}`;
    default: {
      const unreachable: never = m;
      return unreachable;
    }
  }
}

agent.subscribe((event) => {
  if (event.type === "message_end" && event.message.role === "note") {
    console.log(event.message.text);
  }
});
