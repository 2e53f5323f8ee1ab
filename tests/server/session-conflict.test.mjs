// Two writers of one session log (the same session open in two browsers or on two devices, each
// with its own agent): each append names the length it extends, a stale one is refused, and the
// refused session catches up. It stops its own run, shows what the other wrote, prompts again
// with its user messages the log did not get, and the log stays one valid conversation. In Node,
// with memoryStore (which checks lengths) and with httpStore against createStoreHandler.
import test from "node:test";
import assert from "node:assert/strict";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
import { assertStrictContext } from "../support/strict-transcript.mjs";
import { serve, server, usage, waitFor } from "./support.mjs";

const { Agent } = await import("../../pkg/index.js");
const { attachSession, memoryStore, httpStore, SessionConflictError } = await import("../../pkg/session/index.js");

const MODEL = { id: "m1", name: "m1", api: "test-api", provider: "test", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e5, maxTokens: 1e3 };
const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));

/** Answers "re: <last user text>"; a prompt "hold" streams a little and then waits until aborted. Records aborts. */
function provider() {
	const seen = { aborted: [], contexts: [] };
	const streamFn = (model, context, options) => {
		assertStrictContext(context);
		seen.contexts.push(context.messages.map((m) => `${m.role}:${textOf(m)}`));
		const last = textOf(context.messages.at(-1));
		const stream = createAssistantMessageEventStream();
		const partial = { role: "assistant", content: [{ type: "text", text: "" }], api: model.api, provider: model.provider, model: model.id, usage: usage(1), stopReason: "stop", timestamp: Date.now() };
		(async () => {
			await new Promise((r) => setImmediate(r));
			stream.push({ type: "start", partial });
			stream.push({ type: "text_start", contentIndex: 0, partial });
			const reply = `re: ${last}`;
			partial.content[0].text = reply;
			stream.push({ type: "text_delta", contentIndex: 0, delta: reply, partial });
			if (last === "hold") {
				await new Promise((resolve) => (options.signal.aborted ? resolve() : options.signal.addEventListener("abort", resolve)));
				seen.aborted.push(last);
				partial.stopReason = "aborted";
				partial.errorMessage = "Request aborted";
				stream.push({ type: "error", reason: "aborted", error: partial });
				return stream.end();
			}
			stream.push({ type: "text_end", contentIndex: 0, content: reply, partial });
			stream.push({ type: "done", reason: "stop", message: partial });
			stream.end();
		})();
		return stream;
	};
	return { streamFn, seen };
}

async function device(store, id, streamFn) {
	const agent = new Agent({ initialState: { systemPrompt: "Be brief.", model: MODEL }, streamFn });
	const session = await attachSession(agent, { id, store, tabs: false, flushMs: 5 });
	return { agent, session, transcript: () => agent.state.messages.filter((m) => m.role !== "system").map((m) => `${m.role}:${textOf(m)}`) };
}

const idle = (d) => waitFor(() => !d.agent.state.isStreaming, "the agent to be idle");

async function twoWriters(t, store) {
	const { streamFn, seen } = provider();
	const laptop = await device(store, "chat", streamFn);
	const phone = await device(store, "chat", streamFn);

	await t.test("the first writer's run lands; the other, stale, prompts: it catches up and its prompt is answered after", async () => {
		await laptop.agent.prompt("from the laptop");
		await laptop.session.flush();
		assert.deepEqual(phone.transcript(), [], "the phone has not read the laptop's writes");
		await phone.agent.prompt("from the phone");
		await waitFor(() => phone.transcript().length === 4 && !phone.agent.state.isStreaming, "the phone to catch up and answer");
		await phone.session.flush();
		assert.deepEqual(phone.transcript(), ["user:from the laptop", "assistant:re: from the laptop", "user:from the phone", "assistant:re: from the phone"]);
		// The answer to the phone's prompt was asked with the laptop's exchange before it.
		assert.deepEqual(seen.contexts.at(-1), ["system:Be brief.", "user:from the laptop", "assistant:re: from the laptop", "user:from the phone"]);
		assert.equal(phone.session.error, undefined);
	});

	await t.test("a run going on when the conflict comes is stopped; its prompt goes again after what the other wrote", async () => {
		await phone.agent.prompt("from the phone again");
		await phone.session.flush();
		// The laptop, stale, starts a run that streams and waits: its first write conflicts.
		const run = laptop.agent.prompt("hold");
		await waitFor(() => seen.aborted.length === 1, "the laptop's run to be aborted");
		await run;
		// The resent "hold" streams and waits again: end it as the user would, with abort.
		await waitFor(() => laptop.agent.state.isStreaming && laptop.transcript().includes("user:from the phone again"), "the laptop to prompt again after catching up");
		laptop.agent.abort();
		await idle(laptop);
		await laptop.session.flush();
		const transcript = laptop.transcript();
		assert.deepEqual(transcript.slice(0, 6), [
			"user:from the laptop",
			"assistant:re: from the laptop",
			"user:from the phone",
			"assistant:re: from the phone",
			"user:from the phone again",
			"assistant:re: from the phone again",
		]);
		assert.deepEqual(transcript.slice(6), ["user:hold", "assistant:re: hold"]);
		assert.equal(laptop.agent.state.messages.at(-1).stopReason, "aborted");
		assert.equal(laptop.session.error, undefined);
	});

	await t.test("the log is one conversation: a third device restores it, valid for a strict provider", async () => {
		const third = await device(store, "chat", streamFn);
		assertStrictContext({ messages: third.agent.state.messages });
		assert.deepEqual(third.transcript(), laptop.transcript());
		await third.session.detach();
	});

	await laptop.session.detach();
	await phone.session.detach();
}

test("two writers on memoryStore", { timeout: 60_000 }, async (t) => {
	const store = memoryStore();
	await assert.rejects(store.append("x", "a", { length: 3 }), (e) => e instanceof SessionConflictError && e.length === 0);
	await twoWriters(t, store);
});

test("two writers on httpStore and createStoreHandler (PGlite)", { timeout: 120_000 }, async (t) => {
	const handler = server.createStoreHandler({ authorize: (req) => (req.headers.get("authorization") === "Bearer u" ? "u" : null) });
	const srv = await serve(handler);
	t.after(() => srv.close());
	await twoWriters(t, httpStore(`${srv.url}/api/sessions`, { headers: { authorization: "Bearer u" } }));
});
