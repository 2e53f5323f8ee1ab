#!/usr/bin/env node
// Lists what "pi-agent-wasm" exports to TypeScript and checks it against the reference: every
// export of @earendil-works/pi-agent-core 1.4.0 (types and values), the pi-ai names apps use with
// it, and ours; and that values exported to TypeScript are exactly the runtime exports.
//
//   node tests/types/check-exports.mjs            against pkg/ (tests/types/tsconfig.json)
//   node tests/types/check-exports.mjs --scratch  against tests/types/.scratch/
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const ts = require("typescript");

const configPath = join(here, process.argv.includes("--scratch") ? "tsconfig.scratch.json" : "tsconfig.json");
const parsed = ts.getParsedCommandLineOfConfigFile(configPath, { skipLibCheck: true }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
const probe = join(here, "__exports_probe__.ts");
const host = ts.createCompilerHost(parsed.options);
const probeText = `import * as ours from "pi-agent-wasm";\nimport * as reference from "@earendil-works/pi-agent-core";\nexport { ours, reference };\n`;
const readFile = host.readFile.bind(host);
host.readFile = (f) => (f === probe ? probeText : readFile(f));
const fileExists = host.fileExists.bind(host);
host.fileExists = (f) => f === probe || fileExists(f);
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (f, ...rest) => (f === probe ? ts.createSourceFile(f, probeText, ts.ScriptTarget.ES2022, true) : getSourceFile(f, ...rest));
const program = ts.createProgram([probe], parsed.options, host);
const checker = program.getTypeChecker();
const source = program.getSourceFile(probe);

function exportsOf(specifier) {
  const decl = source.statements.find((s) => ts.isImportDeclaration(s) && s.moduleSpecifier.text === specifier);
  const symbol = checker.getSymbolAtLocation(decl.moduleSpecifier);
  if (!symbol) throw new Error(`cannot resolve ${specifier} with ${configPath}`);
  const out = new Map();
  for (const s of checker.getExportsOfModule(symbol)) {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    out.set(s.name, { value: (target.flags & ts.SymbolFlags.Value) !== 0 });
  }
  return out;
}

const ours = exportsOf("pi-agent-wasm");
const reference = exportsOf("@earendil-works/pi-agent-core");
const piAi = [
  "Message", "UserMessage", "AssistantMessage", "ToolResultMessage", "SystemMessage", "TextContent", "ThinkingContent",
  "ImageContent", "ToolCall", "Usage", "StopReason", "Model", "Api", "Tool", "ToolReference", "Context", "TranscriptContext",
  "SimpleStreamOptions", "AssistantMessageEvent", "ThinkingBudgets", "Transport", "CacheRetention", "ClientIdentity",
  "JsonValue", "JsonObject", "EventStream", "AssistantMessageEventStream", "createAssistantMessageEventStream",
];
const additions = ["AgentSnapshot", "AssistantMessageEventSource", "ready"];
const runtime = [
  "Agent", "DEFAULT_AGENT_IDENTITY", "agentLoop", "agentLoopContinue", "runAgentLoop", "runAgentLoopContinue", "runToolCall",
  "setDefaultStreamFn", "streamProxy", "EventStream", "AssistantMessageEventStream", "createAssistantMessageEventStream",
  "ready",
];

const problems = [];
for (const [name, { value }] of reference) {
  if (!ours.has(name)) problems.push(`missing reference export ${name}`);
  else if (value && !ours.get(name).value) problems.push(`${name} is a value in the reference but only a type here`);
}
for (const name of [...piAi, ...additions]) if (!ours.has(name)) problems.push(`missing ${name}`);
const values = [...ours].filter(([, e]) => e.value).map(([n]) => n).sort();
for (const name of values) if (!runtime.includes(name)) problems.push(`${name} is declared as a value but index.js does not export it`);
for (const name of runtime) if (!values.includes(name)) problems.push(`runtime export ${name} is not declared as a value`);

console.log(`pi-agent-wasm exports ${ours.size} names (${values.length} values); the reference ${reference.size}.`);
if (!existsSync(configPath)) problems.push(`no ${configPath}`);
if (problems.length) {
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log("exports: ok");
