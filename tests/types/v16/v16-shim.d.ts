// "pi-agent-wasm" as pi-agent-core 1.6.0 (an aliased devDependency) spells it: its exports plus the
// pi-ai 1.6.0 names an app imports from pi-agent-wasm.
export * from "pi-agent-core-1-6";
export type { Model, TranscriptContext } from "pi-ai-1-6";
