import type { Agent, AgentSnapshot } from "../index.js";
import type { BranchPoint, Branches } from "../session/index.js";
/** The agent's current snapshot; re-renders at most once per animation frame unless `coalesce: false`. */
export declare function useAgent(agent: Agent, options?: { coalesce?: boolean }): AgentSnapshot;
/** A session's branch points and the ways to move between versions; re-renders when the points change. */
export declare function useBranches(branches: Branches | undefined): {
  points: readonly BranchPoint[];
  at(index: number): BranchPoint | undefined;
  switchTo(index: number, version: number): Promise<void>;
  edit(index: number, message: import("../index.js").AgentMessage | string): Promise<void>;
  regenerate(index: number): Promise<void>;
};
