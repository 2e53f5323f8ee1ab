// pi-agent-wasm/blocks as the README uses it (the adapters re-export the same functions).
import { createTextBlocks, mountTextBlocks, type TextBlock, type TextBlocksView } from "pi-agent-wasm/blocks";

const splitter = createTextBlocks({ markdown: true });
const view: TextBlocksView = splitter.update("# Title\n\nSome text");
const finished: readonly TextBlock[] = view.groups.flat().slice(0, view.done);
const kinds: string[] = finished.map((b) => `${b.key} ${b.type} ${b.lang ?? ""} ${b.text.length}`);
const last: TextBlock | undefined = view.last;
// @ts-expect-error blocks are read-only
if (last) last.text = "";

declare const element: HTMLElement;
const mounted = mountTextBlocks(element, { render: (block, el) => (el.textContent = block.text), contentVisibility: "visible" });
mounted.update(view.text + kinds.join());
mounted.destroy();
// @ts-expect-error only "auto" or "visible"
mountTextBlocks(element, { contentVisibility: "hidden" });
