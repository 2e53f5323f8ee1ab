// The worker of the render-count test: 2,000 text deltas, one per task with a pause every 25, so the run spans
// many animation frames.
import { createAssistantMessageEventStream } from "/pkg/index.js";
import { serveAgent } from "/pkg/worker/host.js";

export const DELTAS = 2000;
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const channel = new MessageChannel();
let wake;
channel.port1.onmessage = () => wake();
const task = () => new Promise((r) => ((wake = r), channel.port2.postMessage(0)));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

serveAgent({
	streamFn(model) {
		const stream = createAssistantMessageEventStream();
		const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 5000 };
		(async () => {
			await task();
			stream.push({ type: "start", partial });
			partial.content.push({ type: "text", text: "" });
			stream.push({ type: "text_start", contentIndex: 0, partial });
			for (let i = 0; i < DELTAS; i++) {
				const delta = `w${i} `;
				partial.content[0].text += delta;
				stream.push({ type: "text_delta", contentIndex: 0, delta, partial });
				if (i % 25 === 24) await sleep(4);
				else await task();
			}
			stream.push({ type: "text_end", contentIndex: 0, content: partial.content[0].text, partial });
			stream.push({ type: "done", reason: "stop", message: partial });
		})();
		return stream;
	},
});
