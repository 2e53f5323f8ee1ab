#!/usr/bin/env node
// Every type check of the package, in order:
//   1. tsconfig.json                 app files + negative checks (skipLibCheck off)
//   2. interop/tsconfig.json         next to pi-ai 1.4.0, and type-by-type against the reference
//   3. interop/tsconfig.reference.json  the same app/negative files against the reference itself
//   3b. v16/tsconfig.v16.json        the 1.6 consumer file (also in step 1) against pi-agent-core 1.6.0
//   4. check-exports.mjs             exported names vs the reference and the runtime
//   5. no-typebox.mjs                a consumer without the optional typebox peer
//
//   node tests/types/run.mjs            against pkg/ (run `npm run build` first)
//   node tests/types/run.mjs --scratch  against src/types.rs + stubs (make-scratch.mjs), no build
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");
const scratch = process.argv.includes("--scratch");
const tsc = join(root, "node_modules/typescript/bin/tsc");
const node = (args) => execFileSync(process.execPath, args, { cwd: root, stdio: "inherit" });
const step = (label, args) => {
  process.stdout.write(`types: ${label}\n`);
  node(args);
};

if (scratch) step("make-scratch", [join(here, "make-scratch.mjs")]);
const suffix = scratch ? "tsconfig.scratch.json" : "tsconfig.json";
step("app + negative", [tsc, "-p", join(here, suffix)]);
step("interop (pi-ai, reference equivalence)", [tsc, "-p", join(here, "interop", suffix)]);
step("the same files against the reference", [tsc, "-p", join(here, "interop/tsconfig.reference.json")]);
step("the 1.6 consumer file against 1.6.0", [tsc, "-p", join(here, "v16/tsconfig.v16.json")]);
step("exports", [join(here, "check-exports.mjs"), ...(scratch ? ["--scratch"] : [])]);
step("without typebox", [join(here, "no-typebox.mjs"), ...(scratch ? ["--scratch"] : [])]);
console.log("types: all checks passed");
