import type { Agent, AgentSnapshot } from "../index.js";
import type { BranchPoint, Branches } from "../session/index.js";
/** A Svelte readable store of the agent's snapshot. */
export declare function agentStore(
  agent: Agent,
  options?: { coalesce?: boolean },
): { subscribe(run: (value: AgentSnapshot) => void): () => void };
/** A Svelte readable store of a session's branch points. */
export declare function branchesStore(branches: Branches): { subscribe(run: (value: readonly BranchPoint[]) => void): () => void };
