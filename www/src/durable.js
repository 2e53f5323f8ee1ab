// The demo's durable session and run recording (pi-agent-wasm/session and pi-agent-wasm/replay):
// the conversation is kept in IndexedDB across reloads (with the agent in a Worker, the session
// writes from the worker), every run of this page is recorded for "Export run", and a page opened
// with ?replay plays a log chosen with "Replay" instead of talking to the model.
import { attachSession } from "pi-agent-wasm/session";
import { createRecorder, createReplay } from "pi-agent-wasm/replay";

const SESSION_ID = "demo-chat";
const REPLAY_KEY = "pi-agent-wasm-demo:replay-log";

function createStore(initial) {
	let value = initial;
	const listeners = new Set();
	return {
		get: () => value,
		set(patch) {
			value = { ...value, ...patch };
			for (const l of listeners) l();
		},
		subscribe(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
	};
}

/** Whether this page load plays a log (opened by "Replay"). */
export const replayMode = () => new URLSearchParams(window.location.search).has("replay") && sessionStorage.getItem(REPLAY_KEY) !== null;

/**
 * Records `chat.agent` (live mode) and returns the durable controls: `start()` attaches the session
 * (or starts the replay) and returns a cleanup; `status` is a store for the UI.
 */
const made = new WeakMap();
export function createDurable(chat) {
	// React's StrictMode builds memoised values twice in development: record the agent once.
	if (!made.has(chat)) made.set(chat, makeDurable(chat));
	return made.get(chat);
}

function makeDurable(chat) {
	const status = createStore({ mode: replayMode() ? "replay" : "live", role: "starting", error: null, replay: null, recording: null });
	let recorder = null;
	if (status.get().mode === "live") {
		try {
			recorder = createRecorder();
			recorder.attach(chat.agent);
			status.set({ recording: true });
		} catch (err) {
			// A recorder that cannot follow this kind of agent: the chat still works and is saved; its runs are not
			// recorded, and the header says why.
			recorder = null;
			status.set({ recording: false, recordingError: err.message });
		}
	}

	function startLive() {
		let session;
		let closed = false;
		const defaultModel = chat.agent.state.model;
		attachSession(chat.agent, { id: SESSION_ID, onError: (err) => status.set({ error: `Saving the conversation failed: ${err.message}` }) })
			.then((s) => {
				session = s;
				if (closed) return s.detach();
				// A model saved by an earlier run that this server no longer offers: back to the default.
				const model = chat.agent.state.model;
				if (!chat.models.some((m) => m.provider === model?.provider && m.id === model?.id)) chat.agent.state.model = defaultModel;
				const show = () => status.set({ role: s.isLeader ? "leader" : "follower", restored: s.restored, interrupted: s.interrupted });
				s.subscribe(show);
				show();
				// A call that was waiting for approval (or never ran) before the reload: ask again.
				if (s.isLeader && s.pendingCalls.length > 0) s.resume().catch((err) => status.set({ error: err.message }));
			})
			.catch((err) => status.set({ error: err.message }));
		return () => {
			closed = true;
			session?.detach();
		};
	}

	let replaying = false;
	function startReplay() {
		if (replaying) return () => {};
		replaying = true;
		let replay;
		try {
			const text = sessionStorage.getItem(REPLAY_KEY);
			const log = JSON.parse(text);
			replay = createReplay(log, { timing: "recorded" });
			const first = log.requests[0]?.model;
			const model = chat.models.find((m) => `${m.provider}/${m.id}` === first);
			if (model) chat.agent.state.model = model;
		} catch (err) {
			status.set({ role: "replay", replay: "failed", error: `Cannot replay this file: ${err.message}` });
			return () => {};
		}
		status.set({ role: "replay", replay: "playing" });
		replay.play(chat.agent).then(
			() => status.set({ replay: "done" }),
			(err) => status.set({ replay: "diverged", error: err.message }),
		);
		return () => chat.agent.abort();
	}

	return {
		status,
		start: () => (status.get().mode === "replay" ? startReplay() : startLive()),
		/** Downloads the log of this page's runs. */
		exportRun() {
			const blob = new Blob([recorder ? recorder.export() : sessionStorage.getItem(REPLAY_KEY) ?? "{}"], { type: "application/json" });
			const a = document.createElement("a");
			a.href = URL.createObjectURL(blob);
			a.download = `pi-agent-run-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
			a.click();
			setTimeout(() => URL.revokeObjectURL(a.href), 1000);
		},
		/** Opens the replay of a log file in this tab (the saved conversation stays saved). */
		async openReplay(file) {
			sessionStorage.setItem(REPLAY_KEY, await file.text());
			window.location.search = "?replay";
		},
		exitReplay() {
			sessionStorage.removeItem(REPLAY_KEY);
			window.location.search = "";
		},
	};
}
