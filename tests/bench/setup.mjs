// Shared setup of run.mjs and profile.mjs: snapshot pkg/, bundle the reference for the browser,
// start the bench server.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

export const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "../..");
export const outDir = join(root, "test-output/bench");

/**
 * Copies pkg/ to test-output/bench/<name>/ so a rebuild by someone else during the run cannot swap
 * the package under test halfway. Returns the directory and what was copied.
 */
export function snapshotPkg(name = "pkg", src = join(root, "pkg")) {
  if (!existsSync(join(src, "index.js"))) throw new Error(`${src} is not built: run \`node scripts/build.mjs\` first`);
  const dir = join(outDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  cpSync(src, dir, { recursive: true });
  const wasm = readFileSync(join(dir, "pi_agent_wasm_bg.wasm"));
  const module = new WebAssembly.Module(wasm);
  const names = WebAssembly.Module.customSections(module, "name").length > 0;
  return {
    dir,
    source: src,
    wasmBytes: wasm.length,
    wasmSha: createHash("sha256").update(wasm).digest("hex").slice(0, 12),
    builtAt: statSync(join(src, "pi_agent_wasm_bg.wasm")).mtime.toISOString(),
    nameSection: names,
    version: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version,
  };
}

/** The reference (pi-agent-core's Agent and streamProxy, pi-ai's stream factory) as one ES module for the page. */
export async function bundleReference() {
  const dir = join(outDir, "www");
  mkdirSync(dir, { recursive: true });
  await esbuild.build({
    entryPoints: [join(here, "reference-entry.mjs")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outfile: join(dir, "reference.js"),
    logLevel: "warning",
  });
  return dir;
}

export function referenceVersions() {
  const read = (p) => JSON.parse(readFileSync(join(root, "node_modules", p, "package.json"), "utf8")).version;
  return { core: read("@earendil-works/pi-agent-core"), ai: read("@earendil-works/pi-ai") };
}

/** Starts server.mjs in its own process. Returns { base, close() }. */
export const startServer = (pkgDir, refDir) => startServerProcess(join(here, "server.mjs"), [pkgDir, refDir]);

/**
 * Starts the server `script` (args: `args`) in its own process, which prints "READY <port>" once it
 * listens on 127.0.0.1 and exits when its standard input ends. Returns { base, close() }.
 */
export async function startServerProcess(script, args) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    close() {
      child.stdin.end();
      child.kill("SIGTERM");
    },
  };
}
