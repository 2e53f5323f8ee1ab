// The code examples of README.md and docs/*.md, as the example tests run them. Every fenced block is
// preceded by an HTML comment that says what it is (docs/development.md, "Every example is a test"):
//
//   <!-- example: ENV; uses: NAME, NAME; check: NAME -->
//
// ENV is one of
//   node            an ES module run in Node against pkg/ (a `ts` block is also type-checked)
//   chromium        an ES module run in a page of headless Chromium against pkg/
//   worker FILE     a module Worker's script, saved as FILE beside the page examples after it
//   component       a UI component (JSX: the block's capitalised function; Svelte: the block), rendered in Chromium
//   vue-setup       the body of a Vue component's setup(), mounted in Chromium
//   types           TypeScript that is type-checked with tsc against pkg/, not run
//   shell           commands: npm ones name a script of package.json or the package; node/bash ones, files that exist;
//                   with `in: app`, commands of the example app: the variables they set are read by its file blocks
//   output          a sample of what the library prints or emits; `check` compares it with the real thing
//   header          an HTTP response header ("Name: value"): Chromium serves a page with it and runs `check` there
//   file            a whole file of an example app, its first line a comment naming it (`// server.mjs: …`),
//                   written out and run by the test file `by` names (which reads the README's files)
//   text            a diagram or layout, neither run nor checked
// `uses` names values the harness provides (imported into the block's scope); `check` names a check the
// harness runs after the block, with the names the block declares at its top level.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export const ENVS = ["node", "chromium", "worker", "component", "vue-setup", "types", "shell", "output", "header", "file", "text"];
// Languages that hold code: such a block must run or be type-checked.
const CODE = new Set(["js", "jsx", "ts", "tsx", "svelte", "mjs"]);
const RUNS = { node: ["js", "ts"], chromium: ["js"], worker: ["js"], component: ["jsx", "svelte"], "vue-setup": ["js"], types: ["ts"], file: ["js", "jsx", "mjs", "ts", "tsx"] };

/** The markdown files whose examples are tests: README.md and docs/*.md. */
export function exampleFiles(repo) {
  const docs = join(repo, "docs");
  return ["README.md", ...readdirSync(docs).filter((f) => f.endsWith(".md")).sort().map((f) => join("docs", f))].map((f) => join(repo, f));
}

/** Parses `<!-- example: … -->`; returns `{ env, arg, uses, check }` or a string saying what is wrong. */
export function parseAnnotation(text) {
  const m = /^<!--\s*example:\s*(.*?)\s*-->$/.exec(text.trim());
  if (!m) return undefined;
  const [head, ...fields] = m[1].split(";").map((s) => s.trim());
  const [env, ...rest] = head.split(/\s+/);
  if (!ENVS.includes(env)) return `unknown environment ${JSON.stringify(env)} (one of ${ENVS.join(", ")})`;
  const arg = rest.join(" ");
  if (env === "worker" && !/^[\w.-]+\.js$/.test(arg)) return "`worker` needs the file name its page examples load it by";
  if (env !== "worker" && arg) return `unexpected ${JSON.stringify(arg)} after ${env}`;
  const out = { env, arg, uses: [], check: undefined, by: undefined };
  for (const field of fields) {
    const f = /^(uses|check|by|in):\s*(.*)$/.exec(field);
    if (!f) return `unknown field ${JSON.stringify(field)} (uses, check, by, in)`;
    if (f[1] === "uses") out.uses = f[2].split(/[\s,]+/).filter(Boolean);
    else out[f[1]] = f[2];
  }
  if ((env === "file") !== (out.by !== undefined)) return "`by: <test file>` goes with `file`, and only with it";
  if (out.in !== undefined && (env !== "shell" || out.in !== "app")) return "`in: app` goes with `shell` only";
  return out;
}

/**
 * Every fenced block of `file`: `{ file, line, section, lang, code, env, arg, uses, check, by, in, name, problem }`,
 * where `problem` says what is wrong with its annotation (missing, malformed, or an environment that does not
 * fit the block's language). `name` is "README.md:37" (the fence's line); `section`, the `## ` heading it is under.
 */
