// A worker for the lifecycle tests: every answer is the roles of the context.messages its stream
// function was given (what the model would see), as JSON. `workerOptions.hang`: an answer to a
// transcript of one message streams until its run is aborted.
import * as impl from "/pkg/index.js";
import { serveAgent } from "/pkg/worker/host.js";
import { scripted, text } from "/support/scripted.mjs";

const roles = (call) => ({ content: [text(JSON.stringify(call.context.messages.map((m) => m?.role ?? String(m))))] });
serveAgent(({ hang }) => ({
	streamFn: scripted(impl, [
		(call) => (hang && call.context.messages.length === 1 ? { content: [text("waiting", ["wait", "ing"])], hang: true, honourSignal: false, timing: "micro" } : roles(call)),
		...Array.from({ length: 8 }, () => roles),
	]),
}));
