#!/usr/bin/env node
// typebox is an optional peer: a consumer without it must still type-check with skipLibCheck off
// (the guarded `import type … from "typebox"` degrades to `Static<T> = any`). Copies the package's
// .d.ts files into a temporary project outside this repository (so no typebox can be found) and
// runs tsc on a small app under three module resolutions.
//
//   node tests/types/no-typebox.mjs            pkg/*.d.ts
//   node tests/types/no-typebox.mjs --scratch  tests/types/.scratch/*.d.ts
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");
const from = process.argv.includes("--scratch") ? join(here, ".scratch") : join(root, "pkg");
const tsc = join(root, "node_modules/typescript/bin/tsc");

const dir = mkdtempSync(join(tmpdir(), "pi-agent-wasm-no-typebox-"));
try {
  const pkg = join(dir, "node_modules/pi-agent-wasm");
  mkdirSync(pkg, { recursive: true });
  for (const f of readdirSync(from)) if (f.endsWith(".d.ts")) cpSync(join(from, f), join(pkg, f));
  writeFileSync(
    join(pkg, "package.json"),
    JSON.stringify({ name: "pi-agent-wasm", type: "module", types: "./index.d.ts", exports: { ".": { types: "./index.d.ts", default: "./index.js" } } }),
  );
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  writeFileSync(
    join(dir, "app.ts"),
    `import { Agent, type AgentTool, type Static, type TSchema } from "pi-agent-wasm";
declare module "pi-agent-wasm" {
  interface CustomAgentMessages { note: { role: "note"; text: string; timestamp: number } }
}
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const;
const weather: AgentTool<typeof schema> = {
  name: "weather", label: "Weather", description: "", parameters: schema,
  execute: async (_id, params) => ({ content: [{ type: "text", text: String(params.city) }], details: null }),
};
const anySchema: TSchema = { type: "string" };
const value: Static<typeof schema> = { city: "Paris" };
const agent = new Agent({ initialState: { tools: [weather] } });
agent.state.messages.push({ role: "note", text: String(value.city) + String(anySchema), timestamp: 0 });
// @ts-expect-error -- the rest of the surface stays strict
agent.state.messages.push({ role: "bogus" });
`,
  );
  const variants = [
    ["nodenext", "nodenext"],
    ["esnext", "bundler"],
    ["commonjs", "node10"],
  ];
  for (const [module, resolution] of variants) {
    const args = [tsc, "--noEmit", "--strict", "--skipLibCheck", "false", "--target", "es2022", "--lib", "esnext,dom", "--module", module, "--moduleResolution", resolution, "app.ts"];
    try {
      execFileSync(process.execPath, args, { cwd: dir, stdio: "pipe" });
    } catch (e) {
      console.error(`no-typebox (${resolution}): tsc failed\n${e.stdout}${e.stderr}`);
      process.exit(1);
    }
    console.log(`no-typebox (${resolution}): ok`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
