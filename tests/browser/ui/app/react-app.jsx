// React page: memoised rows of finished messages (keyed by message object) plus one streaming row.
import { memo } from "react";
import { createRoot } from "react-dom/client";
import { flushSync } from "react-dom";
import { useAgent } from "pi-agent-wasm/react";
import { T, idOf, textOf, run } from "./harness.js";

const Row = memo(function Row({ message }) {
  const id = idOf(message);
  T.rowRender(id);
  return (
    <li data-row-id={id}>
      {message.role}: {textOf(message)}
    </li>
  );
});

function StreamingRow({ message }) {
  T.streamRender();
  return <li data-streaming="">{textOf(message)}</li>;
}

function Chat({ agent, coalesce }) {
  const snapshot = useAgent(agent, coalesce ? undefined : { coalesce: false });
  return (
    <ul>
      {snapshot.messages.map((m) => (
        <Row key={idOf(m)} message={m} />
      ))}
      {snapshot.streamingMessage ? <StreamingRow message={snapshot.streamingMessage} /> : null}
    </ul>
  );
}

const coalesce = new URLSearchParams(location.search).get("coalesce") !== "0";
window.__run = () =>
  run((agent, target) => {
    const root = createRoot(target);
    flushSync(() => root.render(<Chat agent={agent} coalesce={coalesce} />));
  }, coalesce);
window.__ready = true;
