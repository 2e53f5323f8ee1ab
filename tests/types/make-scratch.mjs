#!/usr/bin/env node
// Builds tests/types/.scratch/{index.d.ts,pi_agent_wasm.d.ts} so the consumer files can be
// type-checked without a built pkg/ (`tsc -p tests/types/tsconfig.scratch.json`).
//
//   node tests/types/make-scratch.mjs          the typescript_custom_section strings of
//                                              src/types.rs + stubs of what wasm-bindgen
//                                              generates from the Rust signatures, written
//                                              as the annotations should produce them
//   node tests/types/make-scratch.mjs --real   cargo build (own target dir) + wasm-bindgen:
//                                              the d.ts the package would ship today
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");
const out = join(here, ".scratch");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
copyFileSync(join(here, "index.d.ts.template"), join(out, "index.d.ts"));

if (process.argv.includes("--real")) {
  const target = join(tmpdir(), "pi-agent-wasm-types-target");
  const run = (cmd, args, env = {}) =>
    execFileSync(cmd, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ...env } });
  run("cargo", ["build", "--lib", "--target", "wasm32-unknown-unknown"], { CARGO_TARGET_DIR: target });
  const wasm = join(target, "wasm32-unknown-unknown/debug/pi_agent_wasm.wasm");
  const bindgen = join(target, "bindgen");
  run("wasm-bindgen", ["--target", "web", "--weak-refs", "--out-dir", bindgen, "--out-name", "pi_agent_wasm", wasm]);
  copyFileSync(join(bindgen, "pi_agent_wasm.d.ts"), join(out, "pi_agent_wasm.d.ts"));
  console.log(`wrote ${out} (wasm-bindgen output)`);
  process.exit(0);
}

// The custom sections, in the order wasm-bindgen emits them (sorted by text).
const source = readFileSync(join(root, "src/types.rs"), "utf8");
const sections = [
  ...source.matchAll(/#\[wasm_bindgen\(typescript_custom_section\)\]\s*const \w+: &(?:'static )?str = r#"([\s\S]*?)"#;/g),
].map((m) => m[1].trim());
if (sections.length === 0) throw new Error("no typescript_custom_section found in src/types.rs");
sections.sort();

// What wasm-bindgen generates from the Rust signatures once they carry the annotations listed in
// the report (`prompt` is `skip_typescript`: its overloads come from `interface Agent` in types.rs).
const generated = `
export class Agent {
  free(): void;
  [Symbol.dispose](): void;
  constructor(options?: AgentOptions);
  abort(): void;
  clearAllQueues(): void;
  clearFollowUpQueue(): void;
  clearSteeringQueue(): void;
  continue(): Promise<void>;
  followUp(message: AgentMessage): void;
  getSnapshot(): AgentSnapshot;
  hasQueuedMessages(): boolean;
  peekQueuedMessages(): AgentMessage[];
  reset(): void;
  steer(message: AgentMessage): void;
  subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void;
  subscribeState(listener: () => void, options?: { coalesce?: boolean }): () => boolean;
  waitForIdle(): Promise<void>;
  afterToolCall: AgentOptions["afterToolCall"];
  beforeToolCall: AgentOptions["beforeToolCall"];
  convertToLlm: NonNullable<AgentOptions["convertToLlm"]>;
  finishTurn: AgentOptions["finishTurn"];
  followUpMode: QueueMode;
  getApiKey: AgentOptions["getApiKey"];
  identity: AgentOptions["identity"];
  maxRetryDelayMs: AgentOptions["maxRetryDelayMs"];
  onPayload: AgentOptions["onPayload"];
  onProviderStreamEvent: AgentOptions["onProviderStreamEvent"];
  onResponse: AgentOptions["onResponse"];
  prepareNextTurn: AgentOptions["prepareNextTurn"];
  prepareNextTurnWithContext: AgentOptions["prepareNextTurnWithContext"];
  prepareRequest: AgentOptions["prepareRequest"];
  sessionId: AgentOptions["sessionId"];
  steeringMode: QueueMode;
  streamFunction: StreamFn;
  thinkingBudgets: AgentOptions["thinkingBudgets"];
  toolExecution: ToolExecutionMode;
  transformContext: AgentOptions["transformContext"];
  transport: Transport;
  readonly signal: AbortSignal | undefined;
  readonly state: AgentState;
}
export function agentLoop(prompts: AgentMessage[], context: AgentContext, config: AgentLoopConfig, signal: AbortSignal | undefined, streamFn: StreamFn | undefined): EventStream<AgentEvent, AgentMessage[]>;
export function agentLoopContinue(context: AgentContext, config: AgentLoopConfig, signal: AbortSignal | undefined, streamFn: StreamFn | undefined): EventStream<AgentEvent, AgentMessage[]>;
export function runAgentLoop(prompts: AgentMessage[], context: AgentContext, config: AgentLoopConfig, emit: AgentEventSink, signal: AbortSignal | undefined, streamFn: StreamFn | undefined): Promise<AgentMessage[]>;
export function runAgentLoopContinue(context: AgentContext, config: AgentLoopConfig, emit: AgentEventSink, signal: AbortSignal | undefined, streamFn: StreamFn | undefined): Promise<AgentMessage[]>;
export function runToolCall(toolCall: AgentToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome>;
export function setDefaultStreamFn(streamFn: StreamFn | undefined): void;
export function streamProxy(model: Model<any>, context: TranscriptContext, options: ProxyStreamOptions): AssistantMessageEventStream;
export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;
export interface InitOutput { readonly memory: WebAssembly.Memory }
export type SyncInitInput = BufferSource | WebAssembly.Module;
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;
export default function __wbg_init(module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
`;

writeFileSync(
  join(out, "pi_agent_wasm.d.ts"),
  `/* scratch: src/types.rs custom sections + stubs of the wasm-bindgen declarations */\n\n${sections.join("\n\n")}\n${generated}`,
);
console.log(`wrote ${out} (${sections.length} sections + stubs)`);
