// pi-agent-wasm/session's store in memory: for tests, Node, or a page that opts out of persistence.
// Its logs live in the realm that made it, so a session on a WorkerAgent writes to it from the page.
// Like a store shared by several writers, it checks the length a write says it extends.
import { checkLength } from "../conflict.js";

/** A store keeping sessions in memory (tests, Node, or a page that opts out of persistence). */
export function memoryStore() {
  const logs = new Map();
  return {
    load: async (id) => logs.get(id) ?? "",
    loadFrom: async (id, from) => (logs.get(id) ?? "").slice(from),
    append: async (id, text, options) => {
      const log = logs.get(id) ?? "";
      checkLength(log.length, options);
      logs.set(id, log + text);
    },
    replace: async (id, text, options) => {
      checkLength((logs.get(id) ?? "").length, options);
      logs.set(id, text);
    },
    clear: async (id) => void logs.delete(id),
  };
}
