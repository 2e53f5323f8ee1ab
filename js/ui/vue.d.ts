import type { ShallowRef } from "vue";
import type { Agent, AgentSnapshot } from "../index.js";
/**
 * The agent's current snapshot as a read-only shallow ref; updated at most once per animation frame
 * unless `coalesce: false`. Call it in `setup()` (or an effect scope): it unsubscribes when that is disposed.
 */
export declare function useAgent(agent: Agent, options?: { coalesce?: boolean }): Readonly<ShallowRef<AgentSnapshot>>;
