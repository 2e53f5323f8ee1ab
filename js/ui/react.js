// React binding for pi-agent-wasm: render an Agent's state with
// useSyncExternalStore. The snapshot keeps its identity until the state
// changes, and finished message objects keep theirs, so memoised rows of
// finished messages never re-render while a response streams.
import { createElement, memo, useCallback, useMemo, useRef, useSyncExternalStore } from "react";
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

const NO_POINTS = Object.freeze([]);
const noop = () => () => false;

/**
 * The branches of a session's transcript (`session.branches` of pi-agent-wasm/session, or undefined
 * before the session is attached): `points`, the messages that have other versions
 * (`{ index, version, count }`), `at(index)`, and `switchTo`, `edit` and `regenerate`. Re-renders only
 * when the points change.
 */
export function useBranches(branches) {
  const subscribe = useCallback((onChange) => (branches ? branches.subscribe(onChange) : noop()), [branches]);
  const snapshot = useCallback(() => (branches ? branches.getSnapshot() : NO_POINTS), [branches]);
  const points = useSyncExternalStore(subscribe, snapshot, snapshot);
  return useMemo(() => branchView(branches, points), [branches, points]);
}

function branchView(branches, points) {
  const refuse = () => Promise.reject(new Error("pi-agent-wasm/react: useBranches() has no session yet"));
  return {
    points,
    at: (index) => points.find((p) => p.index === index),
    switchTo: branches ? (index, version) => branches.switchTo(index, version) : refuse,
    edit: branches ? (index, message) => branches.edit(index, message) : refuse,
    regenerate: branches ? (index) => branches.regenerate(index) : refuse,
  };
}
