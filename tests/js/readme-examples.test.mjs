// Every fenced block of README.md and docs/*.md is a test (the convention: docs/development.md, "Every
// example is a test"; the parser: tests/support/markdown-examples.mjs). Here: that every block is
// annotated, the `node` examples run as written against pkg/ (imports of pi-agent-wasm resolve through
// the package's own exports map), every TypeScript block is type-checked with tsc against pkg/'s
// declarations, and `shell` and `output` blocks say what is true. The `chromium`, `worker`, `component`
// and `vue-setup` examples run in tests/browser/readme-examples/.
import assert from "node:assert/strict";
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { exampleFiles, exampleModule, extractExamples, FILE_NAME } from "../support/markdown-examples.mjs";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const PKG = join(REPO, "pkg");
// A missing build fails the tests instead of skipping them.
if (!existsSync(join(PKG, "index.js"))) throw new Error("pkg/ is not built (run node scripts/build.mjs)");
const HARNESS = new URL("./readme-examples/harness.mjs", import.meta.url);
const harness = await import(HARNESS);

// The examples' own directory, where `pi-agent-wasm` resolves to pkg/ as it does in an app.
const OUT = join(REPO, "test-output", "readme-examples");
rmSync(OUT, { recursive: true, force: true });
mkdirSync(join(OUT, "node_modules"), { recursive: true });
symlinkSync(PKG, join(OUT, "node_modules", "pi-agent-wasm"), "dir");
writeFileSync(join(OUT, "package.json"), JSON.stringify({ type: "module", private: true }));

const blocks = exampleFiles(REPO).flatMap((f) => extractExamples(f, REPO));
const fileName = (b) => b.name.replace(/[^\w]+/g, "-");
const EXAMPLE_MS = 15_000;

test("every fenced block of README.md and docs/ says what it is, and fits its language", () => {
  const problems = blocks.filter((b) => b.problem).map((b) => `${b.name}: ${b.problem}`);
  assert.deepEqual(problems, []);
  assert.ok(blocks.some((b) => b.env === "node"), "the README has Node examples");
});

