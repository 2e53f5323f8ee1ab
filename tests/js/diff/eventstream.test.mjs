// the stream classes every scripted response goes through (EventStream,
// createAssistantMessageEventStream). Ours exports them; the reference takes them from pi-ai 1.4.0.
import { assert, scenario } from "../support/harness.mjs";
import { assistant, sleep } from "../support/scripted.mjs";
import { snap } from "../support/trace.mjs";

async function pendingOrValue(p, ms = 15) {
	const marker = Symbol("pending");
	const v = await Promise.race([p, sleep(ms).then(() => marker)]);
	return v === marker ? "<pending>" : snap(v);
}

scenario(
	"EventStream: terminal event resolves the result, later pushes are ignored, queued events still delivered",
	async (impl) => {
		const s = new impl.EventStream(
			(e) => e.type === "end",
			(e) => ({ extracted: e.value }),
		);
		s.push({ type: "a" });
		s.push({ type: "b" });
		s.push({ type: "end", value: 42 });
		s.push({ type: "after" });
		s.end({ ignored: true });
		const seen = [];
		for await (const e of s) seen.push(e.type);
		const r1 = s.result();
		return { seen, result: snap(await r1), samePromise: r1 === s.result(), again: await pendingOrValue(s.result()) };
	},
	{
		check(t) {
			assert.deepEqual(t.seen, ["a", "b", "end"]);
			assert.deepEqual(t.result, { extracted: 42 });
			assert.equal(t.samePromise, true);
		},
	},
);

scenario(
	"EventStream: end(result) releases waiting consumers; end() without result leaves result() pending",
	async (impl) => {
		const a = new impl.EventStream(() => false, () => undefined);
		const consumer = (async () => {
			const seen = [];
			for await (const e of a) seen.push(e.n);
			return seen;
		})();
		await sleep(1);
		a.push({ n: 1 });
		await sleep(1);
		a.end("final");
		const b = new impl.EventStream(() => false, () => undefined);
		b.push({ n: 1 });
		b.end();
		const bSeen = [];
		for await (const e of b) bSeen.push(e.n);
		return { aSeen: await consumer, aResult: await pendingOrValue(a.result()), bSeen, bResult: await pendingOrValue(b.result()) };
	},
	{
		check(t) {
			assert.deepEqual([t.aSeen, t.aResult, t.bSeen, t.bResult], [[1], "final", [1], "<pending>"]);
		},
	},
);

scenario(
	"EventStream: concurrent consumers split the events",
	async (impl) => {
		const s = new impl.EventStream((e) => e.last === true, () => "done");
		const take = async (label, out) => {
			for await (const e of s) out.push(`${label}:${e.n}`);
		};
		const x = [];
		const y = [];
		const px = take("x", x);
		const py = take("y", y);
		await sleep(1);
		for (let n = 1; n <= 4; n++) s.push({ n, last: n === 4 });
		await Promise.all([px, py]);
		return { x, y, result: await s.result() };
	},
	{ check: (t) => assert.equal(t.x.length + t.y.length, 4) },
);

scenario(
	"createAssistantMessageEventStream: done/error results and durationMs timing rules",
	async (impl) => {
		const out = {};
		const s1 = impl.createAssistantMessageEventStream();
		out.isEventStream = s1 instanceof impl.EventStream;
		const fresh = assistant("now", { timestamp: Date.now() + 5 });
		await sleep(3);
		s1.push({ type: "done", reason: "stop", message: fresh });
		out.fresh = snap(await s1.result());
		out.freshIsSame = (await s1.result()) === fresh;

		const s2 = impl.createAssistantMessageEventStream();
		const old = assistant("old", { timestamp: 5 });
		s2.push({ type: "error", reason: "error", error: old });
		out.old = snap(await s2.result());

		const s3 = impl.createAssistantMessageEventStream();
		const preset = assistant("preset", { timestamp: Date.now() + 5, durationMs: 123456 });
		s3.push({ type: "done", reason: "stop", message: preset });
		out.presetDuration = preset.durationMs;

		const s4 = impl.createAssistantMessageEventStream();
		const ended = assistant("ended", { timestamp: Date.now() + 5 });
		s4.end(ended);
		out.ended = snap(await s4.result());

		const s5 = impl.createAssistantMessageEventStream();
		const first = assistant("first", { timestamp: Date.now() + 5 });
		const second = assistant("second", { timestamp: Date.now() + 5 });
		s5.push({ type: "done", reason: "stop", message: first });
		s5.push({ type: "done", reason: "stop", message: second });
		out.secondTimed = "durationMs" in second;
		out.s5Result = (await s5.result()) === first;
		const seen = [];
		for await (const e of s5) seen.push(e.type);
		out.s5Seen = seen;
		return out;
	},
	{
		check(t) {
			assert.equal(t.isEventStream, true);
			assert.equal(t.fresh.durationMs, true);
			assert.equal("durationMs" in t.old, false);
			assert.equal(t.presetDuration, 123456);
			assert.equal(t.ended.durationMs, true);
			assert.equal(t.secondTimed, false);
			assert.deepEqual(t.s5Seen, ["done"]);
		},
	},
);
