// Mounts a Vue component whose setup() is the README's example (example.js exports it as `setup`); `state`
// receives what it declares.
import { createApp, h } from "vue";
import { setup } from "./example.js";

export function mount(target) {
  const state = {};
  const app = createApp({
    setup() {
      Object.assign(state, setup());
      return () => h("div");
    },
  });
  app.mount(target);
  return { app, state };
}
