// Vue 3 binding for pi-agent-wasm: an Agent's state as a shallow ref. The
// snapshot keeps its identity until the state changes and finished message
// objects keep theirs, so child components given a finished message as a
// prop never re-render while a response streams. And a streaming text
// rendered as blocks.
import { computed, defineComponent, getCurrentScope, h, isRef, onScopeDispose, shallowRef } from "vue";
import { createTextBlocks, groupStyle } from "./blocks.js";

export { createTextBlocks, mountTextBlocks } from "./blocks.js";

/**
 * A read-only shallow ref of `agent.getSnapshot()`, updated at most once per
 * animation frame while a response streams (pass `{ coalesce: false }` for
 * every change). Unsubscribes when the calling component (or effect scope)
 * is disposed.
 */
export function useAgent(agent, options) {
  const snapshot = shallowRef(agent.getSnapshot());
  // A shallow ref triggers only on a new value: an unchanged snapshot renders nothing.
  const unsubscribe = agent.subscribeState(() => {
    snapshot.value = agent.getSnapshot();
  }, options);
  if (getCurrentScope()) onScopeDispose(unsubscribe);
  // Typed read-only (vue.d.ts); a readonly proxy would wrap the snapshot in proxies.
  return snapshot;
}

/**
 * A computed ref of the blocks of a streaming text (`source`: a getter or a ref of the text), from one
 * splitter: each change reads only what was appended.
 */
export function useTextBlocks(source, options) {
  const splitter = createTextBlocks(options);
  return computed(() => splitter.update(typeof source === "function" ? source() : isRef(source) ? source.value : source));
}

// Vue renders a child again only when its props changed: a finished block (the same object) once, a
// group when one of its blocks changed.
const Block = defineComponent({
  name: "TextBlock",
  props: { block: { type: Object, required: true }, render: Function },
  setup(props) {
    return () => h("div", { "data-block": props.block.type }, props.render ? props.render(props.block) : props.block.text);
  },
});
const Group = defineComponent({
  name: "TextBlockGroup",
  props: { blocks: { type: Array, required: true }, render: Function, visibility: String },
  setup(props) {
    return () =>
      h(
        "div",
        { "data-block-group": "", style: groupStyle(props.blocks, props.visibility) },
        props.blocks.map((block) => h(Block, { key: block.key, block, render: props.render })),
      );
  },
});

/**
 * A streaming text as one `<div data-block="<type>">` per block, in one `<div data-block-group>` per 32
 * blocks (off-screen groups are not laid out: `content-visibility`): an update renders only the last block
 * (and one just finished); a finished block's element is never replaced. `renderBlock(block)` returns a
 * block's content (default: its text).
 */
export const TextBlocks = defineComponent({
  name: "TextBlocks",
  props: {
    text: { type: String, required: true },
    markdown: { type: Boolean, default: true },
    renderBlock: Function,
    contentVisibility: { type: String, default: "auto" },
  },
  setup(props) {
    let splitter;
    let markdown;
    const view = computed(() => {
      if (splitter === undefined || markdown !== props.markdown) splitter = createTextBlocks({ markdown: (markdown = props.markdown) });
      return splitter.update(props.text);
    });
    return () => view.value.groups.map((blocks, i) => h(Group, { key: i, blocks, render: props.renderBlock, visibility: props.contentVisibility }));
  },
});
/**
 * A read-only shallow ref of a session's branch points (`session.branches` of pi-agent-wasm/session):
 * `{ index, version, count }` per message of the transcript that has other versions. Switch with
 * `branches.switchTo(index, version)`. Unsubscribes when the calling component (or effect scope) is disposed.
 */
export function useBranches(branches) {
  const points = shallowRef(branches.getSnapshot());
  const unsubscribe = branches.subscribe(() => {
    points.value = branches.getSnapshot();
  });
  if (getCurrentScope()) onScopeDispose(unsubscribe);
  return points;
}
