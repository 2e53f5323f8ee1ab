// Implementations under differential test.
//
// `reference` is the npm oracle (@earendil-works/pi-agent-core 1.4.0 + the stream classes of
// @earendil-works/pi-ai 1.4.0). `ours` is the built WASM package in pkg/ (loaded lazily so the
// suite can run against the reference alone while pkg/ does not exist yet).
//
// PI_DIFF_ONLY=reference  -> only the oracle
// PI_DIFF_ONLY=ours       -> only the package (no comparison, contract checks only)
// PI_DIFF_SELFTEST=1      -> "ours" is a second instance of the reference (checks that traces are deterministic)
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as core from "@earendil-works/pi-agent-core";
import * as ai from "@earendil-works/pi-ai";
import * as core16 from "pi-agent-core-1-6";
import * as ai16 from "pi-ai-1-6";

export const NAMES = [
	"Agent",
	"agentLoop",
	"agentLoopContinue",
	"runAgentLoop",
	"runAgentLoopContinue",
	"runToolCall",
	"setDefaultStreamFn",
	"DEFAULT_AGENT_IDENTITY",
	"createAssistantMessageEventStream",
	"EventStream",
	"AssistantMessageEventStream",
];

export const reference = Object.freeze({
	name: "reference",
	Agent: core.Agent,
	agentLoop: core.agentLoop,
	agentLoopContinue: core.agentLoopContinue,
	runAgentLoop: core.runAgentLoop,
	runAgentLoopContinue: core.runAgentLoopContinue,
	runToolCall: core.runToolCall,
	setDefaultStreamFn: core.setDefaultStreamFn,
	DEFAULT_AGENT_IDENTITY: core.DEFAULT_AGENT_IDENTITY,
	createAssistantMessageEventStream: ai.createAssistantMessageEventStream,
	EventStream: ai.EventStream,
	AssistantMessageEventStream: ai.AssistantMessageEventStream,
	module: core,
});

/**
 * pi-agent-core 1.6.0 with pi-ai 1.6.0 (aliased devDependencies): not an oracle, but the release the
 * upstream-bug tests show still has the bugs ours fixes (upstream.test.mjs).
 */
export const v16 = Object.freeze({
	name: "1.6.0",
	Agent: core16.Agent,
	agentLoop: core16.agentLoop,
	agentLoopContinue: core16.agentLoopContinue,
	runAgentLoop: core16.runAgentLoop,
	runAgentLoopContinue: core16.runAgentLoopContinue,
	runToolCall: core16.runToolCall,
	setDefaultStreamFn: core16.setDefaultStreamFn,
	DEFAULT_AGENT_IDENTITY: core16.DEFAULT_AGENT_IDENTITY,
	createAssistantMessageEventStream: ai16.createAssistantMessageEventStream,
	EventStream: ai16.EventStream,
	AssistantMessageEventStream: ai16.AssistantMessageEventStream,
	module: core16,
});

export const PKG_ENTRY = fileURLToPath(new URL("../../../pkg/index.js", import.meta.url));

let oursPromise;

/** Loads pkg/index.js once. Resolves to undefined when the package has not been built. */
export function loadOurs() {
	if (!oursPromise) {
		oursPromise = (async () => {
			if (process.env.PI_DIFF_SELFTEST === "1") return Object.freeze({ ...reference, name: "ours" });
			if (!existsSync(PKG_ENTRY)) return undefined;
			// A present but broken package must fail loudly, not silently drop out of the comparison.
			const mod = await import(pathToFileURL(PKG_ENTRY).href);
			const impl = { name: "ours", module: mod };
			for (const key of NAMES) impl[key] = mod[key];
			return Object.freeze(impl);
		})();
	}
	return oursPromise;
}

export function only() {
	const v = process.env.PI_DIFF_ONLY;
	return v === "reference" || v === "ours" ? v : undefined;
}

/** The built package as an implementation object, or undefined (not built, or PI_DIFF_ONLY=reference). */
export const ours = only() === "reference" ? undefined : await loadOurs();

/** The implementations to run, reference first. */
export async function loadImpls() {
	const mode = only();
	const list = [];
	if (mode !== "ours") list.push(reference);
	if (mode !== "reference") {
		const o = await loadOurs();
		if (o) list.push(o);
		else if (mode === "ours") throw new Error(`PI_DIFF_ONLY=ours but ${PKG_ENTRY} does not exist`);
	}
	return list;
}
