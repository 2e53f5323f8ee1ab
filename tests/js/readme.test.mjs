// The README's quick start, run as written against a local proxy server that
// answers POST /api/stream with a scripted SSE response.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startSseServer } from "../support/sse-server.mjs";

const { Agent, streamProxy } = await import("../../pkg/index.js");

const usage = { input: 5, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

test("the README quick start streams text through streamProxy", { timeout: 20000 }, async () => {
  const srv = await startSseServer({
    "/api/stream": {
      lines: [
        { type: "start" },
        { type: "text_start", contentIndex: 0 },
        { type: "text_delta", contentIndex: 0, delta: "Hello" },
        { type: "text_delta", contentIndex: 0, delta: " there!" },
        { type: "text_end", contentIndex: 0 },
        { type: "done", reason: "stop", usage },
      ],
      chunking: 7,
    },
  });
  try {
    const userSessionToken = "session-123";
    const output = { textContent: "" };
    // --- the README's example, unchanged apart from proxyUrl ---
    const agent = new Agent({
      initialState: {
        systemPrompt: "You are a helpful assistant.",
        model: { id: "claude-sonnet-4-6", name: "Claude Sonnet 4.6", api: "anthropic-messages", provider: "anthropic",
                 baseUrl: "", reasoning: true, input: ["text"], cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 },
                 contextWindow: 200000, maxTokens: 8192 },
      },
      streamFn: (model, context, options) =>
        streamProxy(model, context, { ...options, proxyUrl: srv.url, authToken: userSessionToken }),
    });
    agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
        output.textContent += event.assistantMessageEvent.delta;
      }
    });
    await agent.prompt("Hello!");
    // --- end of example ---
    assert.equal(output.textContent, "Hello there!");
    const last = agent.state.messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "stop");
    assert.deepEqual(last.usage, usage);
    const request = srv.requests.find((r) => r.method === "POST");
    assert.equal(request.headers.authorization, "Bearer session-123");
    assert.equal(request.body.model.id, "claude-sonnet-4-6");
    assert.deepEqual(request.body.context.messages.map((m) => m.role), ["system", "user"]);
    assert.equal(request.body.options.apiKey, undefined, "no key ever leaves the page");
  } finally {
    await srv.close();
  }
});
