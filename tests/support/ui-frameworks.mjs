// React, react-dom, Svelte and Vue for the browser tests that bundle UI code: they live in
// tests/browser/ui's own npm prefix (its package.json and package-lock.json), installed with `npm ci`
// there when missing.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const PREFIX = fileURLToPath(new URL("../browser/ui/", import.meta.url));
/** The directory the frameworks resolve from (esbuild's `nodePaths`). */
export const UI_NODE_MODULES = join(PREFIX, "node_modules");

export function ensureUiFrameworks() {
  if (["react-dom", "svelte", "vue"].every((name) => existsSync(join(UI_NODE_MODULES, name)))) return;
  execFileSync("npm", ["ci", "--prefix", PREFIX, "--no-audit", "--no-fund"], { stdio: "pipe", cwd: join(PREFIX, "../../..") });
}
