// The streaming text renderer (pi-agent-wasm/blocks) in React, Svelte, Vue and without a framework, driven
// by random splits of a markdown text into deltas. After every update the page checks what a user would
// see and what the renderer promises (blocks.test.mjs reads the result):
//   - the blocks' elements, in order, hold exactly the text so far;
//   - a finished block's element is never replaced, and nothing in it changes once it is finished
//     (a MutationObserver on the container);
//   - every block object is rendered at most once, so a finished block renders once.
// The page's own splitter (createTextBlocks) over the same updates says which blocks are finished.
import { createElement } from "react";
import { createRoot } from "react-dom/client";
import { flushSync as reactFlush } from "react-dom";
import { mount as svelteMount, flushSync as svelteFlush } from "svelte";
import { createApp, h, nextTick, shallowRef } from "vue";
import { createTextBlocks, mountTextBlocks } from "pi-agent-wasm/blocks";
import { TextBlocks as ReactBlocks } from "pi-agent-wasm/react";
import { TextBlocks as VueBlocks } from "pi-agent-wasm/vue";
import SvelteBlocks from "./SvelteBlocks.svelte";

/** A markdown text with every kind of block boundary the splitter knows (and a few it must not cut). */
export function markdownText(seed) {
  let s = seed;
  const rnd = (n) => ((s = (s * 1103515245 + 12345) & 0x7fffffff) >>> 16) % n;
  const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau ü 漢字 😀".split(" ");
  const phrase = (n) => Array.from({ length: n }, () => words[rnd(words.length)]).join(" ");
  let out = "";
  for (let i = 0; i < 40; i++) {
    switch (rnd(10)) {
      case 0: out += `${"#".repeat(1 + rnd(3))} ${phrase(3)}\n${rnd(2) ? "\n" : ""}`; break;
      case 1: out += `- ${phrase(4)}\n- ${phrase(3)}\n\n  ${phrase(5)}\n${rnd(2) ? "\n" : ""}- ${phrase(2)}\n\n`; break;
      case 2: out += "```" + (rnd(2) ? "js" : "") + `\nconst a = 1;\n\n${phrase(3)}\n` + "```\n\n"; break;
      case 3: out += `~~~~\n${phrase(2)}\n\n~~~\n${phrase(2)}\n~~~~\n${phrase(3)}\n\n`; break;
      case 4: out += `> ${phrase(5)}\n> ${phrase(2)}\n\n`; break;
      case 5: out += `    indented code\n\n    more\n\n${phrase(4)}\n\n`; break;
      case 6: out += `${phrase(6)}\n${"=".repeat(3)}\n\n`; break;
      case 7: out += `1. ${phrase(3)}\n2) ${phrase(2)}\n\n\n${phrase(3)}\r\n\r\n`; break;
      default: out += `${phrase(8 + rnd(30))}${rnd(3) ? "\n\n" : "\n"}`;
    }
  }
  return out;
}

/** `text` cut into deltas of 1 to `max` characters (by code unit: a delta may end inside a surrogate pair). */
export function deltasOf(text, seed, max) {
  let s = seed;
  const rnd = (n) => ((s = (s * 1103515245 + 12345) & 0x7fffffff) >>> 16) % n;
  const out = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + rnd(max);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

// Renderers, each `{ update(text): Promise<void>, container }`; `onRender(block)` is called per render of a block.
const renderers = {
  dom(container, onRender) {
    const m = mountTextBlocks(container, { render: (block, el) => (onRender(block), (el.textContent = block.text)) });
    return { update: async (text) => m.update(text) };
  },
  react(container, onRender) {
    const renderBlock = (block) => (onRender(block), block.text);
    const root = createRoot(container);
    return { update: async (text) => reactFlush(() => root.render(createElement(ReactBlocks, { text, renderBlock }))) };
  },
  vue(container, onRender) {
    const text = shallowRef("");
    const renderBlock = (block) => (onRender(block), block.text);
    createApp({ render: () => h(VueBlocks, { text: text.value, renderBlock }) }).mount(container);
    return {
      async update(next) {
        text.value = next;
        await nextTick();
      },
    };
  },
  svelte(container, onRender) {
    const render = (block, el) => (onRender(block), (el.textContent = block.text));
    const component = svelteMount(SvelteBlocks, { target: container, props: { render } });
    return {
      async update(next) {
        component.setText(next);
        svelteFlush();
      },
    };
  },
};

/** Streams `deltas` into a fresh renderer of `kind`; returns the problems found (none when it passes). */
export async function run(kind, deltas) {
  const host = document.createElement("div");
  document.body.appendChild(host);
  // Renders per block object, and per key: the last object rendered and the renders after it was finished.
  const renders = new Map();
  const lastRendered = [];
  const rendersAfterFinished = [];
  const renderer = renderers[kind](host, (block) => {
    renders.set(block, (renders.get(block) ?? 0) + 1);
    lastRendered[block.key] = block;
    if (rendersAfterFinished[block.key] !== undefined) rendersAfterFinished[block.key]++;
  });
  const reference = createTextBlocks();
  const problems = [];
  const finishedNodes = [];
  let mutatedFinished = 0;
  const consume = (records) => {
    for (const r of records) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (finishedNodes.includes(el?.closest("[data-block]"))) mutatedFinished++;
      for (const node of r.removedNodes) if (finishedNodes.includes(node)) problems.push(`${kind}: a finished block's element was removed`);
    }
  };
  const observer = new MutationObserver(consume);
  observer.observe(host, { subtree: true, childList: true, characterData: true, attributes: true });
  let text = "";
  for (const delta of deltas) {
    text += delta;
    await renderer.update(text);
    // This update's mutations, before the blocks it finished are marked.
    consume(observer.takeRecords());
    const view = reference.update(text);
    const elements = [...host.querySelectorAll("[data-block]")];
    const shown = elements.map((e) => e.textContent).join("");
    if (shown !== text) {
      problems.push(`${kind}: the blocks show ${shown.length} characters, the text has ${text.length} (after ${text.length} characters)`);
      break;
    }
    for (let i = 0; i < view.done; i++) {
      if (finishedNodes[i] === undefined) {
        finishedNodes[i] = elements[i];
        rendersAfterFinished[i] = 0;
        const block = view.groups[Math.floor(i / 32)][i % 32];
        if (lastRendered[i]?.text !== block.text) problems.push(`${kind}: finished block ${i} was last rendered with other text`);
      } else if (finishedNodes[i] !== elements[i]) problems.push(`${kind}: the element of finished block ${i} was replaced`);
    }
  }
  consume(observer.takeRecords());
  observer.disconnect();
  if (mutatedFinished > 0) problems.push(`${kind}: ${mutatedFinished} mutations inside finished blocks`);
  const view = reference.update(text);
  const all = view.groups.flat();
  for (const [block, n] of renders) if (n > 1) problems.push(`${kind}: block ${block.key} (${block.type}) rendered ${n} times`);
  rendersAfterFinished.forEach((n, key) => n > 0 && problems.push(`${kind}: finished block ${key} rendered ${n} times after it was finished`));
  host.remove();
  return { problems: [...new Set(problems)], blocks: all.length, done: view.done, types: [...new Set(all.map((b) => b.type))], length: text.length };
}

window.__blocks = { run, markdownText, deltasOf };
window.__ready = true;
