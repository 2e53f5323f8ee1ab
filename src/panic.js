// Reports a Rust panic (src/panic.rs) on the console. `message` is empty when
// the panic's message was formatted (the release build keeps no formatting
// code); the location is then the clue.

export function reportPanic(message, file, line, column) {
  const where = file ? ` at ${file}:${line}:${column}` : "";
  console.error(`pi-agent-wasm: internal error (a bug; please report it): ${message || "panicked"}${where}`);
}
