// The JS tools this app registers with the agent. They run in the page; the model only sees their
// declarations (name, description, JSON Schema) and their results.
//
// `needsApproval` is this app's own flag: the agent's beforeToolCall hook asks the user first.
import { evaluate, formatNumber } from "./calc.js";

const text = (t) => [{ type: "text", text: t }];

export const calculator = {
	name: "calculator",
	label: "Calculator",
	description:
		"Evaluates an arithmetic expression exactly as written. Supports + - * / % ^, parentheses, pi, e and sqrt, abs, sin, cos, tan, ln, log, exp, floor, ceil, round, min, max, pow.",
	parameters: {
		type: "object",
		properties: { expression: { type: "string", description: "The expression, e.g. (2+3)*7 or sqrt(2)" } },
		required: ["expression"],
		additionalProperties: false,
	},
	async execute(_id, { expression }) {
		const value = evaluate(expression);
		return { content: text(`${expression} = ${formatNumber(value)}`), details: { expression, value } };
	},
};

export const currentTime = {
	name: "current_time",
	label: "Current time",
	description: "Returns the current date and time of the user's browser, optionally in an IANA time zone.",
	parameters: {
		type: "object",
		properties: { timeZone: { type: "string", description: "IANA time zone, e.g. Europe/Paris (default: the browser's)" } },
		additionalProperties: false,
	},
	async execute(_id, { timeZone } = {}) {
		const now = new Date();
		const zone = timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
		// An unknown zone throws a RangeError: the agent turns it into an error result the model sees.
		const local = now.toLocaleString("en-US", { timeZone: zone, dateStyle: "full", timeStyle: "long" });
		return { content: text(`${local} (${zone}; ISO ${now.toISOString()})`), details: { iso: now.toISOString(), timeZone: zone } };
	},
};

const MAX_PAGE_CHARS = 4000;

export const fetchPage = {
	name: "fetch_page",
	label: "Fetch page",
	needsApproval: true,
	description: "Fetches a page from this app's own server (same origin only, e.g. /about.txt) and returns its text.",
	parameters: {
		type: "object",
		properties: { path: { type: "string", description: "A path on this site, e.g. /about.txt" } },
		required: ["path"],
		additionalProperties: false,
	},
	async execute(_id, { path }, signal) {
		const url = new URL(path, window.location.origin);
		if (url.origin !== window.location.origin) throw new Error(`Only pages of ${window.location.origin} can be fetched, not ${url.origin}`);
		if (url.pathname.startsWith("/api/")) throw new Error("The app's API endpoints are off limits");
		const res = await fetch(url, { signal, credentials: "omit", redirect: "error", headers: { accept: "text/plain, text/html;q=0.9" } });
		if (!res.ok) throw new Error(`GET ${url.pathname} answered ${res.status} ${res.statusText}`);
		const type = res.headers.get("content-type") ?? "";
		let body = await res.text();
		if (type.includes("html")) {
			// Parsed, never inserted into the page: DOMParser runs no scripts.
			body = new DOMParser().parseFromString(body, "text/html").body?.textContent ?? "";
		}
		body = body.replace(/\n{3,}/g, "\n\n").trim();
		const truncated = body.length > MAX_PAGE_CHARS;
		return {
			content: text(truncated ? `${body.slice(0, MAX_PAGE_CHARS)}\n[… truncated]` : body),
			details: { url: url.pathname, contentType: type, chars: body.length, truncated },
		};
	},
};

export const longTask = {
	name: "long_task",
	label: "Long task",
	description: "A long-running task that reports progress while it runs. Use it to demonstrate progress, steering and aborting.",
	parameters: {
		type: "object",
		properties: {
			seconds: { type: "number", minimum: 1, maximum: 60, description: "How long to run (1-60 s)" },
			label: { type: "string", description: "What the task is called" },
		},
		required: ["seconds"],
		additionalProperties: false,
	},
	execute(_id, { seconds, label = "Task" }, signal, onUpdate) {
		const stepMs = 250;
		const total = Math.max(1, Math.round((Math.min(60, Math.max(1, seconds)) * 1000) / stepMs));
		const started = performance.now();
		return new Promise((resolve, reject) => {
			let step = 0;
			let timer;
			const onAbort = () => {
				clearTimeout(timer);
				const elapsed = ((performance.now() - started) / 1000).toFixed(1);
				reject(new Error(`${label} aborted after ${elapsed} s (step ${step} of ${total})`));
			};
			if (signal?.aborted) return onAbort();
			signal?.addEventListener("abort", onAbort, { once: true });
			const tick = () => {
				step += 1;
				onUpdate?.({ content: text(`${label}: step ${step} of ${total}`), details: { step, total, label } });
				if (step >= total) {
					signal?.removeEventListener("abort", onAbort);
					resolve({ content: text(`${label} finished: ${total} steps in ${((performance.now() - started) / 1000).toFixed(1)} s`), details: { step, total, label } });
				} else {
					timer = setTimeout(tick, stepMs);
				}
			};
			timer = setTimeout(tick, stepMs);
		});
	},
};

export const TOOLS = [calculator, currentTime, fetchPage, longTask];
export const needsApproval = (name) => TOOLS.some((t) => t.name === name && t.needsApproval);
