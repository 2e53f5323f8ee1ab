import type { Agent, AgentSnapshot } from "../index.js";
/** A Svelte readable store of the agent's snapshot. */
export declare function agentStore(
  agent: Agent,
  options?: { coalesce?: boolean },
): { subscribe(run: (value: AgentSnapshot) => void): () => void };
