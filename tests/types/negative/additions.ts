// pi-agent-wasm's additions are as strict as the rest.
import { Agent } from "pi-agent-wasm";

const agent = new Agent();
// @ts-expect-error -- snapshots are frozen
agent.getSnapshot().messages.push({ role: "user", content: "", timestamp: 0 });
// @ts-expect-error -- snapshots are frozen
agent.getSnapshot().isStreaming = false;
// @ts-expect-error -- snapshots are frozen
agent.getSnapshot().pendingToolCalls.clear();
// @ts-expect-error -- the listener takes no arguments
agent.subscribeState((snapshot: string) => console.log(snapshot));
// @ts-expect-error -- not an option
agent.subscribeState(() => {}, { debounce: 16 });
