import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { useAgent } from "pi-agent-wasm/react";
import { createChatAgent } from "./agent.js";
import { Markdown } from "./Markdown.jsx";
import { TOOLS } from "./tools.js";
import { createDurable } from "./durable.js";
import { RunControls, useDurable } from "./RunControls.jsx";
import { WorkerSwitch } from "./workerMode.jsx";

const isDemo = (model) => model?.provider === "demo";
const fmt = (n) => new Intl.NumberFormat("en-US").format(n ?? 0);
const textOf = (content) =>
	typeof content === "string" ? content : (content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const useStore = (store) => useSyncExternalStore(store.subscribe, store.get, store.get);

export function App() {
	const [state, setState] = useState({ status: "loading" });
	useEffect(() => {
		let cancelled = false;
		fetch("/api/config", { cache: "no-store" })
			.then(async (res) => {
				const body = await res.json().catch(() => ({}));
				if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
				if (!Array.isArray(body.models) || body.models.length === 0) throw new Error("the server offers no models");
				return body;
			})
			.then((config) => !cancelled && setState({ status: "ready", config }))
			.catch((err) => !cancelled && setState({ status: "error", error: err.message }));
		return () => {
			cancelled = true;
		};
	}, []);
	if (state.status === "loading") return <div className="splash">Connecting to the dev server…</div>;
	if (state.status === "error")
		return (
			<div className="splash error" role="alert">
				Could not load /api/config: {state.error}
			</div>
		);
	return <Chat config={state.config} />;
}

function Chat({ config }) {
	const chat = useMemo(() => createChatAgent(config), [config]);
	const durable = useMemo(() => createDurable(chat), [chat]);
	const durableStatus = useDurable(durable);
	const snap = useAgent(chat.agent);
	const activity = useStore(chat.activity);
	const approvals = useStore(chat.approvals);
	const queue = useStore(chat.queue);
	const [appError, setAppError] = useState(null);

	const toolResults = useMemo(() => {
		const map = new Map();
		for (const m of snap.messages) if (m.role === "toolResult") map.set(m.toolCallId, m);
		return map;
	}, [snap.messages]);

	const usage = useMemo(() => {
		const u = { input: 0, output: 0, cacheRead: 0, total: 0, cost: 0, turns: 0 };
		for (const m of snap.messages) {
			if (m.role !== "assistant" || !m.usage) continue;
			u.input += m.usage.input ?? 0;
			u.output += m.usage.output ?? 0;
			u.cacheRead += m.usage.cacheRead ?? 0;
			u.total += m.usage.totalTokens ?? 0;
			u.cost += m.usage.cost?.total ?? 0;
			u.turns += 1;
		}
		return u;
	}, [snap.messages]);

	const visible = useMemo(() => {
		const list = snap.messages.filter((m) => m.role === "user" || m.role === "assistant");
		const s = snap.streamingMessage;
		if (s && s.role === "assistant") return [...list, s];
		return list;
	}, [snap.messages, snap.streamingMessage]);

	// Follow the conversation while the view is at the bottom; stop following once the user scrolls up.
	const transcriptRef = useRef(null);
	const stick = useRef(true);
	const onScroll = () => {
		const el = transcriptRef.current;
		if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
	};
	useLayoutEffect(() => {
		const el = transcriptRef.current;
		if (el && stick.current) el.scrollTop = el.scrollHeight;
	}, [snap, activity, approvals, queue]);

	const run = (promise) =>
		promise.catch((err) => {
			setAppError(err instanceof Error ? err.message : String(err));
		});

	return (
		<div className="app">
			<Header chat={chat} snap={snap} usage={usage} extra={<RunControls durable={durable} status={durableStatus} />} />
			<main className="transcript" data-testid="transcript" ref={transcriptRef} onScroll={onScroll}>
				{visible.length === 0 && <Welcome model={snap.model} />}
				{visible.map((m, i) =>
					m.role === "user" ? (
						<UserMessage key={`u${m.timestamp}-${i}`} message={m} kind={queue.delivered.get(m.timestamp)} />
					) : (
						<AssistantMessage
							key={`a${m.timestamp}-${i}`}
							message={m}
							streaming={m === snap.streamingMessage}
							toolResults={toolResults}
							activity={activity}
							decisions={approvals.decisions}
							pendingApproval={approvals.pending}
							pendingToolCalls={snap.pendingToolCalls}
						/>
					),
				)}
				{snap.isStreaming && !snap.streamingMessage && snap.pendingToolCalls.size === 0 && approvals.pending.length === 0 && (
					<div className="working" data-testid="working">
						Waiting for the model…
					</div>
				)}
			</main>
			{appError && (
				<div className="banner error" role="alert" data-testid="error-banner">
					<strong>Error:</strong> {appError}
					<button className="link" onClick={() => setAppError(null)}>
						dismiss
					</button>
				</div>
			)}
			<Composer chat={chat} snap={snap} queue={queue} run={run} clearError={() => setAppError(null)} onSend={() => (stick.current = true)} />
			{approvals.pending[0] && <ApprovalDialog key={approvals.pending[0].id} request={approvals.pending[0]} onAbort={() => chat.abort()} />}
		</div>
	);
}

function Header({ chat, snap, usage, extra }) {
	const current = `${snap.model.provider}/${snap.model.id}`;
	return (
		<header className="header">
			<div className="brand">
				<strong>pi-agent-wasm</strong> <span className="muted">chat demo</span>
			</div>
			<label className="picker">
				<span className="muted">Model</span>
				<select
					data-testid="model-picker"
					value={current}
					disabled={snap.isStreaming}
					onChange={(e) => {
						const model = chat.models.find((m) => `${m.provider}/${m.id}` === e.target.value);
						if (model) chat.agent.state.model = model;
					}}
				>
					{chat.models.map((m) => (
						<option key={`${m.provider}/${m.id}`} value={`${m.provider}/${m.id}`}>
							{m.name}
						</option>
					))}
				</select>
			</label>
			{snap.model.reasoning && !isDemo(snap.model) && (
				<label className="picker">
					<span className="muted">Thinking</span>
					<select value={snap.thinkingLevel} disabled={snap.isStreaming} onChange={(e) => (chat.agent.state.thinkingLevel = e.target.value)}>
						{["off", "minimal", "low", "medium", "high"].map((l) => (
							<option key={l}>{l}</option>
						))}
					</select>
				</label>
			)}
			{isDemo(snap.model) && (
				<span className="badge demo" data-testid="demo-badge" title="Replies come from a script in the dev server; no API key is used">
					Offline demo model: scripted replies, no API key
				</span>
			)}
			<WorkerSwitch disabled={snap.isStreaming} />
			<span className="usage" data-testid="usage" title={`cache read ${fmt(usage.cacheRead)} tokens`}>
				Tokens: {fmt(usage.input)} in · {fmt(usage.output)} out
				{usage.cost > 0 && <> · ${usage.cost.toFixed(4)}</>}
			</span>
			{extra}
		</header>
	);
}

function Welcome({ model }) {
	return (
		<div className="welcome" data-testid="welcome">
			<p>
				The agent runs in this page (Rust → WebAssembly); the model is reached through the dev server, which keeps any API
				key. Tools registered by the page: {TOOLS.map((t) => t.label).join(", ")}.
			</p>
			{isDemo(model) && (
				<p className="muted">
					You are talking to the offline demo model. Say <code>hello</code> for a list of things to try, or <code>tour</code>.
				</p>
			)}
		</div>
	);
}

const UserMessage = memo(function UserMessage({ message, kind }) {
	return (
		<div className="msg user" data-testid="user-message" data-kind={kind ?? "prompt"}>
			{kind && <span className="chip">{kind === "steer" ? "steered while working" : "queued follow-up"}</span>}
			<div className="bubble">{textOf(message.content)}</div>
		</div>
	);
});

function AssistantMessage({ message, streaming, toolResults, activity, decisions, pendingApproval, pendingToolCalls }) {
	const usage = message.usage;
	return (
		<div className={`msg assistant${streaming ? " streaming" : ""}`} data-testid="assistant-message" data-stop-reason={message.stopReason}>
			{message.content.map((block, i) => {
				if (!block) return null;
				if (block.type === "thinking")
					return (
						<details key={i} className="thinking" open={streaming} data-testid="thinking">
							<summary>Thinking</summary>
							<div className="thinking-text">{block.thinking}</div>
						</details>
					);
				if (block.type === "text") return block.text ? <div key={i} className="text" data-testid="assistant-text"><Markdown text={block.text} /></div> : null;
				if (block.type === "toolCall")
					return (
						<ToolCard
							key={block.id || i}
							call={block}
							messageStreaming={streaming}
							messageStop={message.stopReason}
							result={toolResults.get(block.id)}
							activity={activity.get(block.id)}
							decision={decisions.get(block.id)}
							awaitingApproval={pendingApproval.some((p) => p.id === block.id)}
							running={pendingToolCalls.has(block.id)}
						/>
					);
				return null;
			})}
			{message.stopReason === "error" && (
				<div className="msg-error" role="alert" data-testid="message-error">
					The model failed: {message.errorMessage ?? "unknown error"}
				</div>
			)}
			{message.stopReason === "aborted" && (
				<div className="msg-note" data-testid="message-aborted" title={message.errorMessage}>
					{message.errorMessage?.startsWith("Interrupted") ? "Interrupted: the page was reloaded while this answer streamed." : "Stopped: the run was aborted."}
				</div>
			)}
			{!streaming && (
				<div className="meta">
					{message.model}
					{usage && ` · ${fmt(usage.input)} in / ${fmt(usage.output)} out tokens`}
					{message.durationMs !== undefined && ` · ${(message.durationMs / 1000).toFixed(1)} s`}
				</div>
			)}
		</div>
	);
}

function ToolCard({ call, messageStreaming, messageStop, result, activity, decision, awaitingApproval, running }) {
	let status;
	let label;
	if (result) {
		const denied = decision && !decision.approved && !decision.aborted;
		status = denied ? "denied" : decision?.aborted ? "skipped" : result.isError ? "error" : "done";
		label = denied ? "denied" : decision?.aborted ? "aborted" : result.isError ? "failed" : "done";
	} else if (awaitingApproval) {
		status = "approval";
		label = "waiting for your approval";
	} else if (running || activity?.status === "running") {
		status = "running";
		label = "running";
	} else if (messageStreaming) {
		status = "streaming";
		label = "receiving arguments…";
	} else if (messageStop === "error" || messageStop === "aborted") {
		status = "skipped";
		label = "not run";
	} else {
		status = "queued";
		label = "queued";
	}
	const durationMs = result?.durationMs ?? activity?.durationMs;
	const progress = activity?.progress;
	const step = progress?.details?.step;
	const total = progress?.details?.total;
	const tool = TOOLS.find((t) => t.name === call.name);
	return (
		<div className={`tool-card ${status}`} data-testid="tool-card" data-tool={call.name} data-status={status} data-tool-call-id={call.id}>
			<div className="tool-head">
				<span className="tool-name">{tool?.label ?? call.name}</span>
				<code className="muted">{call.name}</code>
				{tool?.needsApproval && <span className="chip">asks first</span>}
				<span className={`pill ${status}`} data-testid="tool-status">
					{label}
				</span>
				{durationMs !== undefined && (
					<span className="muted duration" data-testid="tool-duration">
						{durationMs} ms
					</span>
				)}
			</div>
			<pre className="tool-args" data-testid="tool-args">
				{JSON.stringify(call.arguments ?? {}, null, 2)}
			</pre>
			{(status === "running" || (progress && !result)) && (
				<div className="progress" data-testid="tool-progress">
					{total ? (
						<div className="bar">
							<div className="fill" style={{ width: `${Math.round((100 * step) / total)}%` }} />
						</div>
					) : null}
					<span className="muted">{progress?.text ?? "working…"}</span>
				</div>
			)}
			{result && (
				<pre className={`tool-result${result.isError ? " error" : ""}`} data-testid="tool-result">
					{textOf(result.content) || "(no output)"}
				</pre>
			)}
		</div>
	);
}

function ApprovalDialog({ request, onAbort }) {
	const [reason, setReason] = useState("");
	const approveRef = useRef(null);
	useEffect(() => approveRef.current?.focus(), []);
	return (
		<div className="overlay">
			<div className="dialog" role="dialog" aria-modal="true" aria-labelledby="approval-title" data-testid="approval-dialog">
				<h2 id="approval-title">
					Run <code>{request.toolName}</code>?
				</h2>
				<p className="muted">The model wants to run this tool in your browser with these arguments:</p>
				<pre className="tool-args">{JSON.stringify(request.args ?? {}, null, 2)}</pre>
				<label className="reason">
					<span className="muted">Reason if you deny (the model sees it)</span>
					<input data-testid="deny-reason" value={reason} placeholder="e.g. not now" onChange={(e) => setReason(e.target.value)} />
				</label>
				<div className="actions">
					<button className="link abort-run" data-testid="dialog-abort" onClick={onAbort} title="Abort the whole run">
						Abort run
					</button>
					<button className="danger" data-testid="deny" onClick={() => request.deny(reason)}>
						Deny
					</button>
					<button ref={approveRef} className="primary" data-testid="approve" onClick={() => request.approve()}>
						Approve
					</button>
				</div>
			</div>
		</div>
	);
}

function Composer({ chat, snap, queue, run, clearError, onSend }) {
	const [text, setText] = useState("");
	const busy = snap.isStreaming;
	const trimmed = text.trim();
	const submit = (mode) => {
		if (!trimmed) return;
		clearError();
		if (mode === "send") {
			onSend();
			run(chat.send(trimmed));
		}
		else if (mode === "steer") chat.steer(trimmed);
		else chat.followUp(trimmed);
		setText("");
	};
	const onKeyDown = (e) => {
		if (e.key === "Escape" && busy) {
			e.preventDefault();
			chat.abort();
		} else if (e.key === "Enter" && !e.shiftKey) {
			e.preventDefault();
			submit(busy ? (e.altKey || e.ctrlKey || e.metaKey ? "followUp" : "steer") : "send");
		}
	};
	return (
		<footer className="composer">
			{queue.pending.length > 0 && (
				<div className="queued" data-testid="queued">
					{queue.pending.map((q) => (
						<span key={q.message.timestamp} className="chip" data-kind={q.kind}>
							{q.kind === "steer" ? "steer" : "follow-up"}: {textOf(q.message.content)}
						</span>
					))}
				</div>
			)}
			<div className="row">
				<textarea
					data-testid="composer-input"
					rows={2}
					value={text}
					placeholder={busy ? "Steer the agent (Enter) or queue a follow-up (Alt+Enter)…" : "Message the agent (Enter to send, Shift+Enter for a new line)"}
					onChange={(e) => setText(e.target.value)}
					onKeyDown={onKeyDown}
				/>
				<div className="buttons">
					{busy ? (
						<>
							<button data-testid="steer" disabled={!trimmed} onClick={() => submit("steer")} title="Delivered after the running tools finish">
								Steer
							</button>
							<button data-testid="follow-up" disabled={!trimmed} onClick={() => submit("followUp")} title="Delivered when the agent would stop">
								Queue follow-up
							</button>
							<button data-testid="abort" className="danger" onClick={() => chat.abort()}>
								Abort
							</button>
						</>
					) : (
						<>
							<button data-testid="send" className="primary" disabled={!trimmed} onClick={() => submit("send")}>
								Send
							</button>
							<button data-testid="new-chat" disabled={!snap.messages.some((m) => m.role === "user")} onClick={() => chat.reset()}>
								New chat
							</button>
						</>
					)}
				</div>
			</div>
			<div className="status muted" data-testid="run-status" data-streaming={String(busy)}>
				{busy ? "Agent working…" : "Idle"}
			</div>
		</footer>
	);
}
