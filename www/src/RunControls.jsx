// Header controls of the durable session and the run log: "Export run", "Replay", and the
// session's status (restored, interrupted, another tab, replaying).
import { useEffect, useRef, useSyncExternalStore } from "react";

export function useDurable(durable) {
	useEffect(() => durable.start(), [durable]);
	return useSyncExternalStore(durable.status.subscribe, durable.status.get, durable.status.get);
}

export function RunControls({ durable, status }) {
	const fileRef = useRef(null);
	// Without a recorder for this agent, there is no run to export and no replay to open.
	const unrecorded = status.recording === false ? `Runs of this agent are not recorded: ${status.recordingError}` : undefined;
	const label =
		status.mode === "replay"
			? { playing: "Replaying a recorded run…", done: "Replay finished", diverged: "Replay diverged", failed: "Replay failed" }[status.replay] ?? "Replay"
			: status.role === "follower"
				? "Open in another tab: following it"
				: status.restored
					? status.interrupted
						? "Restored (the last run was interrupted)"
						: "Restored"
					: null;
	return (
		<span className="run-controls" data-testid="run-controls">
			{label && (
				<span className="badge" data-testid="session-status" data-role={status.role} data-replay={status.replay ?? ""}>
					{label}
				</span>
			)}
			{status.error && (
				<span className="badge error" role="alert" data-testid="session-error">
					{status.error}
				</span>
			)}
			<button className="link" data-testid="export-run" disabled={Boolean(unrecorded)} onClick={() => durable.exportRun()} title={unrecorded ?? "Download the log of this page's runs"}>
				Export run
			</button>
			{status.mode === "replay" ? (
				<button className="link" data-testid="exit-replay" onClick={() => durable.exitReplay()}>
					Back to the chat
				</button>
			) : (
				<button className="link" data-testid="replay" disabled={Boolean(unrecorded)} onClick={() => fileRef.current?.click()} title={unrecorded ?? "Play a run log exported earlier"}>
					Replay
				</button>
			)}
			<input
				ref={fileRef}
				type="file"
				accept="application/json,.json"
				hidden
				data-testid="replay-file"
				onChange={(e) => e.target.files?.[0] && durable.openReplay(e.target.files[0])}
			/>
		</span>
	);
}
