import type { ShallowRef } from "vue";
import type { Agent, AgentSnapshot } from "../index.js";
import type { BranchPoint, Branches } from "../session/index.js";
/**
 * The agent's current snapshot as a read-only shallow ref; updated at most once per animation frame
 * unless `coalesce: false`. Call it in `setup()` (or an effect scope): it unsubscribes when that is disposed.
 */
export declare function useAgent(agent: Agent, options?: { coalesce?: boolean }): Readonly<ShallowRef<AgentSnapshot>>;
/** A read-only shallow ref of a session's branch points; call it in `setup()` (or an effect scope). */
export declare function useBranches(branches: Branches): Readonly<ShallowRef<readonly BranchPoint[]>>;
