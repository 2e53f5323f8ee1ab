// Svelte binding for pi-agent-wasm: a readable store of an Agent's snapshot
// (the store contract needs no import from svelte, so it works with 3, 4 and 5).

/** A readable store whose value is `agent.getSnapshot()`, updated at most once per frame by default. */
export function agentStore(agent, options) {
  return {
    subscribe(run) {
      run(agent.getSnapshot());
      const unsubscribe = agent.subscribeState(() => run(agent.getSnapshot()), options);
      return () => {
        unsubscribe();
      };
    },
  };
}
