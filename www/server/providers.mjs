// Which models the dev server offers, from the environment. Keys stay in this process: the page gets
// model descriptions only (no baseUrl headers, no keys), and a request names a model by provider and id,
// so the page can never point the server at another URL.
//
//   ANTHROPIC_API_KEY            Anthropic (models: ANTHROPIC_MODELS, comma-separated, else a default pick)
//   OPENAI_API_KEY               OpenAI (models: OPENAI_MODELS), unless OPENAI_BASE_URL is set
//   OPENAI_BASE_URL              any OpenAI-compatible Chat Completions server (Ollama, llama.cpp, vLLM…),
//                                e.g. http://127.0.0.1:11434/v1; key: OPENAI_API_KEY if set (local servers
//                                need none); models: OPENAI_MODEL / OPENAI_MODELS, else GET {base}/models
//   always                       the offline demo model (first when no key is set)
import { createModels, createProvider } from "@earendil-works/pi-ai";
import { openAICompletionsApi } from "@earendil-works/pi-ai/api/openai-completions.lazy";
import { anthropicProvider } from "@earendil-works/pi-ai/providers/anthropic";
import { openaiProvider } from "@earendil-works/pi-ai/providers/openai";
import { demoProvider } from "./demo-model.mjs";

const DEFAULT_PICKS = {
	anthropic: ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5"],
	openai: ["gpt-4.1-mini", "gpt-4o-mini", "gpt-5-mini"],
};

const list = (value) => (value ?? "").split(",").map((s) => s.trim()).filter(Boolean);

function pick(models, providerId, wanted) {
	const all = models.getModels(providerId);
	const ids = wanted.length ? wanted : DEFAULT_PICKS[providerId] ?? [];
	const chosen = ids.map((id) => all.find((m) => m.id === id)).filter(Boolean);
	return chosen.length ? chosen : all.slice(0, 3);
}

/** Model ids of an OpenAI-compatible server (GET {base}/models), or [] when it does not answer. */
async function discoverModels(baseUrl, apiKey, timeoutMs = 2500) {
	try {
		const res = await fetch(`${baseUrl.replace(/\/+$/, "")}/models`, {
			headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
			signal: AbortSignal.timeout(timeoutMs),
		});
		if (!res.ok) return [];
		const body = await res.json();
		const data = Array.isArray(body?.data) ? body.data : Array.isArray(body?.models) ? body.models : [];
		return data.map((m) => (typeof m === "string" ? m : m?.id ?? m?.name)).filter((id) => typeof id === "string").slice(0, 20);
	} catch {
		return [];
	}
}

function compatModel(id, baseUrl) {
	let host = baseUrl;
	try {
		host = new URL(baseUrl).host;
	} catch {}
	return {
		id,
		name: `${id} (OpenAI-compatible, ${host})`,
		api: "openai-completions",
		provider: "openai-compatible",
		baseUrl,
		reasoning: false,
		input: ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 32768,
		maxTokens: 4096,
		// Local servers commonly lack these OpenAI-only features.
		compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false },
	};
}

/**
 * Builds the Models collection and the offered list.
 * Returns { models, offered: Model[] (first = default), secrets: string[] (values to redact) }.
 */
export async function configureModels(env = process.env, { demoDelayScale = 1 } = {}) {
	const models = createModels();
	const offered = [];
	const secrets = [];

	if (env.ANTHROPIC_API_KEY) {
		secrets.push(env.ANTHROPIC_API_KEY);
		models.setProvider(anthropicProvider());
		offered.push(...pick(models, "anthropic", list(env.ANTHROPIC_MODELS)));
	}
	if (env.OPENAI_BASE_URL) {
		const baseUrl = env.OPENAI_BASE_URL.replace(/\/+$/, "");
		const apiKey = env.OPENAI_API_KEY || "";
		if (apiKey) secrets.push(apiKey);
		let ids = list(env.OPENAI_MODELS || env.OPENAI_MODEL);
		if (!ids.length) ids = await discoverModels(baseUrl, apiKey);
		if (!ids.length) ids = ["default"];
		const compatModels = ids.map((id) => compatModel(id, baseUrl));
		models.setProvider(
			createProvider({
				id: "openai-compatible",
				name: "OpenAI-compatible",
				baseUrl,
				// Local servers take any key; the OpenAI SDK insists on one.
				auth: { apiKey: { name: "OPENAI_API_KEY (optional)", resolve: async () => ({ auth: { apiKey: apiKey || "not-needed" } }) } },
				models: compatModels,
				api: openAICompletionsApi(),
			}),
		);
		offered.push(...compatModels);
	} else if (env.OPENAI_API_KEY) {
		secrets.push(env.OPENAI_API_KEY);
		models.setProvider(openaiProvider());
		offered.push(...pick(models, "openai", list(env.OPENAI_MODELS)));
	}

	models.setProvider(demoProvider({ delayScale: demoDelayScale }));
	offered.push(...models.getModels("demo"));
	return { models, offered, secrets: secrets.filter((s) => s.length >= 4) };
}

/** What the page may see of a model: no headers, no base URL. */
export function publicModel(model) {
	const { headers: _headers, baseUrl: _baseUrl, ...rest } = model;
	return { ...rest, baseUrl: "" };
}
