// React with useAgent on a WorkerAgent: memoised rows of finished messages and one streaming row, with render
// counts and the animation frame of each streaming render.
import { memo } from "react";
import { createRoot } from "react-dom/client";
import { flushSync } from "react-dom";
import { useAgent } from "pi-agent-wasm/react";
import { WorkerAgent } from "pi-agent-wasm/worker";

const T = (window.T = { rows: {}, stream: [], frame: 0 });
const ids = new WeakMap();
let next = 0;
const idOf = (m) => ids.get(m) ?? (ids.set(m, `m${next++}`), ids.get(m));
const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""));

const Row = memo(function Row({ message }) {
	const id = idOf(message);
	T.rows[id] = (T.rows[id] ?? 0) + 1;
	return <li>{message.role}: {textOf(message)}</li>;
});
function StreamingRow({ message }) {
	T.stream.push(T.frame);
	return <li data-streaming="">{textOf(message)}</li>;
}
function Chat({ agent }) {
	const s = useAgent(agent);
	return (
		<ul>
			{s.messages.map((m) => <Row key={idOf(m)} message={m} />)}
			{s.streamingMessage ? <StreamingRow message={s.streamingMessage} /> : null}
		</ul>
	);
}

const model = { id: "m", name: "m", api: "a", provider: "p", baseUrl: "", reasoning: false, input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 };
window.run = async () => {
	const messages = [];
	for (let i = 0; i < 4; i++) messages.push({ role: "user", content: `q${i}`, timestamp: 10 + i }, { role: "assistant", content: [{ type: "text", text: `a${i}` }], timestamp: 20 + i });
	const agent = new WorkerAgent({ initialState: { model, messages }, worker: new Worker("/t/render-worker.mjs", { type: "module" }) });
	const root = createRoot(document.getElementById("app"));
	flushSync(() => root.render(<Chat agent={agent} />));
	const history = agent.getSnapshot().messages.map(idOf);
	let ticking = true;
	const tick = () => {
		T.frame++;
		if (ticking) requestAnimationFrame(tick);
	};
	requestAnimationFrame(tick);
	const startFrame = T.frame;
	await agent.prompt("go");
	await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
	ticking = false;
	const s = agent.getSnapshot();
	const last = s.messages.at(-1);
	agent.worker.terminate();
	return {
		historyRenders: history.map((id) => T.rows[id]),
		finalRenders: T.rows[idOf(last)],
		userRenders: T.rows[idOf(s.messages.at(-2))],
		frames: T.frame - startFrame,
		streamRenders: T.stream.length,
		maxPerFrame: Math.max(...Object.values(T.stream.reduce((a, f) => ((a[f] = (a[f] ?? 0) + 1), a), {}))),
		finalText: textOf(last).length,
		domText: document.getElementById("app").textContent.length,
	};
};
window.ready = true;
