// The demo's end-to-end checks (tests/e2e/chat.test.mjs: streaming, tool approval and denial, parallel tools,
// steering and a follow-up during a long tool, abort, a provider error, a reload) with its switch "Run the agent
// in a Worker" on (?worker=1): everything must work the same with the agent in a Worker.
process.env.PI_DEMO_WORKER = "1";
await import("../../e2e/chat.test.mjs");
