// The React setups on a pi Agent: the transcript of `{ messages, streamingMessage }` from a hook, for each
// setup's agent and hook.
import { useEffect, useRef, useState } from "react";
import { textOf, ui } from "../harness.js";
import { Row, mountReact } from "./transcript.jsx";

function Transcript({ messages, streamingMessage, blocks }) {
  // One array, so that the streaming answer's row (key: its future position) is the row of its finished
  // message: the same component, and the same DOM.
  const rows = messages.map((m, i) => (m.role === "system" ? null : <Row key={i} role={m.role} text={textOf(m)} blocks={blocks} />));
  if (streamingMessage) rows.push(<Row key={messages.length} role="assistant" text={textOf(streamingMessage)} streaming blocks={blocks} />);
  return <div>{rows}</div>;
}

/**
 * Mounts a transcript of `createAgent()`'s agent, read through `useState(agent)` (a hook returning
 * `{ messages, streamingMessage }`, and optionally a `refresh` for agents that do not tell of a reset).
 */
export function mountPi(target, { createAgent, useAgentState, blocks }) {
  ui.agentCreated = performance.now();
  const agent = createAgent();
  function Chat({ expose }) {
    const state = useAgentState(agent);
    expose({
      send: (text) => agent.prompt(text),
      reset: () => {
        agent.reset();
        state.refresh?.();
      },
    });
    return <Transcript messages={state.messages} streamingMessage={state.streamingMessage} blocks={blocks} />;
  }
  return mountReact(target, Chat, {});
}

// 1.4.0 has no UI binding: the two hooks an app writes for it. Its `state.messages` is one array it pushes
// to, so each read copies it (a row per message, compared by identity).
const read = (agent) => ({ messages: agent.state.messages.slice(), streamingMessage: agent.state.streamingMessage });

/** The simplest hook: new state on every event. */
export function usePerUpdate(agent) {
  const [state, setState] = useState(() => read(agent));
  useEffect(() => agent.subscribe(() => setState(read(agent))), []);
  return { ...state, refresh: () => setState(read(agent)) };
}

/** A hand-written hook that sets state at most once per animation frame. */
export function usePerFrame(agent) {
  const [state, setState] = useState(() => read(agent));
  const frame = useRef(0);
  useEffect(() => {
    const unsubscribe = agent.subscribe(() => {
      if (!frame.current) frame.current = requestAnimationFrame(() => ((frame.current = 0), setState(read(agent))));
    });
    return () => (unsubscribe(), cancelAnimationFrame(frame.current));
  }, []);
  return { ...state, refresh: () => setState(read(agent)) };
}
