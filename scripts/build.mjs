#!/usr/bin/env node
// Builds the npm package into pkg/: release wasm -> wasm-bindgen -> wasm-opt
// (binaryen from npm; Debian's binaryen 108 corrupts wasm-bindgen output) ->
// short import/export names -> entry files -> package.json -> minified JS,
// then prints the sizes.
//
//   node scripts/build.mjs            release build
//   node scripts/build.mjs --dev      debug wasm, no wasm-opt, no minifying (fast, for iterating)
//   node scripts/build.mjs --profiling --out DIR
//                                     release wasm and wasm-opt as shipped, but with the name
//                                     section kept, import/export names and JS left as generated
//                                     (for tests/bench/profile.mjs: named frames)
import { execFileSync } from "node:child_process";
import { buildSync, transformSync } from "esbuild";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outArg = process.argv.indexOf("--out");
const finalPkg = outArg >= 0 ? resolve(process.argv[outArg + 1]) : join(root, "pkg");
// Built next to pkg/ and swapped in at the end, so a running test never sees a half-built package.
const pkg = join(root, `pkg.tmp-${process.pid}`);
const dev = process.argv.includes("--dev");
const profiling = process.argv.includes("--profiling");
const NAME = "pi_agent_wasm";

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], ...opts });
}

const profile = dev ? "debug" : "release";
run("cargo", ["build", "--lib", "--target", "wasm32-unknown-unknown", ...(dev ? [] : ["--release"])]);
const targetDir = resolve(root, process.env.CARGO_TARGET_DIR || "target");
const built = join(targetDir, "wasm32-unknown-unknown", profile, `${NAME}.wasm`);

rmSync(pkg, { recursive: true, force: true });
mkdirSync(pkg, { recursive: true });
run("wasm-bindgen", [
  "--target", "web",
  "--weak-refs",
  "--out-dir", pkg,
  "--out-name", NAME,
  ...(dev || profiling ? [] : ["--remove-name-section", "--remove-producers-section"]),
  built,
]);

const wasmPath = join(pkg, `${NAME}_bg.wasm`);
const bindgenJs = join(pkg, `${NAME}.js`);
inlineCatchingImports();
if (!dev) {
  const wasmOpt = join(root, "node_modules/.bin/wasm-opt");
  if (!existsSync(wasmOpt)) throw new Error("node_modules/.bin/wasm-opt is missing: run `npm ci` (binaryen from npm)");
  const features = ["--enable-reference-types", "--enable-bulk-memory", "--enable-nontrapping-float-to-int",
    "--enable-sign-ext", "--enable-mutable-globals"];
  // The module owns its memory (fresh, zero-filled) and Rust never uses the
  // first KiB, so binaryen may drop zero data and fold low offsets.
  // A second -Oz round after GUFA (whole-program type/constant flow) finds
  // more to fold: about 0.5 kB gzip.
  run(wasmOpt, ["-Oz", "--low-memory-unused", "--zero-filled-memory", "--gufa-optimizing", "-Oz", ...features,
    ...(profiling ? ["-g"] : []), wasmPath, "-o", wasmPath]);
  if (!profiling) {
    shortenImportExportNames(wasmOpt, features);
    // With one-letter names, -Oz repeated until nothing changes folds more
    // (code that differed only in the names it called): about 0.4 kB gzip.
    run(wasmOpt, ["-Oz", "--converge", "--low-memory-unused", "--zero-filled-memory", ...features, wasmPath, "-o", wasmPath]);
  }
}

