// React binding for pi-agent-wasm: render an Agent's state with
// useSyncExternalStore. The snapshot keeps its identity until the state
// changes, and finished message objects keep theirs, so memoised rows of
// finished messages never re-render while a response streams.
import { useCallback, useMemo, useSyncExternalStore } from "react";

/**
 * The agent's current snapshot; re-renders at most once per animation frame
 * while a response streams (pass `{ coalesce: false }` for every change).
 */
export function useAgent(agent, options) {
  const coalesce = options?.coalesce;
  const subscribe = useCallback(
    (onChange) => agent.subscribeState(onChange, coalesce === undefined ? undefined : { coalesce }),
    [agent, coalesce],
  );
  const snapshot = useCallback(() => agent.getSnapshot(), [agent]);
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}

const NO_POINTS = Object.freeze([]);
const noop = () => () => false;

/**
 * The branches of a session's transcript (`session.branches` of pi-agent-wasm/session, or undefined
 * before the session is attached): `points`, the messages that have other versions
 * (`{ index, version, count }`), `at(index)`, and `switchTo`, `edit` and `regenerate`. Re-renders only
 * when the points change.
 */
export function useBranches(branches) {
  const subscribe = useCallback((onChange) => (branches ? branches.subscribe(onChange) : noop()), [branches]);
  const snapshot = useCallback(() => (branches ? branches.getSnapshot() : NO_POINTS), [branches]);
  const points = useSyncExternalStore(subscribe, snapshot, snapshot);
  return useMemo(() => branchView(branches, points), [branches, points]);
}

function branchView(branches, points) {
  const refuse = () => Promise.reject(new Error("pi-agent-wasm/react: useBranches() has no session yet"));
  return {
    points,
    at: (index) => points.find((p) => p.index === index),
    switchTo: branches ? (index, version) => branches.switchTo(index, version) : refuse,
    edit: branches ? (index, message) => branches.edit(index, message) : refuse,
    regenerate: branches ? (index) => branches.regenerate(index) : refuse,
  };
}
