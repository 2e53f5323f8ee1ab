// Bundles the UI benchmark's setups (tests/bench/ui/app/) with esbuild as an app's production build
// would: one bundle per setup (React or Svelte, the agent, the adapter, the page's code) in
// `outDir`, and the agent's worker as its own bundle (`agent-worker.js`, pi-agent-wasm/worker-script),
// with the package's .wasm next to them (the package's browser entry fetches it from
// `new URL(…, import.meta.url)`, as Vite and webpack emit it). The frameworks and the AI SDK come from this
// directory's prefix (installed with `npm ci --prefix tests/bench/ui` when missing).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { entryFile } from "../../support/package-entry.mjs";
import { sveltePlugin } from "../../support/esbuild-svelte.mjs";

export const here = dirname(fileURLToPath(import.meta.url));
const APP = join(here, "app");
const ROOT = join(here, "../../..");

/** Setup id -> entry file (relative to app/). */
export const SETUPS = {
  "react-aisdk": "react/aisdk.jsx",
  "react-ref-update": "react/ref-update.jsx",
  "react-ref-frame": "react/ref-frame.jsx",
  "react-ours": "react/ours.jsx",
  "react-worker": "react/worker.jsx",
  "react-ours-blocks": "react/ours-blocks.jsx",
  "react-worker-blocks": "react/worker-blocks.jsx",
  "svelte-ref-update": "svelte/ref-update.js",
  "svelte-ref-frame": "svelte/ref-frame.js",
  "svelte-ours": "svelte/ours.js",
  "svelte-worker": "svelte/worker.js",
  "svelte-ours-blocks": "svelte/ours-blocks.js",
};

export function ensureDependencies() {
  if (["react-dom", "svelte", "ai", "@ai-sdk/react"].every((name) => existsSync(join(here, "node_modules", name)))) return;
  execFileSync("npm", ["ci", "--prefix", here, "--no-audit", "--no-fund"], { stdio: "pipe", cwd: ROOT });
}

export async function buildSetups(pkgDir, outDir, setups = Object.keys(SETUPS), { minify = true } = {}) {
  ensureDependencies();
  mkdirSync(outDir, { recursive: true });
  const pkgPlugin = {
    name: "pi-agent-wasm",
    setup(b) {
      // The package's browser entry (what Vite and webpack resolve), bundled; its .wasm is copied beside.
      b.onResolve({ filter: /^pi-agent-wasm$/ }, () => ({ path: join(pkgDir, "index.js") }));
      b.onResolve({ filter: /^pi-agent-wasm\// }, (args) => ({ path: entryFile(pkgDir, args.path) }));
    },
  };
  const entryPoints = Object.fromEntries(setups.map((id) => [id, join(APP, SETUPS[id])]));
  entryPoints["agent-worker"] = join(pkgDir, "worker/script.js");
  await esbuild.build({
    entryPoints,
    outdir: outDir,
    bundle: true,
    splitting: false,
    minify,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    conditions: ["browser", "production"],
    // React, Svelte and the AI SDK from this prefix; the reference from the repository's devDependencies.
    nodePaths: [join(here, "node_modules"), join(ROOT, "node_modules")],
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: [pkgPlugin, await sveltePlugin(join(here, "node_modules"))],
    logLevel: "error",
  });
  copyFileSync(join(pkgDir, "pi_agent_wasm_bg.wasm"), join(outDir, "pi_agent_wasm_bg.wasm"));
}
