// Reaches the package's wasm linear memory without an export: import this module
// BEFORE pkg/index.js. It wraps `WebAssembly.Instance` (Node: the entry uses
// initSync) and `WebAssembly.instantiate` / `instantiateStreaming` (browsers) so
// the first instance that exports a `memory` is remembered.
//
//   import { wasmMemoryBytes } from "./wasm-memory.mjs";   // first import
//   const pkg = await import("../../../pkg/index.js");
//   wasmMemoryBytes()   // current size of the linear memory in bytes, or undefined
let memory;

function remember(instance) {
	// The build may minify export names: take the exported memory, whatever its name.
	const exports = instance?.exports ?? {};
	const m = Object.values(exports).find((v) => v instanceof WebAssembly.Memory);
	if (!memory && m) memory = m;
	return instance;
}

const W = globalThis.WebAssembly;
if (W && !W.__piMemoryProbe) {
	const Original = W.Instance;
	const Patched = function Instance(module, imports) {
		return remember(new Original(module, imports));
	};
	Patched.prototype = Original.prototype;
	Object.defineProperty(Patched, Symbol.hasInstance, { value: (v) => v instanceof Original });
	W.Instance = Patched;
	const instantiate = W.instantiate.bind(W);
	W.instantiate = async (...args) => {
		const out = await instantiate(...args);
		remember(out instanceof Original ? out : out.instance);
		return out;
	};
	if (typeof W.instantiateStreaming === "function") {
		const streaming = W.instantiateStreaming.bind(W);
		W.instantiateStreaming = async (...args) => {
			const out = await streaming(...args);
			remember(out.instance);
			return out;
		};
	}
	W.__piMemoryProbe = true;
}

/** Size of the package's linear memory in bytes (it only ever grows), or undefined if not seen. */
export function wasmMemoryBytes() {
	return memory?.buffer.byteLength;
}
