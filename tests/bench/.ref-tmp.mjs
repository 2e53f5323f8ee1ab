export { Agent, streamProxy } from "@earendil-works/pi-agent-core";
export { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
