// The Svelte setups on a pi Agent: Chat.svelte over a store of each setup's agent.
import { flushSync, mount } from "svelte";
import { writable } from "svelte/store";
import { ui } from "../harness.js";
import Chat from "./Chat.svelte";

/** Mounts Chat.svelte over `createStore(agent)` (a readable store, optionally with `refresh()`). */
export function mountPi(target, { createAgent, createStore, blocks }) {
  ui.agentCreated = performance.now();
  const agent = createAgent();
  const store = createStore(agent);
  mount(Chat, { target, props: { store, blocks } });
  flushSync();
  return {
    send: (text) => agent.prompt(text),
    reset() {
      agent.reset();
      store.refresh?.();
      flushSync();
    },
  };
}

// 1.4.0 has no UI binding: the two stores an app writes for it (its `state.messages` is one array it
// pushes to, so each read copies it).
const read = (agent) => ({ messages: agent.state.messages.slice(), streamingMessage: agent.state.streamingMessage });

/** The simplest store: set on every event. */
export function perUpdateStore(agent) {
  const store = writable(read(agent));
  agent.subscribe(() => store.set(read(agent)));
  return { subscribe: store.subscribe, refresh: () => store.set(read(agent)) };
}

/** A hand-written store set at most once per animation frame. */
export function perFrameStore(agent) {
  const store = writable(read(agent));
  let frame = 0;
  agent.subscribe(() => {
    if (!frame) frame = requestAnimationFrame(() => ((frame = 0), store.set(read(agent))));
  });
  return { subscribe: store.subscribe, refresh: () => store.set(read(agent)) };
}
