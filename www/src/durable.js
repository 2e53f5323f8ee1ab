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

/** Reloads the page into the replay (`true`) or the live chat, keeping the Worker switch (`?worker=1`) as it is. */
function goTo(replay) {
	const params = new URLSearchParams(window.location.search);
	if (replay) params.set("replay", "");
	else params.delete("replay");
	window.location.search = params.toString();
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
			// An Agent is recorded in the page, a WorkerAgent in its worker (pi-agent-wasm/replay does either).
			recorder = createRecorder();
			recorder.attach(chat.agent);
			status.set({ recording: true });
		} catch (err) {
			// A recorder that cannot follow this kind of agent: the chat still works and is saved; its runs are not
			// recorded, and the menu says why.
			recorder = null;
			status.set({ recording: false, recordingError: err.message });
		}
	}

	// "Take over here": a following tab asks the leading one to step back; the leader aborts its run, writes
	// and detaches its session, then attaches again, and finds the lock taken by the tab that asked (its
	// waiting request is first in the queue), so it follows.
	const takeover = typeof BroadcastChannel === "function" ? new BroadcastChannel(`pi-agent-wasm-demo:takeover:${SESSION_ID}`) : null;
	let current;
	function startLive() {
		let closed = false;
		const defaultModel = chat.agent.state.model;
		const attach = () =>
			attachSession(chat.agent, { id: SESSION_ID, onError: (err) => status.set({ error: `Saving the conversation failed: ${err.message}` }) })
				.then((s) => {
					if (closed) return s.detach();
					current = s;
					// A model saved by an earlier run that this server no longer offers: back to the default.
					const model = chat.agent.state.model;
					if (!chat.models.some((m) => m.provider === model?.provider && m.id === model?.id)) chat.agent.state.model = defaultModel;
					let wasLeader = false;
					const show = () => {
						status.set({ role: s.isLeader ? "leader" : "follower", restored: s.restored, interrupted: s.interrupted, session: s });
						// A call that was waiting for approval (or never ran) before the reload, or in the tab that
						// closed: ask again, once, in the tab that leads now.
						if (s.isLeader && !wasLeader && s.pendingCalls.length > 0) s.resume().catch((err) => status.set({ error: err.message }));
						wasLeader = s.isLeader;
					};
					s.subscribe(show);
					show();
				})
				.catch((err) => status.set({ error: err.message }));
		if (takeover) {
			takeover.onmessage = async (event) => {
				if (event.data !== "take-over" || !current?.isLeader || closed) return;
				const s = current;
				chat.abort();
				await chat.agent.waitForIdle();
				await s.detach();
				current = undefined;
				status.set({ role: "starting", handedOver: true });
				if (!closed) await attach();
			};
		}
		attach();
		return () => {
			closed = true;
			current?.detach();
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
		/** Asks the tab that runs the chat to hand it to this one. */
		takeOver() {
			if (!takeover || status.get().role !== "follower") return;
			status.set({ role: "taking-over" });
			takeover.postMessage("take-over");
		},
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
			goTo(true);
		},
		exitReplay() {
			sessionStorage.removeItem(REPLAY_KEY);
			goTo(false);
		},
	};
}
