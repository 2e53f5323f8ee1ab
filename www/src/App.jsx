import { memo, useEffect, useId, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { useAgent, useBranches } from "pi-agent-wasm/react";
import { createChatAgent, userMessage } from "./agent.js";
import { Markdown } from "./Markdown.jsx";
import { Modal } from "./Dialog.jsx";
import { TOOLS } from "./tools.js";
import { createDurable } from "./durable.js";
import { useDurable } from "./RunControls.jsx";
import { Menu } from "./Menu.jsx";
import { messageOutcome, textOf, toolOutcomes, usageKnown } from "./outcome.js";

const isDemo = (model) => model?.provider === "demo";
const fmt = (n) => new Intl.NumberFormat("en-US").format(n ?? 0);
const fmtBytes = (n) => (n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(2)} MB` : n >= 1024 ? `${Math.round(n / 1024)} kB` : `${n} bytes`);
const useStore = (store) => useSyncExternalStore(store.subscribe, store.get, store.get);
const focusComposer = () => document.querySelector('[data-testid="composer-input"]');

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
	if (state.status === "loading")
		return (
			<main className="splash" aria-busy="true">
				<h1>pi-agent-wasm</h1>
				<p>Connecting to the dev server…</p>
			</main>
		);
	if (state.status === "error")
		return (
			<main className="splash error">
				<h1>pi-agent-wasm</h1>
				<p role="alert">Could not load /api/config: {state.error}</p>
			</main>
		);
	return <Chat config={state.config} />;
}

/** The conversation's token counts; answers cut before the provider reported usage count as unknown. */
function totalUsage(messages) {
	const u = { input: 0, output: 0, cacheRead: 0, cost: 0, unknown: 0 };
	for (const m of messages) {
		if (m.role !== "assistant") continue;
		if (!usageKnown(m)) {
			u.unknown += 1;
			continue;
		}
		u.input += m.usage.input ?? 0;
		u.output += m.usage.output ?? 0;
		u.cacheRead += m.usage.cacheRead ?? 0;
		u.cost += m.usage.cost?.total ?? 0;
	}
	return u;
}

function Chat({ config }) {
	const chat = useMemo(() => createChatAgent(config), [config]);
	const durable = useMemo(() => createDurable(chat), [chat]);
	const session = useDurable(durable);
	const snap = useAgent(chat.agent);
	const activity = useStore(chat.activity);
	const approvals = useStore(chat.approvals);
	const queue = useStore(chat.queue);
	const announcement = useStore(chat.announcement);
	const [appError, setAppError] = useState(null);
	const [confirmNew, setConfirmNew] = useState(false);
	const readOnly = session.role === "follower" || session.role === "taking-over" || session.mode === "replay";

	const toolResults = useMemo(() => {
		const map = new Map();
		for (const m of snap.messages) if (m.role === "toolResult") map.set(m.toolCallId, m);
		return map;
	}, [snap.messages]);
	const outcomes = useMemo(
		() => toolOutcomes(snap.messages, { idle: !snap.isStreaming, steered: (m) => queue.delivered.get(m.timestamp) === "steer" }),
		[snap.messages, snap.isStreaming, queue.delivered],
	);
	const usage = useMemo(() => totalUsage(snap.messages), [snap.messages]);

	// In a following tab, the answer the leading tab streams.
	const streamingMessage = snap.streamingMessage ?? (session.role === "follower" ? session.session?.remoteStreamingMessage : undefined);
	// The messages shown, with their index in the transcript (where the session's branches name them) and, for
	// an answer (the assistant messages after a prompt), where it starts and whether this is its last message.
	const visible = useMemo(() => {
		const list = [];
		snap.messages.forEach((m, index) => (m.role === "user" || m.role === "assistant") && list.push({ m, index }));
		if (streamingMessage?.role === "assistant") list.push({ m: streamingMessage, index: snap.messages.length });
		let start;
		for (let i = 0; i < list.length; i++) {
			const e = list[i];
			if (e.m.role === "user") start = undefined;
			else {
				start ??= list[i - 1]?.m.role === "user" ? e.index : undefined;
				e.answerStart = start;
				e.answerEnd = list[i + 1]?.m.role !== "assistant";
			}
		}
		return list;
	}, [snap.messages, streamingMessage]);
	const branches = useBranches(session.mode === "live" ? session.session?.branches : undefined);
	const canBranch = !snap.isStreaming && !readOnly;
	// The prompt an answer that failed on its input answers: it can be edited or removed.
	const failedPrompt = useMemo(() => {
		const last = snap.messages[snap.messages.length - 1];
		const before = snap.messages[snap.messages.length - 2];
		return !snap.isStreaming && last?.role === "assistant" && last.stopReason === "error" && before?.role === "user" ? before : undefined;
	}, [snap.messages, snap.isStreaming]);

	// Follow the conversation while the view is at the bottom; stop following once the user scrolls up, and
	// offer a way back.
	const transcriptRef = useRef(null);
	const stick = useRef(true);
	const [atBottom, setAtBottom] = useState(true);
	const onScroll = () => {
		const el = transcriptRef.current;
		if (!el) return;
		const bottom = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
		stick.current = bottom;
		setAtBottom(bottom);
	};
	const jumpToLatest = () => {
		const el = transcriptRef.current;
		if (!el) return;
		stick.current = true;
		setAtBottom(true);
		el.scrollTop = el.scrollHeight;
		focusComposer()?.focus();
	};
	useLayoutEffect(() => {
		const el = transcriptRef.current;
		if (el && stick.current) el.scrollTop = el.scrollHeight;
		else if (el) setAtBottom(el.scrollHeight - el.scrollTop - el.clientHeight < 80);
	}, [snap, streamingMessage, activity, approvals, queue]);

	const run = (promise) =>
		promise.catch((err) => {
			setAppError(err instanceof Error ? err.message : String(err));
		});
	const send = (text) => {
		setAppError(null);
		stick.current = true;
		run(chat.send(text));
	};

	return (
		<div className="app">
			<Header chat={chat} snap={snap} usage={usage} durable={durable} session={session} onNewChat={() => setConfirmNew(true)} readOnly={readOnly} />
			<div className="transcript-wrap">
			<main className="transcript" data-testid="transcript" ref={transcriptRef} onScroll={onScroll} aria-labelledby="conversation-title" tabIndex={-1}>
				<h2 id="conversation-title" className="sr-only">
					Conversation
				</h2>
				{visible.length === 0 && <Welcome model={snap.model} onPick={readOnly ? undefined : send} />}
				{visible.map(({ m, index, answerStart, answerEnd }, i) =>
					m.role === "user" ? (
						<UserMessage
							key={`u${m.timestamp}-${i}`}
							message={m}
							index={index}
							kind={queue.delivered.get(m.timestamp)}
							failed={m === failedPrompt}
							chat={chat}
							point={branches.at(index)}
							canBranch={canBranch}
							onSwitch={(version) => run(branches.switchTo(index, version))}
							onEdited={(text) => {
								stick.current = true;
								// With a session the edited message starts a new version (the earlier one is kept); without one it replaces it.
								if (session.session?.branches && session.mode === "live") run(branches.edit(index, userMessage(text)));
								else if (chat.removeFrom(m)) send(text);
							}}
						/>
					) : (
						<AssistantMessage
							key={`a${m.timestamp}-${i}`}
							message={m}
							answerEnd={answerEnd && m !== streamingMessage}
							point={answerStart === undefined ? undefined : branches.at(answerStart)}
							canBranch={canBranch && answerStart !== undefined && Boolean(session.session?.branches) && session.mode === "live"}
							onSwitch={(version) => run(branches.switchTo(answerStart, version))}
							onRegenerate={() => {
								stick.current = true;
								run(branches.regenerate(answerStart));
							}}
							streaming={m === streamingMessage}
							toolResults={toolResults}
							outcomes={outcomes}
							activity={activity}
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
			{!atBottom && visible.length > 0 && (
				<button type="button" className="jump" data-testid="jump-to-latest" onClick={jumpToLatest}>
					↓ Jump to latest
				</button>
			)}
			</div>
			<Notices session={session} durable={durable} appError={appError} clearError={() => setAppError(null)} />
			<Composer chat={chat} snap={snap} queue={queue} session={session} readOnly={readOnly} onSend={send} />
			<div className="sr-only" aria-live="polite" data-testid="live-answer">
				{announcement}
			</div>
			{approvals.pending[0] && !readOnly && (
				<ApprovalDialog key={approvals.pending[0].id} request={approvals.pending[0]} onAbort={() => chat.abort()} />
			)}
			{confirmNew && (
				<NewChatDialog
					onCancel={() => setConfirmNew(false)}
					onExport={() => durable.exportRun()}
					onConfirm={() => {
						setConfirmNew(false);
						chat.reset();
						setAppError(null);
					}}
				/>
			)}
		</div>
	);
}

function Header({ chat, snap, usage, durable, session, onNewChat, readOnly }) {
	const current = `${snap.model.provider}/${snap.model.id}`;
	const modelId = useId();
	return (
		<header className="header" data-testid="header">
			<h1 className="brand">
				pi-agent-wasm <span className="muted wide-only">chat demo</span>
			</h1>
			<label htmlFor={modelId} className="sr-only">
				Model
			</label>
			<select
				id={modelId}
				className="model"
				data-testid="model-picker"
				value={current}
				disabled={snap.isStreaming || readOnly}
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
			<span className="usage wide-only" data-testid="usage" title={`cache read ${fmt(usage.cacheRead)} tokens`}>
				<UsageText usage={usage} />
			</span>
			<button
				type="button"
				className="new-chat"
				data-testid="new-chat"
				disabled={snap.isStreaming || readOnly || !snap.messages.some((m) => m.role === "user")}
				onClick={onNewChat}
				aria-label="New chat"
			>
				New<span className="roomy-only"> chat</span>
			</button>
			<Menu chat={chat} snap={snap} usage={<UsageText usage={usage} />} durable={durable} session={session} />
		</header>
	);
}

function UsageText({ usage }) {
	return (
		<>
			Tokens: {fmt(usage.input)} in · {fmt(usage.output)} out
			{usage.unknown > 0 && <> · {usage.unknown === 1 ? "1 answer" : `${usage.unknown} answers`} unknown</>}
			{usage.cost > 0 && <> · ${usage.cost.toFixed(4)}</>}
		</>
	);
}

const SUGGESTIONS = {
	demo: ["hello", "tour", "what is (2+3)*7?", "what time is it?", "read the about page", "run a long task for 10 seconds", "show some markdown"],
	other: ["What can you do here?", "What is sqrt(2) * pi?", "What time is it in Tokyo?", "Read the about page"],
};

function Welcome({ model, onPick }) {
	const demo = isDemo(model);
	return (
		<section className="welcome" data-testid="welcome" aria-labelledby="welcome-title">
			<h2 id="welcome-title">Start a conversation</h2>
			<p>
				The agent runs in this page (Rust → WebAssembly); the model is reached through the dev server, which keeps any API
				key. Tools: {TOOLS.map((t) => t.label).join(", ")}.
			</p>
			{demo && (
				<p>
					<span className="badge demo" data-testid="demo-badge">
						Offline demo model
					</span>{" "}
					scripted replies from the dev server, no API key.
				</p>
			)}
			<ul className="suggestions" aria-label="Suggestions">
				{(demo ? SUGGESTIONS.demo : SUGGESTIONS.other).map((s) => (
					<li key={s}>
						<button type="button" className="suggestion" data-testid="suggestion" disabled={!onPick} onClick={() => onPick?.(s)}>
							{s}
						</button>
					</li>
				))}
			</ul>
		</section>
	);
}

/** ‹ 2/3 ›: the versions of a message (a prompt edited, an answer regenerated). */
function VersionNav({ point, disabled, onSwitch, what }) {
	if (!point) return null;
	const { version, count } = point;
	return (
		<span className="versions" data-testid="branch-nav" role="group" aria-label={`${what} versions`}>
			<button type="button" className="link" data-testid="branch-prev" disabled={disabled || version === 0} onClick={() => onSwitch(version - 1)} aria-label={`Previous version of this ${what}`}>
				‹
			</button>
			<span data-testid="branch-label" aria-label={`Version ${version + 1} of ${count}`}>
				{version + 1}/{count}
			</span>
			<button type="button" className="link" data-testid="branch-next" disabled={disabled || version === count - 1} onClick={() => onSwitch(version + 1)} aria-label={`Next version of this ${what}`}>
				›
			</button>
		</span>
	);
}

const UserMessage = memo(function UserMessage({ message, index, kind, failed, chat, point, canBranch, onSwitch, onEdited }) {
	const [editing, setEditing] = useState(false);
	const text = textOf(message.content);
	return (
		<article className="msg user" data-testid="user-message" data-kind={kind ?? "prompt"} aria-label="You">
			{kind && <span className="chip">{kind === "steer" ? "steered while working" : "queued follow-up"}</span>}
			{editing ? (
				<EditBox
					chat={chat}
					initial={text}
					index={index}
					onCancel={() => setEditing(false)}
					onSave={(next) => {
						setEditing(false);
						onEdited(next);
					}}
				/>
			) : (
				<div className="bubble">{text.length > 20_000 ? `${text.slice(0, 20_000)}… (${fmt(text.length)} characters)` : text}</div>
			)}
			{!editing && (failed || canBranch || point) && (
				<div className="msg-actions" data-testid={failed ? "failed-prompt-actions" : "message-actions"}>
					{failed && <span className="muted">This message was not answered.</span>}
					<VersionNav point={point} disabled={!canBranch} onSwitch={onSwitch} what="message" />
					{(canBranch || failed) && (
						<button type="button" className="link" data-testid="edit-message" onClick={() => setEditing(true)}>
							Edit
						</button>
					)}
					{failed && (
						<button type="button" className="link" data-testid="remove-message" onClick={() => chat.removeFrom(message) && focusComposer()?.focus()}>
							Remove
						</button>
					)}
				</div>
			)}
		</article>
	);
});

function EditBox({ chat, initial, index, onCancel, onSave }) {
	const [text, setText] = useState(initial);
	const [before] = useState(() => chat.agent.state.messages.slice(0, index));
	const id = useId();
	const limit = useStore(chat.limit);
	// The request the edited message would make: the messages before it, then it.
	const bytes = useMemo(() => chat.requestBytes(text, before), [chat, text, before]);
	const tooLarge = bytes > limit;
	return (
		<form
			className="edit-box"
			onSubmit={(e) => {
				e.preventDefault();
				if (text.trim() && !tooLarge) onSave(text.trim());
			}}
		>
			<label htmlFor={id} className="sr-only">
				Edit your message
			</label>
			<textarea
				id={id}
				data-testid="edit-input"
				autoFocus
				rows={3}
				value={text}
				aria-invalid={tooLarge}
				onChange={(e) => setText(e.target.value)}
				onKeyDown={(e) => e.key === "Escape" && (e.preventDefault(), onCancel())}
			/>
			{tooLarge && <SizeWarning bytes={bytes} limit={limit} />}
			<div className="edit-actions">
				<button type="button" onClick={onCancel} data-testid="edit-cancel">
					Cancel
				</button>
				<button type="submit" className="primary" data-testid="edit-save" disabled={!text.trim() || tooLarge}>
					Send
				</button>
			</div>
		</form>
	);
}

function SizeWarning({ bytes, limit, id }) {
	return (
		<p className="size-warning" id={id} data-testid="size-warning" role="alert">
			Too large to send: the request would be {fmtBytes(bytes)}, the server takes at most {fmtBytes(limit)}.
		</p>
	);
}

function Thinking({ text, streaming }) {
	// Open while it streams; stays as it is when the answer ends (closing it then would move the text).
	const [open, setOpen] = useState(streaming);
	return (
		<details className="thinking" open={open} onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="thinking">
			<summary>Thinking</summary>
			<div className="thinking-text">{text}</div>
		</details>
	);
}

const OUTCOME_NOTES = {
	failed: (m) => {
		const limit = /request body too large \(limit (\d+) bytes\)/.exec(m.errorMessage ?? "");
		const hint = limit ? ` The request is larger than the server takes (${fmtBytes(Number(limit[1]))}): edit or remove your message.` : "";
		const text = m.errorMessage ?? "unknown error";
		return `Failed: ${text}${/[.!?]$/.test(text) ? "" : "."}${hint}`;
	},
	aborted: () => "Aborted: the run was stopped.",
	interrupted: () => "Interrupted: the page was reloaded or closed while this answer streamed.",
};

function AssistantMessage({ message, answerEnd, point, canBranch, onSwitch, onRegenerate, streaming, toolResults, outcomes, activity, pendingApproval, pendingToolCalls }) {
	const outcome = streaming ? undefined : messageOutcome(message);
	const known = usageKnown(message);
	return (
		<article
			className={`msg assistant${streaming ? " streaming" : ""}`}
			data-testid="assistant-message"
			data-stop-reason={message.stopReason}
			data-outcome={outcome ?? "streaming"}
			aria-label="Assistant"
			aria-busy={streaming}
		>
			{message.content.map((block, i) => {
				if (!block) return null;
				if (block.type === "thinking") return <Thinking key={i} text={block.thinking} streaming={streaming} />;
				if (block.type === "text")
					return block.text ? (
						<div key={i} className="text" data-testid="assistant-text">
							<Markdown text={block.text} streaming={streaming} />
						</div>
					) : null;
				if (block.type === "toolCall")
					return (
						<ToolCard
							key={block.id || i}
							call={block}
							messageStreaming={streaming}
							messageOutcome={outcome}
							result={toolResults.get(block.id)}
							outcome={outcomes.get(block.id)}
							activity={activity.get(block.id)}
							awaitingApproval={pendingApproval.some((p) => p.id === block.id)}
							running={pendingToolCalls.has(block.id)}
						/>
					);
				return null;
			})}
			{outcome && OUTCOME_NOTES[outcome] && (
				<div
					className={`msg-note ${outcome}`}
					role={outcome === "failed" ? "alert" : undefined}
					data-testid={outcome === "failed" ? "message-error" : "message-aborted"}
					data-outcome={outcome}
				>
					{OUTCOME_NOTES[outcome](message)}
				</div>
			)}
			<div className="meta" data-testid="message-meta">
				{streaming ? (
					"streaming…"
				) : (
					<>
						{outcome && <span className={`word ${outcome}`}>{outcome}</span>}
						{` · ${message.model}`}
						{message.usage && (known ? ` · ${fmt(message.usage.input)} in / ${fmt(message.usage.output)} out tokens` : " · usage unknown")}
						{message.durationMs !== undefined && ` · ${(message.durationMs / 1000).toFixed(1)} s`}
					</>
				)}
			</div>
			{answerEnd && (point || canBranch) && (
				<div className="msg-actions answer-actions" data-testid="answer-actions">
					<VersionNav point={point} disabled={!canBranch} onSwitch={onSwitch} what="answer" />
					{canBranch && (
						<button type="button" className="link" data-testid="regenerate" onClick={onRegenerate}>
							Regenerate
						</button>
					)}
				</div>
			)}
		</article>
	);
}

function ToolCard({ call, messageStreaming, messageOutcome, result, outcome, activity, awaitingApproval, running }) {
	let status;
	let label;
	if (result) {
		status = outcome ?? (result.isError ? "failed" : "done");
		label = status;
	} else if (awaitingApproval) {
		status = "approval";
		label = "waiting for your approval";
	} else if (running || activity?.status === "running") {
		status = "running";
		label = "running";
	} else if (messageStreaming) {
		status = "streaming";
		label = "receiving arguments…";
	} else if (messageOutcome === "aborted" || messageOutcome === "interrupted") {
		status = messageOutcome;
		label = messageOutcome;
	} else if (messageOutcome === "failed") {
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
		<section className={`tool-card ${status}`} data-testid="tool-card" data-tool={call.name} data-status={status} data-tool-call-id={call.id} aria-label={`Tool ${tool?.label ?? call.name}: ${label}`}>
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
			<pre className="tool-args" data-testid="tool-args" tabIndex={0} aria-label="Arguments">
				{JSON.stringify(call.arguments ?? {}, null, 2)}
			</pre>
			{(status === "running" || (progress && !result)) && (
				<div className="progress" data-testid="tool-progress">
					{total ? (
						<div className="bar" role="progressbar" aria-label="Progress" aria-valuemin={0} aria-valuemax={total} aria-valuenow={step}>
							<div className="fill" style={{ width: `${Math.round((100 * step) / total)}%` }} />
						</div>
					) : null}
					<span className="muted">{progress?.text ?? "working…"}</span>
				</div>
			)}
			{result && (
				<pre className={`tool-result${result.isError ? " error" : ""}`} data-testid="tool-result" tabIndex={0} aria-label="Result">
					{textOf(result.content) || "(no output)"}
				</pre>
			)}
		</section>
	);
}

function ApprovalDialog({ request, onAbort }) {
	const [reason, setReason] = useState("");
	const approveRef = useRef(null);
	const reasonId = useId();
	return (
		<Modal
			labelledBy="approval-title"
			describedBy="approval-desc"
			testId="approval-dialog"
			initialFocus={approveRef}
			returnFocus={focusComposer}
			// Escape denies: the call does not run, the model is told so.
			onCancel={() => request.deny(reason)}
		>
			<h2 id="approval-title">
				Run <code>{request.toolName}</code>?
			</h2>
			<p id="approval-desc">The model wants to run this tool in your browser with these arguments:</p>
			<pre className="tool-args" tabIndex={0} aria-label="Arguments">
				{JSON.stringify(request.args ?? {}, null, 2)}
			</pre>
			<label className="reason" htmlFor={reasonId}>
				Reason if you deny (the model sees it)
			</label>
			<input id={reasonId} data-testid="deny-reason" value={reason} placeholder="e.g. not now" onChange={(e) => setReason(e.target.value)} />
			<div className="actions">
				<button type="button" className="link abort-run" data-testid="dialog-abort" onClick={onAbort}>
					Abort run
				</button>
				<button type="button" className="danger" data-testid="deny" onClick={() => request.deny(reason)}>
					Deny
				</button>
				<button type="button" ref={approveRef} className="primary" data-testid="approve" onClick={() => request.approve()}>
					Approve
				</button>
			</div>
		</Modal>
	);
}

function NewChatDialog({ onCancel, onConfirm, onExport }) {
	const cancelRef = useRef(null);
	return (
		<Modal labelledBy="new-chat-title" describedBy="new-chat-desc" testId="new-chat-dialog" initialFocus={cancelRef} returnFocus={focusComposer} onCancel={onCancel}>
			<h2 id="new-chat-title">Start a new chat?</h2>
			<p id="new-chat-desc">This conversation will be removed from this browser. Export it first to keep a copy you can replay.</p>
			<div className="actions">
				<button type="button" className="link" data-testid="new-chat-export" onClick={onExport}>
					Export run
				</button>
				<button type="button" ref={cancelRef} data-testid="new-chat-cancel" onClick={onCancel}>
					Keep this chat
				</button>
				<button type="button" className="danger" data-testid="new-chat-confirm" onClick={onConfirm}>
					Start new chat
				</button>
			</div>
		</Modal>
	);
}

function Notices({ session, durable, appError, clearError }) {
	const follower = session.role === "follower" || session.role === "taking-over";
	return (
		<div className="notices">
			{follower && (
				<div className="banner info" data-testid="elsewhere">
					<span>This chat is running in another tab. You can read it here.</span>
					<button type="button" data-testid="take-over" disabled={session.role === "taking-over"} onClick={() => durable.takeOver()}>
						{session.role === "taking-over" ? "Taking over…" : "Take over here"}
					</button>
				</div>
			)}
			{session.mode === "replay" && (
				<div className="banner info" data-testid="replay-banner">
					<span>Playing a recorded run; the model is not called.</span>
					<button type="button" data-testid="exit-replay" onClick={() => durable.exitReplay()}>
						Back to the chat
					</button>
				</div>
			)}
			{session.error && (
				<div className="banner error" role="alert" data-testid="session-error">
					{session.error}
				</div>
			)}
			{appError && (
				<div className="banner error" role="alert" data-testid="error-banner">
					<span>
						<strong>Error:</strong> {appError}
					</span>
					<button type="button" className="link" onClick={clearError}>
						Dismiss
					</button>
				</div>
			)}
		</div>
	);
}

function sessionLabel(status) {
	if (status.mode === "replay")
		return { playing: "Replaying a recorded run…", done: "Replay finished", diverged: "Replay diverged", failed: "Replay failed" }[status.replay] ?? "Replay";
	if (status.role === "follower") return "Following another tab";
	if (status.role === "taking-over") return "Taking over…";
	if (status.restored) return status.interrupted ? "Restored (the last run was interrupted)" : "Restored";
	if (status.role === "leader") return "Saved in this browser";
	return "";
}

function Composer({ chat, snap, queue, session, readOnly, onSend }) {
	const [text, setText] = useState("");
	const busy = snap.isStreaming;
	const trimmed = text.trim();
	const inputId = useId();
	const warningId = useId();
	const limit = useStore(chat.limit);
	const bytes = useMemo(() => (text.length > 4096 ? chat.requestBytes(text) : 0), [chat, text, snap.messages]);
	const tooLarge = bytes > limit;
	const canSend = trimmed !== "" && !tooLarge && !readOnly;
	const submit = (mode) => {
		if (!canSend) return;
		if (mode === "send") onSend(trimmed);
		else if (mode === "steer") chat.steer(trimmed);
		else chat.followUp(trimmed);
		setText("");
	};
	const onKeyDown = (e) => {
		if (e.key === "Escape" && busy && !readOnly) {
			e.preventDefault();
			chat.abort();
		} else if (e.key === "Enter" && !e.shiftKey) {
			e.preventDefault();
			submit(busy ? (e.altKey || e.ctrlKey || e.metaKey ? "followUp" : "steer") : "send");
		}
	};
	const label = sessionLabel(session);
	const placeholder = readOnly
		? session.mode === "replay"
			? "Replaying: the composer is off"
			: "Read-only: this chat runs in another tab"
		: busy
			? "Steer (Enter) or queue a follow-up (Alt+Enter)"
			: "Message the agent";
	return (
		<section className="composer" aria-labelledby="composer-title" data-testid="composer">
			<h2 id="composer-title" className="sr-only">
				Your message
			</h2>
			{queue.pending.length > 0 && (
				<ul className="queued" data-testid="queued" aria-label="Queued messages">
					{queue.pending.map((q) => (
						<li key={q.message.timestamp} className="chip" data-kind={q.kind}>
							{q.kind === "steer" ? "steer" : "follow-up"}: {textOf(q.message.content)}
						</li>
					))}
				</ul>
			)}
			<label htmlFor={inputId} className="sr-only">
				Message
			</label>
			<textarea
				id={inputId}
				data-testid="composer-input"
				rows={2}
				value={text}
				readOnly={readOnly}
				aria-readonly={readOnly}
				aria-invalid={tooLarge}
				aria-describedby={tooLarge ? warningId : undefined}
				placeholder={placeholder}
				onChange={(e) => setText(e.target.value)}
				onKeyDown={onKeyDown}
			/>
			{tooLarge && <SizeWarning id={warningId} bytes={bytes} limit={limit} />}
			<div className="composer-bar">
				<p className="status" role="status" data-testid="run-status" data-streaming={String(busy)}>
					<span>{busy ? "Agent working…" : "Idle"}</span>
					{bytes > limit / 4 && !tooLarge && <span className="muted" data-testid="size-meter">{` · ${fmtBytes(bytes)} of ${fmtBytes(limit)}`}</span>}
					{label && (
						<span className="muted" data-testid="session-status" data-role={session.role} data-replay={session.replay ?? ""}>
							{` · ${label}`}
						</span>
					)}
				</p>
				<div className="buttons">
					{busy && !readOnly ? (
						<>
							<button type="button" data-testid="steer" disabled={!canSend} onClick={() => submit("steer")} title="Delivered after the running tools finish">
								Steer
							</button>
							<button type="button" data-testid="follow-up" aria-label="Queue follow-up" disabled={!canSend} onClick={() => submit("followUp")} title="Delivered when the agent would stop">
								Queue<span className="wide-only"> follow-up</span>
							</button>
							<button type="button" data-testid="abort" className="danger" onClick={() => chat.abort()}>
								Stop
							</button>
						</>
					) : (
						<button type="button" data-testid="send" className="primary" disabled={!canSend || busy} onClick={() => submit("send")}>
							Send
						</button>
					)}
				</div>
			</div>
		</section>
	);
}
