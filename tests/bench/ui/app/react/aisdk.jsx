// The AI SDK's useChat (@ai-sdk/react, no throttle) reading the UI message stream the bench server builds
// with the AI SDK's own helpers.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import { useState } from "react";
import { ui, uiText } from "../harness.js";
import { Row, mountReact } from "./transcript.jsx";

function Chat({ origin, workload, expose }) {
  const [transport] = useState(() => new DefaultChatTransport({ api: `${origin}/aisdk/${workload}` }));
  const { messages, sendMessage, setMessages, status } = useChat({ transport });
  expose({ send: (text) => sendMessage({ text }), reset: () => setMessages([]) });
  const streaming = status === "streaming" || status === "submitted";
  return (
    <div>
      {messages.map((m, i) => (
        <Row key={m.id} role={m.role} text={uiText(m)} streaming={streaming && i === messages.length - 1 && m.role === "assistant"} />
      ))}
    </div>
  );
}

export function mount(target, options) {
  ui.agentCreated = performance.now();
  return mountReact(target, Chat, options);
}