for (const block of blocks.filter((b) => b.env === "node" && !b.problem)) {
  test(`${block.name}: runs in Node${block.check ? ` (check: ${block.check})` : ""}`, async () => {
    if (block.check) assert.ok(harness.checks[block.check], `no check named ${block.check} in tests/js/readme-examples/harness.mjs`);
    await harness.reset(block);
    let source = exampleModule(block, HARNESS.href);
    if (block.lang === "ts") {
      const { transform } = await import("esbuild");
      source = (await transform(source, { loader: "ts", format: "esm" })).code;
    }
    const file = join(OUT, `${fileName(block)}.mjs`);
    writeFileSync(file, source);
    const unhandled = [];
    const onUnhandled = (reason) => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    let timer;
    try {
      const ns = await Promise.race([
        import(pathToFileURL(file).href),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${block.name} did not settle within ${EXAMPLE_MS} ms`)), EXAMPLE_MS))),
      ]);
      if (block.check) await harness.checks[block.check](ns, block);
      // A rejection the example left behind surfaces within a macrotask.
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      clearTimeout(timer);
      process.off("unhandledRejection", onUnhandled);
    }
    assert.deepEqual(unhandled.map(String), [], "no unhandled rejection");
  });
}

for (const block of blocks.filter((b) => b.env === "output" && b.check && !b.problem)) {
  test(`${block.name}: the sample is what the library emits (check: ${block.check})`, async () => {
    assert.ok(harness.checks[block.check], `no check named ${block.check}`);
    await harness.reset();
    await harness.checks[block.check]({}, block);
  });
}

test("every file block is run by the test file it names", () => {
  const problems = [];
  for (const b of blocks.filter((b) => b.env === "file" && !b.problem)) {
    const path = join(REPO, b.by);
    if (!existsSync(path)) {
      problems.push(`${b.name}: by ${b.by}: no such file`);
      continue;
    }
    const name = FILE_NAME.exec(b.code)[1];
    const text = readFileSync(path, "utf8");
    if (!text.includes(name) && !text.includes("readmeFiles(")) problems.push(`${b.name}: ${b.by} does not read the README's ${name}`);
  }
  assert.deepEqual(problems, []);
});

// TypeScript the blocks need besides their own text, by check name: it must compile after the block.
const TYPE_CHECKS = {
  // The declared message type joins AgentMessage; a wrong one is refused.
  "custom-message": `
import type { AgentMessage } from "pi-agent-wasm";
const note: AgentMessage = { role: "note", text: "kept out of the model's context", timestamp: 1 };
// @ts-expect-error a note has no content
const wrong: AgentMessage = { role: "note", content: "x", timestamp: 1 };
void note; void wrong;
`,
};

test("every TypeScript block type-checks against pkg/ (tsc --strict)", () => {
  const ts = blocks.filter((b) => (b.lang === "ts" || b.lang === "tsx") && (b.env === "types" || b.env === "node") && !b.problem);
  assert.ok(ts.length > 0);
  const dir = join(OUT, "types");
  mkdirSync(dir, { recursive: true });
  const files = [];
  for (const b of ts) {
    const declared = b.uses.map((u) => `declare const ${u}: any;\n`).join("");
    const extra = b.check ? TYPE_CHECKS[b.check] : "";
    if (b.env === "types" && b.check) assert.ok(extra, `no type check named ${b.check}`);
    const file = `${fileName(b)}.ts`;
    // `export {}`: each block is a module, so a `declare module` in it augments the package.
    writeFileSync(join(dir, file), `${declared}${b.code}\n${extra ?? ""}\nexport {};\n`);
    files.push(file);
  }
  const base = join(REPO, "tests/types/tsconfig.base.json");
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: base, compilerOptions: { noUnusedLocals: false }, files }, null, 2));
  try {
    execFileSync(process.execPath, [join(REPO, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], { cwd: dir, stdio: "pipe" });
  } catch (err) {
    const text = String(err.stdout) + String(err.stderr);
    // Name the block of each error (the files are named after the block's file and line).
    assert.fail(`tsc found errors in the README's TypeScript blocks:\n${text}`);
  }
});

test("every shell block's commands name what exists: npm scripts, the package or its tarball, files run with node or bash", () => {
  const { scripts } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
  const { name, version } = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
  const problems = [];
  const shell = blocks.filter((b) => b.env === "shell" && !b.problem);
  assert.ok(shell.length > 0);
  for (const b of shell) {
    // A line may chain commands with && and run some in a subshell: `(cd pkg && npm pack)`.
    const commands = b.code.split("\n").flatMap((line) => line.replace(/#.*$/, "").split("&&").map((c) => c.replace(/^\s*\(|\)\s*$/g, "")));
    for (const line of commands) {
      const words = line.trim().split(/\s+/).filter(Boolean);
      // Leading VAR=value assignments set the environment of the command.
      while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) words.shift();
      if (words.length === 0) continue;
      const [command, verb, arg] = words;
      if (b.in === "app") {
        // A command of the example app: what it sets in the environment, the app's files read.
        const appFiles = blocks.filter((f) => f.file === b.file && f.env === "file").map((f) => f.code).join("\n");
        for (const [, name] of line.matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=/g)) {
          if (!appFiles.includes(`process.env.${name}`) && !(name.endsWith("_API_KEY") && appFiles.includes("@earendil-works/pi-ai"))) {
            problems.push(`${b.name}: sets ${name}, which no file of the app reads`);
          }
        }
        if (command !== "npm" && command !== "npx") problems.push(`${b.name}: ${JSON.stringify(line.trim())}: not an npm or npx command`);
        continue;
      }
      if (command === "npm") {
        if (verb === "install" || verb === "i") {
          // The package by name, or the tarball `npm pack` makes of pkg/.
          const tarball = `${name}-${version}.tgz`;
          if (arg !== name && !(arg.endsWith(`/pkg/${tarball}`) || arg === tarball)) problems.push(`${b.name}: installs ${arg}, the package is ${name} (packed: ${tarball})`);
        } else if (verb === "pack") {
          // npm's own command: packs the directory it runs in.
        } else if (verb === "run") {
          if (!scripts[arg]) problems.push(`${b.name}: npm run ${arg}: no such script`);
        } else if (!scripts[verb]) problems.push(`${b.name}: npm ${verb}: no such script`);
      } else if (command === "node" || command === "bash") {
        for (const path of words.slice(1).filter((w) => !w.startsWith("-") && /\//.test(w))) {
          if (!existsSync(join(REPO, path))) problems.push(`${b.name}: ${command} ${path}: no such file`);
        }
      } else if (command === "cd" || (command === "git" && verb === "clone")) {
        // Moving around, and getting this repository.
      } else problems.push(`${b.name}: ${JSON.stringify(line.trim())}: not an npm, node, bash, cd or git clone command`);
    }
  }
  assert.deepEqual(problems, []);
});

