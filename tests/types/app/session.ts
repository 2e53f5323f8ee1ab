// pi-agent-wasm/session and pi-agent-wasm/replay as the README uses them.
import { Agent, type Model, type StreamFn } from "pi-agent-wasm";
import { attachSession, indexedDBStore, memoryStore, MOVED_ON_APPROVAL, MOVED_ON_CALL, SessionLogError, type BranchPoint, type Session, type SessionStore } from "pi-agent-wasm/session";
import { createRecorder, createReplay, ReplayDivergenceError, type ReplayLog } from "pi-agent-wasm/replay";
import { WorkerAgent } from "pi-agent-wasm/worker";

declare const streamFn: StreamFn;
declare const model: Model<any>;

// A store of the app's own: a server endpoint.
const serverStore: SessionStore = {
  load: async (id) => (await fetch(`/sessions/${id}`)).text(),
  append: async (id, text) => void (await fetch(`/sessions/${id}`, { method: "POST", body: text })),
  clear: async (id) => void (await fetch(`/sessions/${id}`, { method: "DELETE" })),
};

export async function durable(): Promise<Session> {
  const agent = new Agent({ initialState: { systemPrompt: "Be brief.", model }, streamFn });
  const session = await attachSession(agent, { id: "chat-1", store: navigator.onLine ? indexedDBStore() : memoryStore(), onError: (e: Error) => console.warn(e.message) });
  const ids: string[] = session.pendingApprovals.map((p) => p.toolCall.id);
  if (ids.length > 0 && session.isLeader) await session.resume();
  const unsubscribe: () => boolean = session.subscribe((s) => console.log(s.restored, s.interrupted, s.dropped, s.error?.message));
  unsubscribe();
  if (session.error instanceof SessionLogError) console.warn("another version");
  const declined: string[] = [MOVED_ON_APPROVAL, MOVED_ON_CALL];
  console.log(declined);
  // A store that checks the length a write extends.
  const checking: SessionStore = { ...serverStore, append: async (id, text, options) => void console.log(id, text.length, options?.length) };
  console.log(checking);
  await attachSession(new Agent({ streamFn }), { id: "x", store: serverStore, flushMs: 50, tabs: false });
  // @ts-expect-error the id is required
  await attachSession(agent, {});
  return session;
}

// The README's Workers + Sessions example: the loop in a Worker, the session in the page.
export async function durableInAWorker(): Promise<Session> {
  const agent = new WorkerAgent({
    worker: () => new Worker(new URL("./agent.worker.js", import.meta.url), { type: "module" }),
    initialState: { systemPrompt: "Be brief.", model },
    beforeToolCall: async () => undefined,
  });
  const session = await attachSession(agent, { id: "chat-1" });
  if (session.pendingApprovals.length > 0) await session.resume();
  return session;
}

export async function recordAndReplay(): Promise<string> {
  const agent = new Agent({ initialState: { model }, streamFn });
  const recorder = createRecorder();
  recorder.attach(agent);
  await agent.prompt("hi");
  const log: ReplayLog = recorder.log();
  const replay = createReplay(recorder.export(), { timing: "recorded", speed: 2, onDivergence: (e) => console.warn(e.request) });
  await replay.play(new Agent({ initialState: { model } }));
  const other = createReplay(log);
  other.attach(new Agent({ streamFn: other.streamFn }));
  if (other.divergence instanceof ReplayDivergenceError) return other.divergence.message;
  return JSON.stringify(log.v);
}

// Branches: edit, regenerate and switch between versions of the conversation.
export async function branching(session: Session): Promise<number> {
  const points: readonly BranchPoint[] = session.branches.points;
  const first: BranchPoint | undefined = session.branches.at(points[0]?.index ?? 0);
  if (first && first.count > 1) await session.branches.switchTo(first.index, (first.version + 1) % first.count);
  await session.branches.edit(1, "a better question");
  await session.branches.edit(1, { role: "user", content: [{ type: "text", text: "again" }], timestamp: Date.now() });
  await session.branches.regenerate(2);
  const off: () => boolean = session.branches.subscribe((p) => console.log(p.length));
  off();
  // @ts-expect-error a version is a number
  await session.branches.switchTo(1, "2");
  return session.branches.getSnapshot().length;
}
