// React binding for pi-agent-wasm: render an Agent's state with
// useSyncExternalStore. The snapshot keeps its identity until the state
// changes, and finished message objects keep theirs, so memoised rows of
// finished messages never re-render while a response streams.
import { useCallback, useSyncExternalStore } from "react";

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
