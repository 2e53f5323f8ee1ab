// Reports a Rust panic (src/panic.rs) on the console.

export function reportPanic(message) {
  console.error(message);
}