export function extractExamples(file, repo) {
  const lines = readFileSync(file, "utf8").split("\n");
  const shown = relative(repo, file);
  const blocks = [];
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.*)$/.exec(lines[i]);
    if (heading) section = heading[1].trim();
    const open = /^(\s*)(`{3,})([\w-]*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== fence) end++;
    const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join("\n");
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === "") k--;
    const parsed = k >= 0 ? parseAnnotation(lines[k]) : undefined;
    const block = { file: shown, line: i + 1, section, name: `${shown}:${i + 1}`, lang, code, env: undefined, arg: "", uses: [], check: undefined, by: undefined, in: undefined, problem: undefined };
    if (parsed === undefined) block.problem = "has no <!-- example: … --> comment before it";
    else if (typeof parsed === "string") block.problem = parsed;
    else {
      Object.assign(block, parsed);
      if (RUNS[block.env] && !RUNS[block.env].includes(lang)) block.problem = `a \`${lang || "plain"}\` block cannot be \`${block.env}\``;
      else if (CODE.has(lang) && !RUNS[block.env]) block.problem = `a \`${lang}\` block must run or be type-checked, not be \`${block.env}\``;
      else if (block.env === "shell" && !["bash", "sh"].includes(lang)) block.problem = "a `shell` block is fenced as bash or sh";
      else if (block.env === "header" && !/^[\w-]+: \S/.test(code)) block.problem = "a `header` block is one `Name: value` line";
      else if (block.env === "header" && !block.check) block.problem = "a `header` block needs a check";
      else if (block.env === "file" && !FILE_NAME.test(code)) block.problem = "a `file` block's first line is a comment naming it (`// path: what it is`)";
    }
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The first line of a `file` block: `// <path>: <what it is>`. */
export const FILE_NAME = /^\/\/ ([\w./@[\]-]+\.(?:js|jsx|mjs|ts|tsx)):/;

/** The names a module declares at its top level (column 0): const/let/var (a name, or a flat [..] or {..} pattern), function, class. */
export function topLevelNames(code) {
  const names = new Set();
  for (const line of code.split("\n")) {
    const pattern = /^(?:const|let|var)\s*([[{])([^\]}]*)[\]}]\s*=/.exec(line);
    if (pattern) {
      for (const part of pattern[2].split(",")) {
        const name = part.trim().split(":").pop().split("=")[0].trim().replace(/^\.\.\./, "");
        if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
      }
      continue;
    }
    const m = /^(?:(?:const|let|var)\s+([A-Za-z_$][\w$]*)|(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)|class\s+([A-Za-z_$][\w$]*))/.exec(line);
    if (m) names.add(m[1] ?? m[2] ?? m[3]);
  }
  return [...names];
}

/**
 * The block as a module: an import of the harness values it uses (from `harness`, a specifier the
 * environment resolves) first, so the harness is set up before the block's own imports run, and its
 * top-level names and the names it imports exported at the end for the check. A browser example that
 * imports pi-agent-wasm/vue also exports its bundle's Vue (`createApp`, `h`), the one its components need.
 */
export function exampleModule(block, harness) {
  const names = [...topLevelNames(block.code), ...importedNames(block.code)];
  const head = `import { ${block.uses.join(", ")} } from ${JSON.stringify(harness)};\n`;
  let tail = names.length ? `\nexport { ${names.join(", ")} };\n` : "\n";
  if (block.env === "chromium" && /from "pi-agent-wasm\/vue"/.test(block.code)) tail += 'export { createApp as __vueCreateApp, h as __vueH } from "vue";\n';
  return head + block.code + tail;
}

/** The names `import { a, b as c } from "…"` lines bind (c here). */
function importedNames(code) {
  const names = [];
  for (const [, list] of code.matchAll(/^import\s*\{([^}]*)\}\s*from/gm)) {
    for (const part of list.split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop();
      if (name && !name.startsWith("type ")) names.push(name);
    }
  }
  return names;
}
