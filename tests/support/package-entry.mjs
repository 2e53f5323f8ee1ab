// The file a built package's `exports` map gives for a specifier such as "pi-agent-wasm/react", for
// tests that bundle against pkg/ without installing it.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function entryFile(pkgDir, specifier) {
  const { name, exports } = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const sub = specifier === name ? "." : `.${specifier.slice(name.length)}`;
  const target = exports[sub];
  const file = typeof target === "string" ? target : target?.default;
  if (typeof file !== "string") throw new Error(`${specifier} is not an entry of ${pkgDir}`);
  return join(pkgDir, file);
}
