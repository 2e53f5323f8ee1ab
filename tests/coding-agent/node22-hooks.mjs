// Module hooks for node22.mjs: "node:fs" (or "fs") imported from the coding agent's own modules
// resolves to node22-fs.mjs, which adds `globSync`.
const FS_SHIM = new URL("./node22-fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
	if ((specifier === "node:fs" || specifier === "fs") && context.parentURL?.includes("/@earendil-works/pi-coding-agent/")) {
		return { url: FS_SHIM, shortCircuit: true };
	}
	return next(specifier, context);
}
