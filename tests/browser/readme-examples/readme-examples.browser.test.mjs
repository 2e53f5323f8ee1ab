// The README's examples that need a browser (`chromium`, `worker FILE`, `component`, `vue-setup`; the
// convention: docs/development.md, "Every example is a test"), run as written in headless Chromium:
// each is bundled with esbuild (imports of pi-agent-wasm stay the served pkg/'s own modules, UI
// frameworks come from tests/browser/ui's prefix), then imported by a page in a fresh browser context
// (a fresh IndexedDB), and its check runs. The harness values they use: harness.js.
import assert from "node:assert/strict";
import { test, before, after } from "node:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { startStaticServer } from "../../support/static-server.mjs";
import { entryFile } from "../../support/package-entry.mjs";
import { sveltePlugin } from "../../support/esbuild-svelte.mjs";
import { ensureFrameworks } from "../ui/bundle.mjs";
import { exampleFiles, exampleModule, extractExamples, topLevelNames } from "../../support/markdown-examples.mjs";
import { proxyAnswer } from "../../support/example-model.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));
const PKG = join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "worker/index.js"))) throw new Error("pkg/ is not built (run node scripts/build.mjs)");
const OUT = join(REPO, "test-output", "readme-examples-browser");
// React, Vue and Svelte: from the UI tests' own prefix (tests/browser/ui).
const UI_NODE_MODULES = join(REPO, "tests/browser/ui/node_modules");
const HARNESS = "/harness/harness.js";
const BROWSER_ENVS = ["chromium", "worker", "component", "vue-setup", "header"];
const PAGE = '<!doctype html><meta charset="utf-8"><div id="target"></div><script type="module" src="/harness/page.js"></script>';
const EXAMPLE_MS = 20_000;

const blocks = exampleFiles(REPO).flatMap((f) => extractExamples(f, REPO));

/** The page an example runs in: a `header` example's own, served with its header. */
const pagePath = (block) => (block.env === "header" ? `/${block.name.replace(/[^\w]+/g, "-")}.html` : "/");

