// streamProxy, the request: method, URL, headers, and the JSON body {model, context, options} with
// exactly the 11 serialisable option keys in the reference order, `undefined` dropped, and nothing else
// (no apiKey, signal, identity, hooks, …). The expected raw body is built here from the spec, independently
// of either implementation, and compared byte for byte.
import assert from "node:assert/strict";
import { scenario, sseScript, E, MODEL, CONTEXT } from "./harness.mjs";

const OPTION_KEYS = [
	"temperature",
	"samplingParams",
	"maxTokens",
	"reasoning",
	"cacheRetention",
	"sessionId",
	"headers",
	"metadata",
	"transport",
	"thinkingBudgets",
	"maxRetryDelayMs",
];

const NEVER_SENT = {
	apiKey: "sk-SECRET-never-sent",
	identity: { attribution: { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] }, userAgent: "ua-SECRET" },
	onPayload: () => {},
	onResponse: () => {},
	onProviderStreamEvent: () => {},
	toolChoice: "none",
	deferred: { mode: "SECRET-deferred" },
	timeoutMs: 1234,
	maxRetries: 7,
	fetch: () => {
		throw new Error("the proxy must use the global fetch");
	},
	env: { OPENAI_API_KEY: "SECRET-env" },
	telemetry: { SECRET: true },
	websocketConnectTimeoutMs: 99,
	// agent-loop hooks that reach a StreamFn when it is spread from the loop config
	getApiKey: async () => "SECRET-key",
	convertToLlm: (m) => m,
	transformContext: (c) => c,
	beforeToolCall: () => undefined,
	afterToolCall: () => undefined,
	toolExecution: "parallel",
	unknownExtraOption: "SECRET-extra",
};

// Serialisable options in a scrambled order (the body must list them in OPTION_KEYS order).
const ALL_OPTIONS = {
	maxRetryDelayMs: 60000,
	thinkingBudgets: { low: 1024, high: 16384 },
	transport: "sse",
	metadata: { user_id: "u-1", nested: { list: [1, null, "ü"] } },
	headers: { "x-custom": "v", "x-remove": null },
	sessionId: "sess-αβγ",
	cacheRetention: "long",
	reasoning: "high",
	maxTokens: 4096,
	samplingParams: { topP: 0.9, topK: 40 },
	temperature: 0.25,
};

function expectedBody(model, context, options) {
	const o = {};
	for (const k of OPTION_KEYS) o[k] = options[k];
	return JSON.stringify({ model, context, options: o });
}

const OK = sseScript([E.start(), E.done("stop")]);

function expectRequest(rawBody, authorization = "Bearer tok-123") {
	return (run) => {
		const r = run.request;
		assert.equal(run.postCount, 1);
		assert.equal(r.method, "POST");
		assert.equal(r.path, "/api/stream");
		assert.equal(r.authorization, authorization);
		assert.equal(r.contentType, "application/json");
		assert.equal(r.rawBody, rawBody);
		assert.deepEqual(Object.keys(r.body), ["model", "context", "options"]);
		assert.ok(!/SECRET/.test(r.rawBody), "nothing from the non-serialisable options leaks into the body");
	};
}

scenario("request: all 11 option keys in order; apiKey, signal, identity, hooks never sent", {
	script: OK,
	options: () => ({ ...NEVER_SENT, ...ALL_OPTIONS, signal: new AbortController().signal, authToken: "tok-123" }),
	expect(run) {
		expectRequest(expectedBody(MODEL, CONTEXT, ALL_OPTIONS))(run);
		assert.deepEqual(run.request.optionKeys, OPTION_KEYS);
		assert.deepEqual(run.request.body.options.headers, { "x-custom": "v", "x-remove": null });
	},
});

scenario("request: undefined options are dropped, null ones are kept", {
	script: OK,
	options: { temperature: undefined, maxTokens: null, reasoning: undefined, sessionId: "s", headers: undefined, metadata: null },
	expect(run) {
		expectRequest(JSON.stringify({ model: MODEL, context: CONTEXT, options: { maxTokens: null, sessionId: "s", metadata: null } }))(run);
		assert.deepEqual(run.request.optionKeys, ["maxTokens", "sessionId", "metadata"]);
	},
});

scenario("request: only proxyUrl and authToken -> options is {}", {
	script: OK,
	expect(run) {
		expectRequest(JSON.stringify({ model: MODEL, context: CONTEXT, options: {} }))(run);
	},
});

scenario("request: a missing authToken is sent as `Bearer undefined`", {
	script: OK,
	options: { authToken: undefined },
	expect: expectRequest(JSON.stringify({ model: MODEL, context: CONTEXT, options: {} }), "Bearer undefined"),
});

// model and context are serialised whole with JSON.stringify semantics: extra fields kept, functions and
// undefined dropped, toJSON honoured, NaN -> null, -0 -> 0, non-enumerable properties skipped, lone
// surrogates escaped, U+2028 raw.
const ODD_MODEL = {
	...MODEL,
	compat: { supportsStore: false, maxTokensField: "max_completion_tokens" },
	headers: { "x-model": "m" },
	thinkingLevelMap: { minimal: "low", max: null },
	extraUnknown: [1, { deep: true }],
};
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
Object.defineProperty(schema, "~kind", { value: "Object", enumerable: false });
const ODD_CONTEXT = {
	systemPrompt: "sys \u2028 line sep, lone surrogate \uD800, quote \" and backslash \\",
	messages: [
		{ role: "user", content: [{ type: "text", text: "hi" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], timestamp: 1 },
		{
			role: "assistant",
			content: [{ type: "toolCall", id: "c1", name: "get_weather", arguments: { city: "Paris", skip: undefined } }],
			api: "openai-completions",
			provider: "openai",
			model: "gpt-test-1",
			usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "toolUse",
			timestamp: 2,
			durationMs: -0,
		},
		{ role: "toolResult", toolCallId: "c1", toolName: "get_weather", content: [{ type: "text", text: "sunny" }], details: { when: new Date(0), nan: NaN, inf: -Infinity }, isError: false, timestamp: 3 },
		{ role: "custom-note", note: "custom roles pass through", timestamp: 4 },
	],
	tools: [{ name: "get_weather", label: "Weather", description: "d", parameters: schema, execute: async () => ({}), executionMode: "sequential" }],
};

scenario("request: model and context are serialised whole (JSON.stringify semantics)", {
	script: OK,
	model: ODD_MODEL,
	context: ODD_CONTEXT,
	options: { temperature: 0 },
	expect(run) {
		const raw = JSON.stringify({ model: ODD_MODEL, context: ODD_CONTEXT, options: { temperature: 0 } });
		expectRequest(raw)(run);
		assert.ok(raw.includes("\\ud800"), "the oracle escapes the lone surrogate");
		assert.ok(raw.includes('"when":"1970-01-01T00:00:00.000Z"'));
		assert.ok(!raw.includes("~kind"));
	},
});
