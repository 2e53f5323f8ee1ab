// Preloaded (`node --import`) into a server under test: its requests to Anthropic's API go to the
// stand-in at PI_TEST_ANTHROPIC_URL (fake-anthropic.mjs), so the server runs as written, with
// pi-ai's real Anthropic provider, and no request leaves the machine.
const target = process.env.PI_TEST_ANTHROPIC_URL;
if (!target) throw new Error("redirect-anthropic.mjs: PI_TEST_ANTHROPIC_URL is not set");
const original = globalThis.fetch;
const ANTHROPIC = "https://api.anthropic.com";
globalThis.fetch = function fetch(input, init) {
	const url = typeof input === "string" ? input : input instanceof URL ? input.href : input?.url;
	if (typeof url === "string" && url.startsWith(ANTHROPIC)) {
		const moved = target + url.slice(ANTHROPIC.length);
		return original(input instanceof Request ? new Request(moved, input) : moved, init);
	}
	if (typeof url === "string" && /^https?:\/\/(?!127\.0\.0\.1|localhost)/.test(url)) {
		return Promise.reject(new Error(`redirect-anthropic.mjs: a test server asked for ${url}`));
	}
	return original(input, init);
};
