// The shipped package's wasm has the short import/export names that
// scripts/build.mjs gives it, and the generated JS provides every one: if
// wasm-bindgen's output changes shape, the build stops (see
// `shortenImportExportNames`), and this test fails on a package built any other way.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "../../pkg");
const wasmPath = join(pkg, "pi_agent_wasm_bg.wasm");
const bytes = existsSync(wasmPath) ? readFileSync(wasmPath) : undefined;
const module = bytes && new WebAssembly.Module(bytes);
// A --dev or --profiling build keeps the name section and the generated names.
const release = module !== undefined && WebAssembly.Module.customSections(module, "name").length === 0;

test("release wasm: every import is a short field of module `a`, every export a short name", { skip: !release && "pkg/ is not a release build" }, () => {
  const imports = WebAssembly.Module.imports(module);
  assert.ok(imports.length > 50, `only ${imports.length} imports`);
  for (const { module: mod, name } of imports) {
    assert.equal(mod, "a", `import ${mod}.${name}`);
    assert.match(name, /^[A-Za-z_$][\w$]{0,2}$/, `import a.${name}`);
  }
  for (const { name } of WebAssembly.Module.exports(module)) assert.match(name, /^[A-Za-z_$][\w$]{0,2}$/, `export ${name}`);
});

test("release JS: no wasm-bindgen long import names remain, and the package links and runs", { skip: !release && "pkg/ is not a release build" }, async () => {
  const js = readFileSync(join(pkg, "pi_agent_wasm.js"), "utf8");
  assert.doesNotMatch(js, /__wbg_\w+_[0-9a-f]{16}/);
  assert.doesNotMatch(js, /__wbindgen_(?:malloc|realloc|free|exn_store)\b/);
  // Every snippet the JS imports exists (wasm-bindgen copies each extern block's file).
  const snippets = [...js.matchAll(/from\s*"(\.\/snippets\/[^"]+)"/g)].map((m) => m[1]);
  assert.ok(snippets.length > 0);
  for (const s of snippets) assert.ok(existsSync(join(pkg, s)), s);
  // Linking fails with a LinkError if the import object misses a minified name.
  const { Agent } = await import(pathToFileURL(join(pkg, "index.js")).href);
  const agent = new Agent({ streamFn: () => { throw new Error("unused"); } });
  assert.equal(agent.state.isStreaming, false);
});

test("every JS file under src/ ships in pkg/snippets at the same path", {}, () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
  const [crate] = readdirSync(join(pkg, "snippets"));
  const walk = (dir) => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : []);
  for (const file of walk("src")) assert.ok(existsSync(join(pkg, "snippets", crate, file)), `${file} is not referenced by any extern block`);
});
