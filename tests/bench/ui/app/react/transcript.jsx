// The transcript every React setup renders: one memoised row per message, keyed by its position (the
// streaming answer's row is the row its finished message takes, so it is not mounted again), its text as
// one text node (or, with `blocks`, through pi-agent-wasm/react's TextBlocks).
import { memo, useLayoutEffect } from "react";
import { createRoot } from "react-dom/client";
import { flushSync } from "react-dom";
import { rowRendered } from "../harness.js";

export const Row = memo(function Row({ role, text, streaming, blocks: Blocks }) {
  useLayoutEffect(() => rowRendered(role, text, streaming));
  return (
    <div className="row" data-role={role} data-streaming={streaming ? "" : undefined}>
      {Blocks ? <Blocks text={text} /> : <div className="text">{text}</div>}
    </div>
  );
});

/** Mounts `<App expose={…} />` and returns the controls it exposed ({ send, reset }). */
export function mountReact(target, App, props) {
  const controls = {};
  const root = createRoot(target);
  flushSync(() => root.render(<App {...props} expose={(c) => Object.assign(controls, c)} />));
  return {
    send: (text) => controls.send(text),
    reset: () => flushSync(() => controls.reset()),
  };
}