// An import the Rust side declares with `catch` is generated as
// `function() { return handleError(function (args) { body }, arguments); }`: every
// call builds an `arguments` object and goes through `apply`, and they are most of
// the calls a tool call or a prompt makes out of wasm. Each becomes
// `function (args) { try { body } catch (e) { handleError(e); } }`, with the same
// exception handling. Any other shape stops the build (a new wasm-bindgen: update
// this), and none of the wrapper calls may be left.
function inlineCatchingImports() {
  let js = readFileSync(bindgenJs, "utf8");
  const fail = (why) => {
    throw new Error(`build: cannot inline the catching imports: ${why} (the generated JS changed shape; update scripts/build.mjs)`);
  };
  const wrapper = "function handleError(f, args) {\n    try {\n        return f.apply(this, args);\n    } catch (e) {\n" +
    "        const idx = addToExternrefTable0(e);\n        wasm.__wbindgen_exn_store(idx);\n    }\n}\n";
  if (js.split(wrapper).length !== 2) fail("handleError is not the expected wrapper");
  const wrapped = js.split("handleError(function").length - 1;
  let rewritten = 0;
  js = js.replace(/: function\(\) \{ return handleError\(function \(([^)]*)\) \{\n([\s\S]*?)\n        \}, arguments\); \},/g,
    (_, params, body) => {
      if (/\b(this|arguments)\b/.test(body)) fail("an import body reads `this` or `arguments`");
      rewritten++;
      return `: function(${params}) { try {\n${body}\n        } catch (e) { handleError(e); } },`;
    });
  if (rewritten !== wrapped || rewritten === 0) fail(`${rewritten} of ${wrapped} catching imports matched`);
  js = js.replace(wrapper, "function handleError(e) {\n    const idx = addToExternrefTable0(e);\n    wasm.__wbindgen_exn_store(idx);\n}\n");
  if (/handleError\((?!e\))/.test(js)) fail("a handleError call of another shape is left");
  writeFileSync(bindgenJs, js);
}

