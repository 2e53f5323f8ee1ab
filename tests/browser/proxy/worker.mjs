// Dedicated module Worker: imports the implementation (top-level-await init, no configuration) and runs
// one scenario per message.
import { runScenario } from "./runner.mjs";

self.onmessage = async ({ data: { implUrl, sc } }) => {
	try {
		const mod = await import(implUrl);
		self.postMessage({ ok: true, result: await runScenario(mod.streamProxy, sc) });
	} catch (e) {
		self.postMessage({ ok: false, error: String(e?.stack ?? e) });
	}
};
