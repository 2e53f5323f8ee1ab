// The app's one-module worker: serveAgent with a stream function that runs here.
import { createAssistantMessageEventStream } from "pi-agent-wasm";
import { serveAgent } from "pi-agent-wasm/worker-host";

serveAgent({
	streamFn(model) {
		const stream = createAssistantMessageEventStream();
		const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() };
		queueMicrotask(() => {
			stream.push({ type: "start", partial });
			partial.content.push({ type: "text", text: "" });
			stream.push({ type: "text_start", contentIndex: 0, partial });
			for (const delta of ["Hello ", "from ", "the worker"]) {
				partial.content[0].text += delta;
				stream.push({ type: "text_delta", contentIndex: 0, delta, partial });
			}
			stream.push({ type: "text_end", contentIndex: 0, content: partial.content[0].text, partial });
			stream.push({ type: "done", reason: "stop", message: partial });
		});
		return stream;
	},
});
