// The offline demo model: a scripted pi-ai provider that needs no key and no network.
//
// It reads the transcript the page sends (the same TranscriptContext a real provider gets) and answers
// from a small script: thinking, streamed text, tool calls whose arguments stream in small pieces, two
// calls in parallel ("tour"), a call that the page asks the user to approve (fetch_page), a long task,
// a simulated provider error. It stops at once when the request is aborted.
//
// It is registered like any provider (createProvider), so the server streams it through the same
// Models.streamSimple path as Anthropic or OpenAI.
import { createAssistantMessageEventStream, createProvider } from "@earendil-works/pi-ai";

export const DEMO_PROVIDER = "demo";
export const DEMO_MODEL_ID = "offline-demo";

/** Delays (ms) between streamed pieces, scaled by PI_DEMO_DELAY_SCALE (0 = as fast as possible). */
const PACE = { thinking: 18, text: 22, args: 45, beforeStart: 120 };

export function demoModel() {
	return {
		id: DEMO_MODEL_ID,
		name: "Offline demo model (scripted, no key)",
		api: "pi-demo",
		provider: DEMO_PROVIDER,
		baseUrl: "",
		reasoning: true,
		input: ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 32768,
		maxTokens: 4096,
	};
}

export function demoProvider({ delayScale = 1 } = {}) {
	const streamFn = (model, context, options) => streamDemo(model, context, options, delayScale);
	return createProvider({
		id: DEMO_PROVIDER,
		name: "Offline demo",
		// Keyless: resolves as configured with no credentials.
		auth: { apiKey: { name: "Offline demo (no key)", resolve: async () => ({ auth: {} }) } },
		models: [demoModel()],
		api: { stream: streamFn, streamSimple: streamFn },
	});
}

// ---- streaming ---------------------------------------------------------------------------------

