import type { Agent, AgentSnapshot } from "../index.js";
import type { MountTextBlocksOptions } from "./blocks.js";
import type { BranchPoint, Branches } from "../session/index.js";
export { createTextBlocks, mountTextBlocks } from "./blocks.js";
export type { TextBlock, TextBlockType, TextBlocksOptions, TextBlocksView, TextBlocksSplitter, MountTextBlocksOptions } from "./blocks.js";
/** A Svelte readable store of the agent's snapshot. */
export declare function agentStore(
  agent: Agent,
  options?: { coalesce?: boolean },
): { subscribe(run: (value: AgentSnapshot) => void): () => void };
/**
 * A Svelte action rendering a streaming text as blocks: `use:textBlocks={text}` or
 * `use:textBlocks={{ text, markdown, render, contentVisibility }}`. Each update renders only what changed.
 */
export declare function textBlocks(
  node: HTMLElement,
  param: string | ({ text: string } & MountTextBlocksOptions),
): { update(param: string | ({ text: string } & MountTextBlocksOptions)): void; destroy(): void };
/** A Svelte readable store of a session's branch points. */
export declare function branchesStore(branches: Branches): { subscribe(run: (value: readonly BranchPoint[]) => void): () => void };
