// The listener-failure sweep of failures.test.mjs, run in a worker thread so that an unhandled
// rejection (which node:test would otherwise attribute to the test and cut it short) is collected
// like every other problem and the sweep covers every position.
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { MODEL, call, scripted, text } from "../support/scripted.mjs";
import { OURS_MS, toolCall } from "./hostile-support.mjs";
import {
	assert,
	assertRunsAgain,
	blocksStream,
	describe,
	eventProblems,
	ours,
	settle,
	sleep,
	textStream,
	trackUnhandled,
	transcriptProblems,
	within,
} from "./support.mjs";

const impl = ours;

/** Parallel tools: `fast` returns at once, `slow` after 15 ms (with an update), `mid` after a microtask. */
export function parallelTools(state) {
	const mk = (name, run) => ({
		name,
		label: name,
		description: name,
		parameters: { type: "object" },
		async execute(id, params, signal, onUpdate) {
			state.inFlight++;
			try {
				await run(onUpdate);
				return { content: [{ type: "text", text: `${name} ok` }], details: { name } };
			} finally {
				state.inFlight--;
				state.finished.push(name);
			}
		},
	});
	return [
		mk("fast", async () => {}),
		mk("slow", async (onUpdate) => {
			onUpdate?.({ content: [{ type: "text", text: "slow partial" }], details: {} });
			await sleep(15);
		}),
		mk("mid", async () => {
			await Promise.resolve();
		}),
	];
}

export const CALLS = [toolCall("c-fast", "fast", {}), toolCall("c-slow", "slow", {}), toolCall("c-mid", "mid", {})];

/** The closing events of a failed run: the last four events and the failure message. */
export function assertFailureTail(events, errorMessage, label) {
	const tail = events.slice(-4);
	assert.deepEqual(
		tail.map((e) => `${e.type}${e.message ? `:${e.message.role}` : ""}`),
		["message_start:assistant", "message_end:assistant", "turn_end:assistant", "agent_end"],
		`${label}: failure tail (${events.map((e) => e.type).join(",")})`,
	);
	const failure = tail[1].message;
	assert.equal(failure.stopReason, "error", `${label}: stopReason`);
	assert.equal(failure.errorMessage, errorMessage, `${label}: errorMessage`);
	assert.deepEqual(failure.content, [{ type: "text", text: "" }]);
	assert.deepEqual(tail[2].toolResults, []);
	assert.equal(tail[3].messages.at(-1), failure, `${label}: agent_end.messages ends with the failure`);
}


async function listenerThrowsAt(k, how) {
	const state = { inFlight: 0, finished: [] };
	// streamed: text deltas and tool-call deltas, so message_update events occur
	let current = scripted(impl, [
		{ content: [text("calling", ["cal", "ling"]), call("c-fast", "fast", {}), call("c-slow", "slow", {}), call("c-mid", "mid", {})] },
		{ content: [text("done")] },
	]);
	const agent = new impl.Agent({ initialState: { model: MODEL, tools: parallelTools(state) }, streamFn: (...a) => current(...a) });
	const events = [];
	let n = 0;
	let thrownAt;
	let resolved = false;
	let rerun = false;
	const late = [];
	const error = how === "non-Error" ? `listener string ${k}` : new Error(`listener failed at ${k}`);
	agent.subscribe((e) => {
		if (rerun) {
			if (resolved) late.push(e.type);
			return;
		}
		events.push(e);
		if (++n === k) {
			thrownAt = e.type;
			if (how === "async") return Promise.reject(error);
			throw error;
		}
	});
	const unhandled = trackUnhandled();
	const problems = [];
	let rejected;
	try {
		await within(agent.prompt("go"), OURS_MS, "prompt()");
	} catch (e) {
		rejected = e;
	}
	resolved = true;
	rerun = true;
	// A failure on `agent_end` itself ends the run without a second one: prompt() rejects with it.
	if (thrownAt === "agent_end") {
		if (rejected !== error) problems.push(`prompt() should reject with the agent_end listener's error, got ${describe(rejected)}`);
	} else if (rejected !== undefined) problems.push(`prompt(): ${describe(rejected)}`);
	if (state.inFlight) problems.push(`${state.inFlight} tool(s) still running when prompt() resolved`);
	try {
		await within(agent.waitForIdle(), OURS_MS, "waitForIdle()");
	} catch (e) {
		problems.push(`waitForIdle(): ${describe(e)}`);
	}
	await settle();
	await sleep(25); // longer than the slow tool
	if (late.length) problems.push(`listener called after prompt() resolved: ${late.join(",")}`);
	const rejections = unhandled.take();
	if (rejections.length) problems.push(`unhandled: ${rejections.join(" | ")}`);
	if (thrownAt !== undefined && thrownAt !== "agent_end") {
		try {
			assertFailureTail(events, how === "non-Error" ? error : error.message, `throw at #${k} (${thrownAt})`);
			assert.equal(agent.state.errorMessage, how === "non-Error" ? error : error.message);
		} catch (e) {
			problems.push(e.message.split("\n")[0]);
		}
	}
	problems.push(...eventProblems(events));
	problems.push(...transcriptProblems(agent.state.messages));
	if (agent.state.isStreaming) problems.push("isStreaming still true");
	if (problems.length === 0) {
		current = textStream(impl);
		resolved = false; // the listener stays subscribed, quiet, for the follow-up run
		try {
			await assertRunsAgain(agent);
		} catch (e) {
			problems.push(`runs again: ${e.message.split("\n")[0]}`);
		}
	}
	return { thrownAt, total: n, problems: problems.map((p) => `[${how} #${k} ${thrownAt ?? "-"}] ${p}`) };
}


/** Throws at every event position in turn; returns { positions, types, problems }. */
export async function listenerSweep(how) {
	const problems = [];
	const types = new Set();
	let k = 1;
	for (; k < 200; k++) {
		const r = await listenerThrowsAt(k, how);
		if (r.thrownAt === undefined) break;
		types.add(r.thrownAt);
		problems.push(...r.problems);
	}
	return { positions: k - 1, types: [...types], problems };
}

if (!isMainThread && workerData?.listenerSweep) {
	parentPort.postMessage(await listenerSweep(workerData.listenerSweep));
}
