// Runs one streamProxy exchange in a browser context (page or Worker) and returns a structured-cloneable
// record: the events (without `partial` snapshots: chunk timing over a real socket is not deterministic)
// and the final message, normalised exactly like the Node harness does (tests/js/proxy/normalize.mjs).
import { recordEvent, snapshot, normalizeMessage, withoutSnapshot } from "/js-proxy/normalize.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * sc: { model, context, options (JSON-able; proxyUrl, authToken, …), abortAfterEvents?, settleMs?, timeoutMs? }
 */
export async function runScenario(streamProxy, sc) {
	if (typeof streamProxy !== "function") throw new Error(`streamProxy is ${typeof streamProxy}, not a function`);
	const controller = new AbortController();
	const options = { ...sc.options };
	if (sc.abortAfterEvents !== undefined) options.signal = controller.signal;
	const warnings = [];
	const origWarn = console.warn;
	console.warn = (...args) => warnings.push(args.map((a) => (typeof a === "string" ? a : snapshot(a))));
	let timer;
	try {
		const stream = streamProxy(sc.model, sc.context, options);
		const events = [];
		let prev;
		const consume = (async () => {
			for await (const ev of stream) {
				const { record, blocks } = recordEvent(ev, prev);
				prev = blocks;
				events.push(withoutSnapshot(record));
				if (events.length === sc.abortAfterEvents) controller.abort();
			}
		})();
		const timeoutMs = sc.timeoutMs ?? 10000;
		const timeout = new Promise((_, reject) => {
			timer = setTimeout(() => {
				controller.abort();
				reject(new Error(`timed out after ${timeoutMs} ms; events so far: ${JSON.stringify(events.map((e) => e.type))}`));
			}, timeoutMs);
		});
		timeout.catch(() => {});
		await Promise.race([consume, timeout]);
		await Promise.race([stream.result(), timeout]);
		await sleep(sc.settleMs ?? 150);
		const result = await stream.result();
		return {
			scope: globalThis.constructor?.name,
			events,
			final: normalizeMessage(snapshot(result)),
			warnings,
		};
	} finally {
		clearTimeout(timer);
		console.warn = origWarn;
	}
}
