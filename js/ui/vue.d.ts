import type { ComputedRef, DefineComponent, Ref, ShallowRef, VNodeChild } from "vue";
import type { Agent, AgentSnapshot } from "../index.js";
import type { TextBlock, TextBlocksOptions, TextBlocksView } from "./blocks.js";
import type { BranchPoint, Branches } from "../session/index.js";
export { createTextBlocks, mountTextBlocks } from "./blocks.js";
export type { TextBlock, TextBlockType, TextBlocksOptions, TextBlocksView, TextBlocksSplitter } from "./blocks.js";
/**
 * The agent's current snapshot as a read-only shallow ref; updated at most once per animation frame
 * unless `coalesce: false`. Call it in `setup()` (or an effect scope): it unsubscribes when that is disposed.
 */
export declare function useAgent(agent: Agent, options?: { coalesce?: boolean }): Readonly<ShallowRef<AgentSnapshot>>;
/** The blocks of a streaming text (a getter or a ref of it); each change reads only what was appended. */
export declare function useTextBlocks(source: (() => string) | Ref<string> | string, options?: TextBlocksOptions): ComputedRef<TextBlocksView>;
/**
 * A streaming text as one `<div data-block="<type>">` per block. An update renders only the last block
 * (and one just finished); a finished block renders once and its element is never replaced.
 */
export declare const TextBlocks: DefineComponent<{
  text: string;
  markdown?: boolean;
  renderBlock?: (block: TextBlock) => VNodeChild;
  contentVisibility?: "auto" | "visible";
}>;
/** A read-only shallow ref of a session's branch points; call it in `setup()` (or an effect scope). */
export declare function useBranches(branches: Branches): Readonly<ShallowRef<readonly BranchPoint[]>>;
