// wasm-bindgen's initialisation API is not part of the package (index.js initialises on import).
import * as pkg from "pi-agent-wasm";

// @ts-expect-error -- `initSync` is not exported at run time
pkg.initSync(new Uint8Array());
// @ts-expect-error -- nor is the default `init`
pkg.default();
