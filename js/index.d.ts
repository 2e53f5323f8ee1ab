// Types of pi-agent-wasm. Everything is declared in ./pi_agent_wasm.d.ts, which wasm-bindgen
// generates from the crate (src/types.rs holds the hand-written declarations).
//
// `export *` is enough for apps' `declare module "pi-agent-wasm" { interface CustomAgentMessages { … } }`
// to merge into the `CustomAgentMessages` declared there (TypeScript >= 3.9).
export * from "./pi_agent_wasm.js";

// The wasm module starts loading when index.js is imported, which does not re-export wasm-bindgen's
// `initSync`: this local type shadows the function the star export would otherwise bring in, so
// `initSync(…)` fails to compile instead of failing at run time.
export type initSync = never;

/**
 * Settles once the WebAssembly module is ready (it starts loading when the package is imported).
 * Rejects with an `Error` naming the module's URL and the reason when it cannot load (an HTTP error,
 * a Content-Security-Policy without `'wasm-unsafe-eval'`, a response that is not WebAssembly); runs
 * then reject with the same error. Nothing needs to await it: runs wait for the module themselves.
 */
export declare const ready: Promise<void>;
