// What the session, worker and replay tests build their agents from: a model, usage, tools and results,
// and a WorkerAgent's "worker" served in this process.

export const MODEL = { id: "m", name: "M", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
export const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const textOf = (m) => (typeof m?.content === "string" ? m.content : (m?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""));
export const tool = (name, execute, extra = {}) => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute, ...extra });
export const ok = (text) => ({ content: [{ type: "text", text }], details: {} });

/**
 * A WorkerAgent's `worker` option: each call gives one end of a fresh MessageChannel whose other end
 * `serveAgent(host, port)` serves here, as a worker's script would.
 */
export const channelWorker = (serveAgent, host) => () => {
  const { port1, port2 } = new MessageChannel();
  serveAgent(host, port2);
  port1.start();
  port2.start();
  // What `agent.terminate()` calls: closing one end closes both.
  port1.terminate = () => port1.close();
  return port1;
};
