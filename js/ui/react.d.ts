import type { ReactNode } from "react";
import type { Agent, AgentSnapshot } from "../index.js";
import type { TextBlock, TextBlocksOptions, TextBlocksView } from "./blocks.js";
import type { BranchPoint, Branches } from "../session/index.js";
export { createTextBlocks, mountTextBlocks } from "./blocks.js";
export type { TextBlock, TextBlockType, TextBlocksOptions, TextBlocksView, TextBlocksSplitter } from "./blocks.js";
/** The agent's current snapshot; re-renders at most once per animation frame unless `coalesce: false`. */
export declare function useAgent(agent: Agent, options?: { coalesce?: boolean }): AgentSnapshot;
/** The blocks of a streaming text; each render reads only what was appended since the last one. */
export declare function useTextBlocks(text: string, options?: TextBlocksOptions): TextBlocksView;
/**
 * A streaming text as one `<div data-block="<type>">` per block. An update renders only the last block
 * (and one just finished); a finished block renders once and its element is never replaced.
 */
export declare function TextBlocks(props: {
  text: string;
  /** Split at markdown blocks (default) or only at blank lines (false). */
  markdown?: boolean;
  /** A block's content (default: its text). Pass a stable function: a new one renders every block again. */
  renderBlock?: (block: TextBlock) => ReactNode;
  /** "auto" (default): off-screen blocks are not laid out; "visible": every block is. */
  contentVisibility?: "auto" | "visible";
}): ReactNode;
/** A session's branch points and the ways to move between versions; re-renders when the points change. */
export declare function useBranches(branches: Branches | undefined): {
  points: readonly BranchPoint[];
  at(index: number): BranchPoint | undefined;
  switchTo(index: number, version: number): Promise<void>;
  edit(index: number, message: import("../index.js").AgentMessage | string): Promise<void>;
  regenerate(index: number): Promise<void>;
};
