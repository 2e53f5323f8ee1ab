// Svelte binding for pi-agent-wasm: a readable store of an Agent's snapshot
// (the store contract needs no import from svelte, so it works with 3, 4 and 5),
// and a streaming text rendered as blocks.
import { mountTextBlocks } from "./blocks.js";

export { createTextBlocks, mountTextBlocks } from "./blocks.js";

/** A readable store whose value is `agent.getSnapshot()`, updated at most once per frame by default. */
export function agentStore(agent, options) {
  return {
    subscribe(run) {
      let last = agent.getSnapshot();
      run(last);
      // Svelte treats every object it is given as a new value: pass only new snapshots.
      const unsubscribe = agent.subscribeState(() => {
        const next = agent.getSnapshot();
        if (next !== last) run((last = next));
      }, options);
      return () => {
        unsubscribe();
      };
    },
  };
}

/**
 * An action rendering a streaming text into its element as blocks (`mountTextBlocks`):
 * `<div use:textBlocks={text}></div>`, or `use:textBlocks={{ text, markdown, render, contentVisibility }}`.
 * Each update renders only the blocks that changed.
 */
export function textBlocks(node, param) {
  const read = (p) => (typeof p === "string" ? [p, undefined] : [p?.text ?? "", p]);
  let [text, options] = read(param);
  let mounted = mountTextBlocks(node, options);
  mounted.update(text);
  return {
    update(next) {
      const [nextText, nextOptions] = read(next);
      // Other options: render again from scratch (a new render function is a new way to fill elements).
      if (nextOptions?.markdown !== options?.markdown || nextOptions?.render !== options?.render || nextOptions?.contentVisibility !== options?.contentVisibility) {
        mounted.destroy();
        mounted = mountTextBlocks(node, nextOptions);
      }
      options = nextOptions;
      text = nextText;
      mounted.update(text);
    },
    destroy() {
      mounted.destroy();
    },
  };
}

/**
 * A readable store of a session's branch points (`session.branches` of pi-agent-wasm/session):
 * `{ index, version, count }` per message of the transcript that has other versions. Switch with
 * `branches.switchTo(index, version)`; edit and regenerate with `branches.edit` and `branches.regenerate`.
 */
export function branchesStore(branches) {
  return {
    subscribe(run) {
      let last = branches.getSnapshot();
      run(last);
      const unsubscribe = branches.subscribe(() => {
        const next = branches.getSnapshot();
        if (next !== last) run((last = next));
      });
      return () => {
        unsubscribe();
      };
    },
  };
}
