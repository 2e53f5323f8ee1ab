// Helpers of the server tests: the package's server entry (pkg/), a scripted pi-ai provider stream
// that records what it was asked and whether its request was aborted, a Node http server around a
// Fetch handler on 127.0.0.1, and a raw HTTP request (fetch cannot send a wrong Host, a body that
// never ends, or half a body).
import http from "node:http";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
import { assertStrictContext } from "../support/strict-transcript.mjs";

export const server = await import("../../pkg/server/index.js");

export const usage = (output = 2) => ({
	input: 5,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 5 + output,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

/** A server-side model (its baseUrl and headers are the server's). */
export const MODEL = Object.freeze({
	id: "m1",
	name: "Test model",
	api: "test-api",
	provider: "test",
	baseUrl: "http://provider.internal/v1",
	headers: { "x-server-header": "1" },
	reasoning: true,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 100000,
	maxTokens: 1000,
});

export const userContext = (text) => ({ messages: [{ role: "user", content: [{ type: "text", text }], timestamp: 1 }] });

/**
 * A stream function in pi-ai's shape: `plan(context, options)` gives the blocks to stream
 * ({ thinking }, { text }, { tool, args }), or { hang: true } (a provider that streams nothing
 * until aborted), or { throws: message }, or { error: message }. Each call is recorded
 * (`calls`: model, context, options, `aborted` once its signal fired). Every context is checked
 * with the strict-provider rules.
 */
export function scriptedProvider(plan = () => ({ blocks: [{ text: "Hello there" }] })) {
	const calls = [];
	const streamFn = (model, context, options) => {
		assertStrictContext(context);
		const call = { model, context, options, aborted: false };
		calls.push(call);
		options?.signal?.addEventListener("abort", () => (call.aborted = true));
		const script = plan(context, options);
		if (script.throws) throw new Error(script.throws);
		const stream = createAssistantMessageEventStream();
		const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: usage(0), stopReason: "stop", timestamp: 1 };
		const aborted = () => {
			partial.stopReason = "aborted";
			partial.errorMessage = "Request aborted";
			stream.push({ type: "error", reason: "aborted", error: partial });
			stream.end();
		};
		(async () => {
			await new Promise((r) => setImmediate(r));
			stream.push({ type: "start", partial });
			if (script.hang) {
				if (options.signal.aborted) return aborted();
				options.signal.addEventListener("abort", aborted);
				return;
			}
			for (const block of script.blocks ?? []) {
				const i = partial.content.length;
				if (block.text !== undefined || block.thinking !== undefined) {
					const kind = block.text !== undefined ? "text" : "thinking";
					partial.content.push({ type: kind, [kind]: "" });
					stream.push({ type: `${kind}_start`, contentIndex: i, partial });
					for (const piece of (block[kind].match(/.{1,4}/gs) ?? [])) {
						partial.content[i][kind] += piece;
						stream.push({ type: `${kind}_delta`, contentIndex: i, delta: piece, partial });
					}
					if (kind === "text") partial.content[i].textSignature = block.signature;
					else partial.content[i].thinkingSignature = block.signature;
					stream.push({ type: `${kind}_end`, contentIndex: i, content: partial.content[i][kind], partial });
				} else {
					const call = { type: "toolCall", id: `call_${i}`, name: block.tool, arguments: {} };
					partial.content.push(call);
					stream.push({ type: "toolcall_start", contentIndex: i, partial });
					const json = JSON.stringify(block.args);
					for (const piece of json.match(/.{1,3}/gs)) stream.push({ type: "toolcall_delta", contentIndex: i, delta: piece, partial });
					call.arguments = block.args;
					stream.push({ type: "toolcall_end", contentIndex: i, toolCall: call, partial });
				}
				await new Promise((r) => setImmediate(r));
			}
			partial.usage = usage(7);
			if (script.error) {
				partial.stopReason = "error";
				partial.errorMessage = script.error;
				stream.push({ type: "error", reason: "error", error: partial });
			} else {
				partial.stopReason = partial.content.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
				stream.push({ type: "done", reason: partial.stopReason, message: partial });
			}
			stream.end();
		})();
		return stream;
	};
	return { streamFn, calls };
}

/** A Node http server on 127.0.0.1 answering every request with `handler` (a Fetch handler) through toNodeHandler. */
export async function serve(handler) {
	const node = server.toNodeHandler(handler);
	const srv = http.createServer((req, res) => node(req, res));
	await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
	const port = srv.address().port;
	return {
		port,
		url: `http://127.0.0.1:${port}`,
		close: () =>
			new Promise((resolve) => {
				srv.close(() => resolve());
				srv.closeAllConnections();
			}),
	};
}

/**
 * A raw HTTP request. `body`: a string, or `{ chunks, delayMs }` written piece by piece without
 * Content-Length, or `{ endless: size, delayMs }` (pieces of `size` bytes forever, until the
 * server answers or closes). Resolves { status, headers, body, closed } (closed: the server
 * closed the connection before the client finished sending).
 */
export function request(port, { method = "GET", path = "/", headers = {}, body } = {}) {
	return new Promise((resolve, reject) => {
		let sending = true;
		let closed = false;
		const req = http.request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
			let data = "";
			res.setEncoding("utf8");
			res.on("data", (d) => (data += d));
			res.on("end", () => {
				sending = false;
				req.destroy();
				resolve({ status: res.statusCode, headers: res.headers, body: data, closed });
			});
		});
		req.on("error", (err) => (sending ? (closed = true) : reject(err)));
		req.on("close", () => {
			sending = false;
		});
		if (body === undefined) return void req.end();
		if (typeof body === "string") return void req.end(body);
		const pump = async () => {
			if (body.chunks) {
				for (const c of body.chunks) {
					if (!sending) return;
					req.write(c);
					if (body.delayMs) await new Promise((r) => setTimeout(r, body.delayMs));
				}
				return void req.end();
			}
			const piece = "x".repeat(body.endless);
			while (sending && !req.destroyed) {
				if (!req.write(piece)) {
					await new Promise((r) => {
						const done = () => {
							req.off("drain", done);
							req.off("close", done);
							r();
						};
						req.on("drain", done);
						req.on("close", done);
					});
				}
				if (body.delayMs) await new Promise((r) => setTimeout(r, body.delayMs));
			}
		};
		pump().catch(() => {});
	});
}

/** Parses an SSE body into its events, checking that each frame is one `data:` line. */
export function sseEvents(text) {
	return text
		.split("\n\n")
		.filter(Boolean)
		.map((frame) => {
			if (!/^data: \{.*\}$/s.test(frame)) throw new Error(`not a proxy-protocol frame: ${frame.slice(0, 80)}`);
			return JSON.parse(frame.slice(6));
		});
}

/** Resolves when `check()` is true (polled), or rejects after `ms` naming `what`. */
export async function waitFor(check, what, ms = 60_000) {
	const deadline = Date.now() + ms;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}
