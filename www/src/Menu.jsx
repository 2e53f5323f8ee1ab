// The header's menu: what is used less often than the model picker and "New chat" (the token count on a
// phone, the thinking level, the Worker switch, "Export run" and "Replay"). A disclosure: the button says
// whether it is open, Escape closes it and gives focus back to the button, a click outside closes it.
import { useEffect, useId, useRef, useState } from "react";
import { WorkerSwitch } from "./workerMode.jsx";

export function Menu({ chat, snap, usage, durable, session }) {
	const [open, setOpen] = useState(false);
	const panelId = useId();
	const buttonRef = useRef(null);
	const rootRef = useRef(null);
	const fileRef = useRef(null);
	useEffect(() => {
		if (!open) return undefined;
		const onPointer = (e) => rootRef.current && !rootRef.current.contains(e.target) && setOpen(false);
		document.addEventListener("pointerdown", onPointer);
		return () => document.removeEventListener("pointerdown", onPointer);
	}, [open]);
	const close = () => {
		setOpen(false);
		buttonRef.current?.focus();
	};
	const live = session.mode === "live";
	// Without a recorder for this agent there is no run to export and none to replay; the title says why.
	const unrecorded = session.recording === false ? `Runs of this agent are not recorded: ${session.recordingError}` : undefined;
	return (
		<div className="menu" ref={rootRef} onKeyDown={(e) => e.key === "Escape" && open && (e.stopPropagation(), close())}>
			<button
				type="button"
				ref={buttonRef}
				className="menu-button"
				data-testid="menu-button"
				aria-expanded={open}
				aria-controls={panelId}
				onClick={() => setOpen((o) => !o)}
			>
				<span aria-hidden="true">⋯</span>
				<span className="sr-only">More</span>
			</button>
			<div id={panelId} className="menu-panel" data-testid="menu" hidden={!open}>
				<p className="menu-usage" data-testid="menu-usage">
					{usage}
				</p>
				{snap.model.reasoning && snap.model.provider !== "demo" && (
					<label className="menu-row">
						<span>Thinking</span>
						<select value={snap.thinkingLevel} disabled={snap.isStreaming} onChange={(e) => (chat.agent.state.thinkingLevel = e.target.value)}>
							{["off", "minimal", "low", "medium", "high"].map((l) => (
								<option key={l}>{l}</option>
							))}
						</select>
					</label>
				)}
				<WorkerSwitch disabled={snap.isStreaming} />
				<button type="button" className="menu-row" data-testid="export-run" disabled={Boolean(unrecorded)} title={unrecorded} onClick={() => (durable.exportRun(), close())}>
					Export run
				</button>
				<button type="button" className="menu-row" data-testid="replay" disabled={!live || Boolean(unrecorded) || snap.isStreaming} title={unrecorded} onClick={() => fileRef.current?.click()}>
					Replay a run…
				</button>
				<input
					ref={fileRef}
					type="file"
					accept="application/json,.json"
					hidden
					data-testid="replay-file"
					aria-label="Run log to replay"
					onChange={(e) => e.target.files?.[0] && durable.openReplay(e.target.files[0])}
				/>
			</div>
		</div>
	);
}
