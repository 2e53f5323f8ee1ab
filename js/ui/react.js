// React binding for pi-agent-wasm: render an Agent's state with
// useSyncExternalStore. The snapshot keeps its identity until the state
// changes, and finished message objects keep theirs, so memoised rows of
// finished messages never re-render while a response streams.
import { createElement, memo, useCallback, useRef, useSyncExternalStore } from "react";
import { createTextBlocks, groupStyle } from "./blocks.js";

export { createTextBlocks, mountTextBlocks } from "./blocks.js";

/**
 * The agent's current snapshot; re-renders at most once per animation frame
 * while a response streams (pass `{ coalesce: false }` for every change).
 */
export function useAgent(agent, options) {
  const coalesce = options?.coalesce;
  const subscribe = useCallback(
    (onChange) => agent.subscribeState(onChange, coalesce === undefined ? undefined : { coalesce }),
    [agent, coalesce],
  );
  const snapshot = useCallback(() => agent.getSnapshot(), [agent]);
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}

/**
 * The blocks of a streaming text (see `createTextBlocks`), from a splitter kept by the component: each
 * render reads only what was appended since the last one.
 */
export function useTextBlocks(text, options) {
  const markdown = options?.markdown !== false;
  const ref = useRef(undefined);
  if (ref.current === undefined || ref.current.markdown !== markdown) ref.current = { markdown, splitter: createTextBlocks({ markdown }) };
  return ref.current.splitter.update(text);
}

// A block renders when its object changes: a finished block once. A group (one element per 32 blocks)
// renders when a block of it changed: the group of the last block, per update.
const Block = memo(function Block({ block, render }) {
  return createElement("div", { "data-block": block.type }, render ? render(block) : block.text);
});
const Group = memo(function Group({ blocks, render, visibility }) {
  return createElement(
    "div",
    { "data-block-group": "", style: groupStyle(blocks, visibility) },
    blocks.map((block) => createElement(Block, { key: block.key, block, render })),
  );
});

/**
 * A streaming text as one `<div data-block="<type>">` per block, in one `<div data-block-group>` per 32
 * blocks (off-screen groups are not laid out: `content-visibility`): an update renders the last block (and
 * a block that was just finished), and a finished block's element is never replaced. `renderBlock`
 * (a stable function: its identity is compared) returns a block's content (default: its text).
 */
export function TextBlocks({ text, markdown, renderBlock, contentVisibility = "auto" }) {
  const view = useTextBlocks(text, { markdown });
  return view.groups.map((blocks, i) => createElement(Group, { key: i, blocks, render: renderBlock, visibility: contentVisibility }));
}
