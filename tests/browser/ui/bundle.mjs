// Bundling of the UI tests' pages (app/): React, Svelte and Vue from this directory's own prefix
// (package.json + package-lock.json here, installed with `npm ci --prefix tests/browser/ui` when
// node_modules/ is missing), .svelte files compiled with Svelte's compiler, esbuild (the repo's
// devDependency). pkg/index.js stays a separate module served from /pkg/ so its .wasm loads next to it;
// the optional entries (pi-agent-wasm/react, …) are bundled from the package under test.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { entryFile } from "../../support/package-entry.mjs";
import { sveltePlugin } from "../../support/esbuild-svelte.mjs";

const HERE = fileURLToPath(new URL("./", import.meta.url));
const REPO = join(HERE, "../../..");

export function ensureFrameworks() {
	if (["react-dom", "svelte", "vue"].every((name) => existsSync(join(HERE, "node_modules", name)))) return;
	execFileSync("npm", ["ci", "--prefix", HERE, "--no-audit", "--no-fund"], { stdio: "pipe", cwd: REPO });
}

/** Bundles `entryPoints` (name -> file) into outDir; "pi-agent-wasm" stays external (/pkg/index.js). */
export async function bundlePages(entryPoints, outDir, pkgDir) {
	ensureFrameworks();
	const { build } = await import("esbuild");
	const pkgPlugin = {
		name: "pi-agent-wasm",
		setup(b) {
			b.onResolve({ filter: /^pi-agent-wasm$/ }, () => ({ path: "/pkg/index.js", external: true }));
			b.onResolve({ filter: /^pi-agent-wasm\/(react|svelte|vue|blocks)$/ }, (args) => ({ path: entryFile(pkgDir, args.path) }));
		},
	};
	await build({
		entryPoints,
		outdir: outDir,
		bundle: true,
		format: "esm",
		platform: "browser",
		target: "es2022",
		jsx: "automatic",
		conditions: ["browser", "production"],
		// pkg/ui/react.js imports "react": resolve it (and svelte's runtime) from this directory's prefix.
		nodePaths: [join(HERE, "node_modules")],
		define: {
			"process.env.NODE_ENV": '"production"',
			// Vue's esm-bundler build asks for its feature flags.
			__VUE_OPTIONS_API__: "false",
			__VUE_PROD_DEVTOOLS__: "false",
			__VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false",
		},
		plugins: [pkgPlugin, await sveltePlugin(join(HERE, "node_modules"))],
		logLevel: "silent",
	});
}