// wasm-bindgen names every import `./${NAME}_bg.js`:`__wbg_<name>_<16 hex>` (or
// a snippet path and function name) and exports keep their Rust names: about
// 14 kB of names in the wasm, and the same keys again in the JS glue. binaryen
// renames them to one module `a` with one- or two-letter fields and prints the
// mapping; the JS import object and every `wasm.<export>` are rewritten to
// match. The rewrite expects wasm-bindgen 0.2.130's shapes exactly: any other
// shape (a new wasm-bindgen, a new kind of import) stops the build with the
// reason, and the result is checked against the wasm's own import and export
// lists, so a rewrite cannot miss silently. tests/js/build-shape.test.mjs checks
// the shipped package the same way.
function shortenImportExportNames(wasmOpt, features) {
  const minified = join(pkg, "minified.wasm");
  const out = execFileSync(wasmOpt, ["--minify-imports-and-exports-and-modules", ...features, wasmPath, "-o", minified],
    { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 24 });
  const skip = (why) => {
    rmSync(minified, { force: true });
    throw new Error(`build: cannot shorten import/export names: ${why} (the generated JS changed shape; update scripts/build.mjs)`);
  };
  let map;
  try {
    map = JSON.parse(out.slice(out.indexOf("{")));
  } catch {
    return skip("no mapping from wasm-opt");
  }
  let js = readFileSync(bindgenJs, "utf8");
  const ident = /^[A-Za-z_$][\w$]*$/;
  const bg = `./${NAME}_bg.js`;
  // Namespace imports of the snippet modules: one variable per module.
  const nsLines = [...js.matchAll(/^import \* as (import\d+) from "([^"]+)";?\n/gm)];
  const nsVar = new Map();
  for (const [, v, mod] of nsLines) if (!nsVar.has(mod)) nsVar.set(mod, v);
  const returned = /\n    return \{\n        __proto__: null,\n(?:        "[^"]+": import\d+,\n)+    \};\n/;
  if (!returned.test(js)) return skip("unexpected __wbg_get_imports");
  if (!/\n    const import0 = \{\n        __proto__: null,\n/.test(js)) return skip("__wbg_get_imports without import0");
  const extra = [];
  for (const [mod, field, short] of map.imports) {
    if (!ident.test(short)) return skip(`import name ${short}`);
    if (mod === bg) {
      const key = new RegExp(`(\\n        )${field.replace(/\$/g, "\\$")}(: function\\()`, "g");
      const hits = js.match(key)?.length ?? 0;
      if (hits !== 1 || js.split(field).length !== 2) return skip(`import ${field} seen ${hits} times`);
      js = js.replace(key, (_, before, after) => before + short + after);
    } else if (nsVar.has(mod) && ident.test(field)) {
      extra.push(`${short}: ${nsVar.get(mod)}.${field}`);
    } else {
      return skip(`import ${mod} ${field}`);
    }
  }
  js = js.replace(returned, () => `\n    return { __proto__: null, a: Object.assign(import0, { ${extra.join(", ")} }) };\n`);
  const kept = new Set(nsVar.values());
  js = js.replace(/^import \* as (import\d+) from "[^"]+";?\n/gm, (line, v) => (kept.has(v) ? line : ""));
  const exportsMap = new Map(map.exports);
  for (const short of exportsMap.values()) if (!ident.test(short)) return skip(`export name ${short}`);
  let unknown = null;
  js = js.replace(/\bwasm\.([A-Za-z_$][\w$]*)/g, (whole, name) => {
    if (!exportsMap.has(name)) unknown = name;
    return `wasm.${exportsMap.get(name)}`;
  });
  if (unknown) return skip(`wasm.${unknown} is not an export`);
  if (/\bwasm\[/.test(js)) return skip("wasm[...] access");
  const dropped = [...nsLines].map((m) => m[1]).filter((v) => !kept.has(v));
  if (dropped.some((v) => new RegExp(`\\b${v}\\b`).test(js))) return skip("a dropped namespace import is still used");
  // Every import of the minified wasm must be a key the rewritten JS provides,
  // and every export it reads must exist.
  const module = new WebAssembly.Module(readFileSync(minified));
  const imports = WebAssembly.Module.imports(module);
  const exported = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  const bgKeys = new Set(map.imports.filter(([mod]) => mod === bg).map(([, , short]) => short));
  const extraKeys = new Set(extra.map((entry) => entry.split(":")[0]));
  for (const { module: mod, name } of imports) {
    if (mod !== "a") return skip(`minified import module ${mod}`);
    if (!bgKeys.has(name) && !extraKeys.has(name)) return skip(`minified import a.${name} has no JS provider`);
    if (bgKeys.has(name) && !new RegExp(`\\n        ${name.replace(/\$/g, "\\$")}: function\\(`).test(js)) {
      return skip(`import a.${name} is missing from __wbg_get_imports`);
    }
  }
  for (const [, name] of js.matchAll(/\bwasm\.([A-Za-z_$][\w$]*)/g)) {
    if (!exported.has(name)) return skip(`wasm.${name} is not an export of the minified module`);
  }
  writeFileSync(bindgenJs, js);
  renameSync(minified, wasmPath);
}

// The JS snippets wasm-bindgen copied (our JS beside the Rust modules) live under
// snippets/<crate-hash>/ at their path in the repository.
function findSnippet(file) {
  const base = join(pkg, "snippets");
  for (const dir of readdirSync(base)) {
    const candidate = join(base, dir, file);
    if (existsSync(candidate)) return "./" + relative(pkg, candidate).split("\\").join("/");
  }
  throw new Error(`snippet ${file} not found in pkg/snippets`);
}
const glue = findSnippet("src/js/glue.js");

// Entries: synchronous modules (no top-level await) that start loading the
// wasm on import (js/ready.js). index.js names the .wasm with
// `new URL(..., import.meta.url)`, which Vite and webpack emit as an asset and
// pages and workers fetch; Node reads the file. inline.js carries the wasm as
// base64, for bundlers that copy no assets (esbuild, Rollup): the package.json
// conditions send them there with no configuration.
const generated = readFileSync(join(pkg, `${NAME}.js`), "utf8");
const READY_EXPORTS = ["Agent", "agentLoop", "agentLoopContinue", "streamProxy", "runAgentLoop", "runAgentLoopContinue",
  "runToolCall", "setDefaultStreamFn", "ready"];
const runtimeExports = [...generated.matchAll(/^export (?:function|class) (\w+)/gm)].map((m) => m[1])
  .filter((name) => !READY_EXPORTS.includes(name) && name !== "initSync");
// The files of js/ import our JS by its path in the repository (`../../src/…`); in pkg/ those
// files are snippets, named from the copied file's own folder.
const copyEntry = (file) => {
  const to = join(pkg, file);
  mkdirSync(dirname(to), { recursive: true });
  const up = "../".repeat(file.split("/").length - 1);
  writeFileSync(to, readFileSync(join(root, "js", file), "utf8")
    .replace(/from "(?:\.\.\/)+(src\/[^"]+\.js)"/g, (_, path) => `from "${up}${findSnippet(path).slice(2)}"`));
};
copyEntry("loading/ready.js");
const entry = (comment, load) => `// pi-agent-wasm entry${comment}.
import { start } from "./loading/ready.js";
export { ${READY_EXPORTS.join(", ")} } from "./loading/ready.js";
${runtimeExports.length ? `export { ${runtimeExports.join(", ")} } from "./${NAME}.js";\n` : ""}export {
  EventStream,
  AssistantMessageEventStream,
  createAssistantMessageEventStream,
} from "${glue}";
export { DEFAULT_AGENT_IDENTITY } from "${findSnippet("src/agent_loop/request.js")}";

${load}
`;
writeFileSync(join(pkg, "index.js"), entry("", `const url = new URL("./${NAME}_bg.wasm", import.meta.url);
start(url.protocol === "file:" && typeof process === "object" && typeof process.getBuiltinModule === "function"
  ? process.getBuiltinModule("node:fs").readFileSync(url)
  : url, url);`));
const wasmBase64 = readFileSync(wasmPath).toString("base64");
writeFileSync(join(pkg, "inline.js"), entry(" with the wasm inlined (for bundlers that copy no assets)", `const WASM = "${wasmBase64}";
start(typeof Uint8Array.fromBase64 === "function" ? Uint8Array.fromBase64(WASM) : Uint8Array.from(atob(WASM), (c) => c.charCodeAt(0)));`));
const dtsTemplate = join(root, "js/index.d.ts");
writeFileSync(join(pkg, "index.d.ts"), existsSync(dtsTemplate)
  ? readFileSync(dtsTemplate, "utf8")
  : `export * from "./${NAME}.js";\n`);

// Entries that not every app imports (UI adapters, sessions, replay, the agent
// in a Worker, the server's endpoints): each folder of js/ is copied with its types, and costs nothing to
// apps that do not import it. Each public entry is one file of those folders.
const OPTIONAL_FOLDERS = ["ui", "session", "replay", "worker", "server"];
const PUBLIC_ENTRIES = {
  react: "ui/react", svelte: "ui/svelte", vue: "ui/vue", blocks: "ui/blocks", session: "session/index", replay: "replay/index",
  worker: "worker/index", "worker-host": "worker/host", "worker-script": "worker/script", server: "server/index",
};
const filesUnder = (dir) => readdirSync(join(root, "js", dir), { withFileTypes: true }).flatMap((d) =>
  d.isDirectory() ? filesUnder(`${dir}/${d.name}`) : [`${dir}/${d.name}`]);
for (const folder of OPTIONAL_FOLDERS) {
  for (const file of filesUnder(folder)) if (/\.(js|d\.ts)$/.test(file)) copyEntry(file);
}

const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
// Node, webpack ("webpack") and Vite ("development"/"production" with
// "browser") load the .wasm next to index.js; any other tool gets inline.js:
// esbuild (which sets "browser" but neither mode) and Rollup's node-resolve
// (which sets the mode, but "browser" only when asked to).
const viteOrInline = { browser: "./index.js", default: "./inline.js" };
const exportsMap = {
  ".": {
    types: "./index.d.ts",
    node: "./index.js",
    webpack: "./index.js",
    development: viteOrInline,
    production: viteOrInline,
    default: "./inline.js",
  },
  "./inline": { types: "./index.d.ts", default: "./inline.js" },
};
for (const [name, file] of Object.entries(PUBLIC_ENTRIES)) {
  if (!existsSync(join(pkg, `${file}.js`))) throw new Error(`build: the entry pi-agent-wasm/${name} has no js/${file}.js`);
  exportsMap[`./${name}`] = { types: `./${file}.d.ts`, default: `./${file}.js` };
}
exportsMap["./package.json"] = "./package.json";
const pkgJson = {
  name: "pi-agent-wasm",
  version,
  description: "The pi-agent-core agent loop, in Rust compiled to WebAssembly, for browser apps.",
  license: "MIT",
  type: "module",
  main: "./index.js",
  types: "./index.d.ts",
  exports: exportsMap,
  files: readdirSync(pkg).filter((f) => f !== "package.json" && f !== ".gitignore"),
  sideEffects: ["./index.js", "./inline.js", "./loading/ready.js", "./snippets/*", "./worker/script.js"],
  engines: { node: ">=20.16" },
  // typebox: only its types, so tool params are inferred from TypeBox schemas as with the reference.
  // The server entry: pi-ai to reach providers, PGlite or pg to keep sessions (each only where used).
  peerDependencies: { react: ">=18", svelte: ">=4", vue: ">=3", typebox: "^1", "@earendil-works/pi-ai": ">=1.4.0", "@electric-sql/pglite": ">=0.3", pg: ">=8" },
  peerDependenciesMeta: Object.fromEntries(["react", "svelte", "vue", "typebox", "@earendil-works/pi-ai", "@electric-sql/pglite", "pg"].map((name) => [name, { optional: true }])),
};
writeFileSync(join(pkg, "package.json"), JSON.stringify(pkgJson, null, 2) + "\n");
rmSync(join(pkg, ".gitignore"), { force: true });
if (existsSync(join(root, "README.md"))) cpSync(join(root, "README.md"), join(pkg, "README.md"));

// The size report's "JS glue + entry" counts what every app loads: not the optional folders, not inline.js.
const OPTIONAL_JS = new RegExp(`^(?:(?:${OPTIONAL_FOLDERS.join("|")})/|inline\\.js$)`);
function allJs(dir, adapters = false, base = dir) {
  const out = [];
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...allJs(p, adapters, base));
    else if (p.endsWith(".js") && (adapters || !OPTIONAL_JS.test(relative(base, p).split("\\").join("/")))) out.push(p);
  }
  return out;
}

// Minified JS, module by module (exports and `import.meta.url` untouched; no
// syntax lowering). Leading `@ts-self-types` hints are kept.
if (!dev && !profiling) {
  for (const p of allJs(pkg, true)) {
    const source = readFileSync(p, "utf8");
    const hint = source.match(/^\/\* @ts-self-types="[^"]*" \*\/\n/)?.[0] ?? "";
    const { code } = transformSync(source, { loader: "js", format: "esm", minify: true, target: "esnext", legalComments: "none" });
    writeFileSync(p, hint + code);
  }
}

rmSync(finalPkg, { recursive: true, force: true });
renameSync(pkg, finalPkg);

// Size report.
function sizes(buf) {
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}
const wasm = sizes(readFileSync(join(finalPkg, `${NAME}_bg.wasm`)));
const js = sizes(Buffer.concat(allJs(finalPkg).map((p) => readFileSync(p))));
// What an app ships for `import { Agent, streamProxy }`: esbuild bundle, minified.
const app = sizes(Buffer.from(buildSync({
  stdin: { contents: `export { Agent, streamProxy } from "./index.js";`, resolveDir: finalPkg },
  bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "silent",
}).outputFiles[0].contents));
const kb = (n) => (n / 1000).toFixed(1).padStart(7) + " kB";
console.log(`\n${relative(root, finalPkg) || "."}/ (${dev ? "dev" : profiling ? "profiling" : "release"})          raw        gzip      brotli`);
console.log(`  ${NAME}_bg.wasm  ${kb(wasm.raw)} ${kb(wasm.gzip)} ${kb(wasm.brotli)}`);
console.log(`  JS glue + entry    ${kb(js.raw)} ${kb(js.gzip)} ${kb(js.brotli)}`);
console.log(`  total              ${kb(wasm.raw + js.raw)} ${kb(wasm.gzip + js.gzip)} ${kb(wasm.brotli + js.brotli)}`);
console.log(`app: import { Agent, streamProxy }, esbuild --bundle --minify, plus the wasm (reference: 48.2 kB gzip)`);
console.log(`  JS bundle          ${kb(app.raw)} ${kb(app.gzip)} ${kb(app.brotli)}`);
console.log(`  JS bundle + wasm   ${kb(app.raw + wasm.raw)} ${kb(app.gzip + wasm.gzip)} ${kb(app.brotli + wasm.brotli)}`);
// The project's ceiling for this app (README, Size): watched at every build, not enforced by a test.
const APP_GZIP_CEILING = 90_000;
const appGzip = app.gzip + wasm.gzip;
console.log(`  ${appGzip.toLocaleString("en")} bytes gzip: ${appGzip <= APP_GZIP_CEILING ? `${(APP_GZIP_CEILING - appGzip).toLocaleString("en")} under` : `OVER by ${(appGzip - APP_GZIP_CEILING).toLocaleString("en")} bytes`} the ${APP_GZIP_CEILING.toLocaleString("en")}-byte ceiling`);
// The same import through inline.js (what esbuild and Rollup pick by default): one file, wasm included.
const inlineApp = sizes(Buffer.from(buildSync({
  stdin: { contents: `export { Agent, streamProxy } from "./inline.js";`, resolveDir: finalPkg },
  bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "silent",
}).outputFiles[0].contents));
console.log(`  inline.js bundle   ${kb(inlineApp.raw)} ${kb(inlineApp.gzip)} ${kb(inlineApp.brotli)}   (esbuild/Rollup default: wasm as base64)`);
