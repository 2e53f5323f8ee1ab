// What the bench page imports from the reference (bundled for the browser by run.mjs with esbuild).
export { Agent, streamProxy } from "@earendil-works/pi-agent-core";
export { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
