// Svelte binding for pi-agent-wasm: a readable store of an Agent's snapshot
// (the store contract needs no import from svelte, so it works with 3, 4 and 5).

/** A readable store whose value is `agent.getSnapshot()`, updated at most once per frame by default. */
export function agentStore(agent, options) {
  return {
    subscribe(run) {
      let last = agent.getSnapshot();
      run(last);
      // Svelte treats every object it is given as a new value: pass only new snapshots.
      const unsubscribe = agent.subscribeState(() => {
        const next = agent.getSnapshot();
        if (next !== last) run((last = next));
      }, options);
      return () => {
        unsubscribe();
      };
    },
  };
}
