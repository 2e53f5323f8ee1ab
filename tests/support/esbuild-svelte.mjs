// An esbuild plugin that compiles .svelte files with the Svelte compiler of a test's own prefix (the
// UI tests' and the UI benchmark's): client code, runes, production mode.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The plugin, with the compiler of the `svelte` package under `nodeModules`. */
export async function sveltePlugin(nodeModules) {
	const { compile } = await import(join(nodeModules, "svelte/src/compiler/index.js"));
	return {
		name: "svelte",
		setup(b) {
			b.onLoad({ filter: /\.svelte$/ }, (args) => {
				const source = readFileSync(args.path, "utf8");
				const { js, warnings } = compile(source, { filename: args.path, generate: "client", runes: true, dev: false });
				return { contents: js.code, loader: "js", resolveDir: dirname(args.path), warnings: warnings.map((w) => ({ text: w.message })) };
			});
		},
	};
}
