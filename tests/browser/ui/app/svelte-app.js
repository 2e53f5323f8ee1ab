// Svelte page: the same transcript through agentStore, rows in a keyed {#each} block.
import { mount, flushSync } from "svelte";
import { agentStore } from "pi-agent-wasm/svelte";
import Chat from "./Chat.svelte";
import { run } from "./harness.js";

const coalesce = new URLSearchParams(location.search).get("coalesce") !== "0";
window.__run = () =>
  run((agent, target) => {
    mount(Chat, { target, props: { store: agentStore(agent, coalesce ? undefined : { coalesce: false }) } });
    flushSync();
  }, coalesce);
window.__ready = true;
