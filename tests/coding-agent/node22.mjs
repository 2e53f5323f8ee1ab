// Loaded with `node --import` before pi-coding-agent 1.4.0's dist/cli.js (it declares Node >= 22.19):
// the three Node 22 APIs it touches, supplied on Node 20. Nothing else is changed.
//   - `Promise.withResolvers` (used by the Anthropic SDK's helpers);
//   - `worker_threads.markAsUncloneable` (undici reads it at load, through `require`), a no-op here;
//   - `fs.globSync`, imported by name from "node:fs" (the package manager): a loader hook hands the
//     coding agent's modules a "node:fs" that adds it (node22-fs.mjs).
import { register } from "node:module";
import { createRequire } from "node:module";

if (typeof Promise.withResolvers !== "function") {
	Promise.withResolvers = function withResolvers() {
		let resolve;
		let reject;
		const promise = new this((res, rej) => {
			resolve = res;
			reject = rej;
		});
		return { promise, resolve, reject };
	};
}

const workerThreads = createRequire(import.meta.url)("node:worker_threads");
if (typeof workerThreads.markAsUncloneable !== "function") workerThreads.markAsUncloneable = () => {};

register("./node22-hooks.mjs", import.meta.url);