let server;
let browser;
before(async () => {
  ensureFrameworks();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  // A `header` example's page is served with that header.
  const pages = { "/": PAGE };
  for (const b of blocks.filter((b) => b.env === "header" && !b.problem)) {
    const [name, ...value] = b.code.trim().split(":");
    pages[pagePath(b)] = { html: PAGE, headers: { [name]: value.join(":").trim() } };
  }
  // The page's own origin answers streamProxy as the app's server would (an example's `proxyUrl: location.origin`).
  const routes = { "/api/stream": streamRoute };
  server = await startStaticServer({ "/pkg/": PKG, "/harness/": HERE, "/support/": join(REPO, "tests/support"), "/ex/": OUT }, { pages, routes });
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** POST /api/stream: the example model, as a streamProxy server. */
async function streamRoute(req, res) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const { status, headers, text } = proxyAnswer(JSON.parse(Buffer.concat(chunks).toString("utf8")));
  res.writeHead(status, headers);
  res.end(text);
}

/** pi-agent-wasm's entries stay the served pkg/ modules (one copy of the library per page), except the UI adapters, bundled with their framework. */
const pkgPlugin = {
  name: "pi-agent-wasm",
  setup(b) {
    b.onResolve({ filter: /^pi-agent-wasm(\/[\w-]+)?$/ }, (args) => {
      const file = entryFile(PKG, args.path);
      if (/^pi-agent-wasm\/(react|vue|svelte|blocks)$/.test(args.path)) return { path: file };
      return { path: `/pkg/${relative(PKG, file)}`, external: true };
    });
    b.onResolve({ filter: /^\/(harness|support|pkg)\// }, (args) => ({ path: args.path, external: true }));
  },
};

async function bundle(dir, entryPoints) {
  const { build } = await import("esbuild");
  await build({
    entryPoints, outdir: dir, bundle: true, format: "esm", platform: "browser", target: "es2022", jsx: "automatic",
    conditions: ["browser", "production"], nodePaths: [UI_NODE_MODULES], logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"', __VUE_OPTIONS_API__: "false", __VUE_PROD_DEVTOOLS__: "false", __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false" },
    plugins: [pkgPlugin, await sveltePlugin(UI_NODE_MODULES)],
  });
}

/** The Svelte block with the harness values it uses imported in its script. */
const svelteSource = (block) =>
  block.code.replace(/<script>/, `<script>\n  import { ${block.uses.join(", ")} } from ${JSON.stringify(HARNESS)};`);

/** The vue-setup block as a module exporting `setup()`, which runs its body and returns what it declares. */
function vueSetupModule(block) {
  const lines = block.code.split("\n");
  const imports = lines.filter((l) => /^import\s/.test(l));
  const body = lines.filter((l) => !/^import\s/.test(l)).join("\n");
  return `import { ${block.uses.join(", ")} } from ${JSON.stringify(HARNESS)};\n${imports.join("\n")}\n` +
    `export function setup() {\n${body}\nreturn { ${topLevelNames(body).join(", ")} };\n}\n`;
}

/** Writes and bundles the block (with the worker files of its markdown file defined so far) into its own directory. */
async function prepare(block, workers) {
  const dir = join(OUT, block.name.replace(/[^\w]+/g, "-"));
  if (block.env === "header") return { dir: "/", main: undefined };
  const src = join(dir, "src");
  mkdirSync(src, { recursive: true });
  for (const f of readdirSync(join(HERE, "files"))) copyFileSync(join(HERE, "files", f), join(src, f));
  const entries = {};
  for (const [name, w] of workers) {
    writeFileSync(join(src, name), exampleModule(w, HARNESS));
    entries[name.replace(/\.js$/, "")] = join(src, name);
  }
  let main;
  if (block.env === "chromium") {
    writeFileSync(join(src, "example.js"), exampleModule(block, HARNESS));
    entries.main = join(src, "example.js");
  } else if (block.env === "component" && block.lang === "jsx") {
    writeFileSync(join(src, "example.jsx"), exampleModule(block, HARNESS));
    entries.main = join(src, "mount-react.jsx");
  } else if (block.env === "component" && block.lang === "svelte") {
    writeFileSync(join(src, "Example.svelte"), svelteSource(block));
    entries.main = join(src, "mount-svelte.js");
  } else if (block.env === "vue-setup") {
    writeFileSync(join(src, "example.js"), vueSetupModule(block));
    entries.main = join(src, "mount-vue.js");
  }
  if (entries.main) main = "./main.js";
  await bundle(dir, entries);
  return { dir: `/ex/${relative(OUT, dir)}/`, main };
}

// Worker files by markdown file: a page example loads the latest block of that name before it.
const workersSoFar = new Map();
for (const block of blocks) {
  if (block.problem || !BROWSER_ENVS.includes(block.env)) continue;
  const workers = new Map(workersSoFar.get(block.file) ?? []);
  if (block.env === "worker") {
    workers.set(block.arg, block);
    workersSoFar.set(block.file, workers);
  }
  test(`${block.name}: runs in Chromium (${block.env}${block.arg ? ` ${block.arg}` : ""}${block.check ? `, check: ${block.check}` : ""})`, async () => {
    const { dir, main } = await prepare(block, workers);
    const context = await browser.newContext();
    const page = await context.newPage();
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    try {
      await page.goto(`${server.url}${pagePath(block)}`);
      await page.waitForFunction(() => window.ready === true, null, { timeout: EXAMPLE_MS });
      let timer;
      const errors = await Promise.race([
        page.evaluate((args) => window.runExample(args), { dir, main, block: { name: block.name, env: block.env, arg: block.arg, check: block.check } }),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${block.name} did not settle within ${EXAMPLE_MS} ms`)), EXAMPLE_MS))),
      ]).finally(() => clearTimeout(timer));
      assert.deepEqual([...errors, ...pageErrors], [], "no error or unhandled rejection in the page");
    } finally {
      await context.close();
    }
  });
}

test("the README has examples for Chromium", () => {
  assert.ok(blocks.some((b) => b.env === "chromium" && !b.problem));
});
