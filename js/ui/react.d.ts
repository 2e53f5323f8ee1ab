import type { Agent, AgentSnapshot } from "../index.js";
/** The agent's current snapshot; re-renders at most once per animation frame unless `coalesce: false`. */
export declare function useAgent(agent: Agent, options?: { coalesce?: boolean }): AgentSnapshot;
