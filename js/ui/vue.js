// Vue 3 binding for pi-agent-wasm: an Agent's state as a shallow ref. The
// snapshot keeps its identity until the state changes and finished message
// objects keep theirs, so child components given a finished message as a
// prop never re-render while a response streams.
import { getCurrentScope, onScopeDispose, shallowRef } from "vue";

/**
 * A read-only shallow ref of `agent.getSnapshot()`, updated at most once per
 * animation frame while a response streams (pass `{ coalesce: false }` for
 * every change). Unsubscribes when the calling component (or effect scope)
 * is disposed.
 */
export function useAgent(agent, options) {
  const snapshot = shallowRef(agent.getSnapshot());
  // A shallow ref triggers only on a new value: an unchanged snapshot renders nothing.
  const unsubscribe = agent.subscribeState(() => {
    snapshot.value = agent.getSnapshot();
  }, options);
  if (getCurrentScope()) onScopeDispose(unsubscribe);
  // Typed read-only (vue.d.ts); a readonly proxy would wrap the snapshot in proxies.
  return snapshot;
}

/**
 * A read-only shallow ref of a session's branch points (`session.branches` of pi-agent-wasm/session):
 * `{ index, version, count }` per message of the transcript that has other versions. Switch with
 * `branches.switchTo(index, version)`. Unsubscribes when the calling component (or effect scope) is disposed.
 */
export function useBranches(branches) {
  const points = shallowRef(branches.getSnapshot());
  const unsubscribe = branches.subscribe(() => {
    points.value = branches.getSnapshot();
  });
  if (getCurrentScope()) onScopeDispose(unsubscribe);
  return points;
}