function zeroUsage() {
	return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function sleep(ms, signal) {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(new Error("Request aborted"));
		if (ms <= 0) return setImmediate(resolve);
		const timer = setTimeout(() => {
			signal?.removeEventListener("abort", onAbort);
			resolve();
		}, ms);
		const onAbort = () => {
			clearTimeout(timer);
			reject(new Error("Request aborted"));
		};
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}

/** Splits text into small word-sized pieces (keeping whitespace), so deltas look like tokens. */
function pieces(text, maxLen = 12) {
	const out = [];
	for (const word of text.match(/\s*\S+|\s+/g) ?? []) {
		for (let i = 0; i < word.length; i += maxLen) out.push(word.slice(i, i + maxLen));
	}
	return out;
}

function chunks(text, size) {
	const out = [];
	for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
	return out;
}

let callCounter = 0;
function toolCallId() {
	callCounter += 1;
	return `demo_call_${Date.now().toString(36)}_${callCounter}`;
}

function streamDemo(model, context, options, delayScale) {
	const stream = createAssistantMessageEventStream();
	const signal = options?.signal;
	const output = {
		role: "assistant",
		content: [],
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: zeroUsage(),
		stopReason: "pending",
		timestamp: Date.now(),
	};
	const wait = (ms) => sleep(Math.round(ms * delayScale), signal);

	(async () => {
		let produced = 0;
		try {
			const plan = planReply(context?.messages ?? []);
			await wait(PACE.beforeStart);
			stream.push({ type: "start", partial: output });
			for (const block of plan.blocks) {
				const contentIndex = output.content.length;
				if (block.type === "thinking") {
					output.content.push({ type: "thinking", thinking: "" });
					stream.push({ type: "thinking_start", contentIndex, partial: output });
					for (const delta of pieces(block.text)) {
						await wait(PACE.thinking);
						output.content[contentIndex].thinking += delta;
						produced += delta.length;
						stream.push({ type: "thinking_delta", contentIndex, delta, partial: output });
					}
					stream.push({ type: "thinking_end", contentIndex, content: output.content[contentIndex].thinking, partial: output });
				} else if (block.type === "text") {
					output.content.push({ type: "text", text: "" });
					stream.push({ type: "text_start", contentIndex, partial: output });
					for (const delta of pieces(block.text)) {
						await wait(PACE.text);
						output.content[contentIndex].text += delta;
						produced += delta.length;
						stream.push({ type: "text_delta", contentIndex, delta, partial: output });
					}
					stream.push({ type: "text_end", contentIndex, content: output.content[contentIndex].text, partial: output });
				} else if (block.type === "toolCall") {
					const call = { type: "toolCall", id: toolCallId(), name: block.name, arguments: {} };
					output.content.push(call);
					stream.push({ type: "toolcall_start", contentIndex, partial: output });
					const json = JSON.stringify(block.arguments);
					let sent = "";
					for (const delta of chunks(json, 4)) {
						await wait(PACE.args);
						sent += delta;
						produced += delta.length;
						stream.push({ type: "toolcall_delta", contentIndex, delta, partial: output });
					}
					call.arguments = JSON.parse(sent);
					stream.push({ type: "toolcall_end", contentIndex, toolCall: call, partial: output });
				}
			}
			output.usage = usageFor(context?.messages ?? [], produced);
			if (plan.error) {
				await wait(PACE.beforeStart);
				output.stopReason = "error";
				output.errorMessage = plan.error;
				stream.push({ type: "error", reason: "error", error: output });
			} else {
				output.stopReason = plan.blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
				stream.push({ type: "done", reason: output.stopReason, message: output });
			}
		} catch (error) {
			output.usage = usageFor(context?.messages ?? [], produced);
			output.stopReason = signal?.aborted ? "aborted" : "error";
			output.errorMessage = signal?.aborted ? "Request aborted" : error instanceof Error ? error.message : String(error);
			stream.push({ type: "error", reason: output.stopReason, error: output });
		}
		stream.end();
	})();
	return stream;
}

function usageFor(messages, producedChars) {
	let inputChars = 0;
	for (const m of messages) inputChars += JSON.stringify(m.content ?? "").length;
	const input = Math.ceil(inputChars / 4);
	const output = Math.ceil(producedChars / 4);
	return { ...zeroUsage(), input, output, totalTokens: input + output };
}

// ---- the script ---------------------------------------------------------------------------------

function textOf(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.filter((c) => c?.type === "text").map((c) => c.text).join("\n");
}

function clip(text, n) {
	const flat = String(text).trim();
	return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
}

const HELP = [
	"Hello! I'm the **offline demo model**: a scripted stand-in served by the dev server, so no API key is needed. The agent loop runs in your browser (Rust compiled to WebAssembly) and every tool runs in the page.",
	"",
	"Try one of these:",
	"- `tour`: two tools in parallel, then a summary",
	"- `what is (2+3)*7?`: the calculator",
	"- `what time is it?`: the clock",
	"- `read the about page`: fetches /about.txt once you approve it",
	"- `run a long task for 10 seconds`: streams progress; steer, queue a follow-up or abort while it runs",
	"- `simulate an error`: what a provider error looks like",
	"- `show some markdown`: headings, lists, a table, links and code",
].join("\n");

/** A reply that uses the markdown a chat app renders (the demo's renderer is tested on it). */
const MARKDOWN = [
	"# Markdown in the demo",
	"",
	"Answers are rendered as **GitHub-flavoured markdown**, _sanitised_, with ~~no~~ highlighted code.",
	"",
	"## Lists",
	"",
	"1. one",
	"2. two",
	"3. three",
	"",
	"- [x] a finished task",
	"- [ ] an open one",
	"",
	"## Links and tables",
	"",
	"See [the about page](/about.txt) or https://example.com; [this link](javascript:alert(1)) is not followed.",
	"",
	"| tool | asks first |",
	"| --- | --- |",
	"| calculator | no |",
	"| fetch_page | yes |",
	"",
	"> A quote, and raw HTML shown as text: <b>not bold</b>",
	"",
	"```js",
	"const agent = new Agent({ streamFn });",
	'await agent.prompt("hello"); // 42',
	"```",
	"",
	"```sh",
	"npm install ./pi-agent-wasm-0.1.0.tgz",
	"```",
].join("\n");

/** The expression in a request like "what is (2+3)*7?" or "calculate sqrt(2)". */
export function extractExpression(text) {
	const explicit = /\b(?:calc(?:ulate)?|compute|evaluate)\b[:\s]*(.+)$/i.exec(text);
	if (explicit) return explicit[1].replace(/[?!.]+\s*$/, "").trim() || "(2+3)*7";
	const candidates = text.match(/[\d.()+\-*/^%\s]*\d[\d.()+\-*/^%\s]*/g) ?? [];
	const withOperator = candidates.map((c) => c.trim()).filter((c) => /\d\s*[-+*/^%]\s*[\d(.]/.test(c) || /\)\s*[-+*/^%]/.test(c));
	withOperator.sort((a, b) => b.length - a.length);
	return withOperator[0];
}

function secondsIn(text, fallback) {
	const m = /(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b/i.exec(text);
	const n = m ? Number(m[1]) : fallback;
	return Math.min(60, Math.max(1, n));
}

/** Blocks answering one user message (maybe tool calls). */
function answerUser(text) {
	const t = text.toLowerCase();
	if (/\b(error|fail|failure|crash)\b/.test(t)) {
		return {
			blocks: [{ type: "text", text: "Starting to answer, but this request is set up to fail…" }],
			error: "Demo model: simulated provider failure (you asked for an error). Nothing is broken; send another message to continue.",
		};
	}
	if (/\b(tour|everything|parallel|all tools)\b/.test(t)) {
		return {
			blocks: [
				{ type: "thinking", text: "A tour: the calculator and the clock do not depend on each other, so I can call both in the same turn and the agent runs them in parallel." },
				{ type: "text", text: "Here is the tour: I'll call two tools at once, the calculator and the clock." },
				{ type: "toolCall", name: "calculator", arguments: { expression: "(2+3)*7" } },
				{ type: "toolCall", name: "current_time", arguments: {} },
			],
		};
	}
	if (/\b(long|slow|progress|task|wait)\b/.test(t)) {
		const seconds = secondsIn(text, 8);
		return {
			blocks: [
				{ type: "thinking", text: `The user wants a long-running tool. I'll run long_task for ${seconds} seconds; it streams progress while it runs.` },
				{ type: "text", text: `Starting a ${seconds}-second task. You can steer me, queue a follow-up, or abort while it runs.` },
				{ type: "toolCall", name: "long_task", arguments: { seconds, label: "Demo task" } },
			],
		};
	}
	if (/\b(about|page|fetch|read)\b/.test(t)) {
		return {
			blocks: [
				{ type: "thinking", text: "I need to read /about.txt from the page's own server. That tool asks the user before it runs." },
				{ type: "text", text: "I'll fetch the about page; the app will ask you to approve it first." },
				{ type: "toolCall", name: "fetch_page", arguments: { path: "/about.txt" } },
			],
		};
	}
	const expression = extractExpression(text);
	if (expression || /\b(calc|calculate|compute|math)\b/.test(t)) {
		return {
			blocks: [{ type: "toolCall", name: "calculator", arguments: { expression: expression ?? "(2+3)*7" } }],
		};
	}
	if (/\b(time|clock|date|today)\b/.test(t)) {
		return { blocks: [{ type: "toolCall", name: "current_time", arguments: {} }] };
	}
	if (/\bmarkdown\b/.test(t)) {
		return { blocks: [{ type: "text", text: MARKDOWN }] };
	}
	if (/^\s*(hi|hello|hey|help|\?)\b/.test(t) || t.trim() === "") {
		return {
			blocks: [
				{ type: "thinking", text: "A greeting. I'm the offline demo model, so I'll say what this page shows and suggest prompts that exercise each feature." },
				{ type: "text", text: HELP },
			],
		};
	}
	return {
		blocks: [
			{ type: "thinking", text: "Not one of my scripted requests; I'll echo it and list what I can do." },
			{ type: "text", text: `You said: “${clip(text, 200)}”. I'm a scripted offline model, so I only understand a few requests.\n\n${HELP.split("\n").slice(2).join("\n")}` },
		],
	};
}

/** One line per tool result since the last assistant message. */
function describeResults(results) {
	const lines = results.map((r) => {
		const text = clip(textOf(r.content), 400) || "(no output)";
		if (r.isError) return `- **${r.toolName}** did not run: ${text}`;
		if (r.toolName === "fetch_page") return `- **fetch_page** returned the page. It says:\n\n> ${clip(textOf(r.content).replace(/\s+/g, " "), 240)}`;
		return `- **${r.toolName}**: ${text}`;
	});
	return lines.join("\n");
}

/**
 * The reply to a transcript: answer the last user message, or, after tool results, report them and
 * answer any user message that arrived meanwhile (a steering or follow-up message).
 */
export function planReply(messages) {
	const convo = messages.filter((m) => m && m.role !== "system");
	let lastAssistant = -1;
	for (let i = convo.length - 1; i >= 0; i--) {
		if (convo[i].role === "assistant") {
			lastAssistant = i;
			break;
		}
	}
	const tail = convo.slice(lastAssistant + 1);
	const results = tail.filter((m) => m.role === "toolResult");
	const users = tail.filter((m) => m.role === "user");
	const lastUser = users.at(-1);

	if (results.length === 0) return answerUser(lastUser ? textOf(lastUser.content) : "");

	const blocks = [];
	const denied = results.some((r) => r.isError && /denied|blocked/i.test(textOf(r.content)));
	const aborted = results.some((r) => r.isError && /abort/i.test(textOf(r.content)));
	let summary = `${results.length === 1 ? "Tool result" : `Results of ${results.length} tools`}:\n${describeResults(results)}`;
	if (denied) summary += "\n\nUnderstood: you declined, so I did not get that result. I'll carry on without it.";
	if (aborted) summary += "\n\nThe task was stopped before it finished.";
	if (!lastUser) {
		blocks.push({ type: "text", text: summary });
		return { blocks };
	}
	// A message that came in while the tools were running (steering) or after (follow-up).
	const said = textOf(lastUser.content);
	blocks.push({ type: "text", text: `${summary}\n\nYou also said: “${clip(said, 200)}”. It arrived while I was working, so I'm answering it now.` });
	const next = answerUser(said);
	blocks.push(...next.blocks);
	return { blocks, error: next.error };
}
