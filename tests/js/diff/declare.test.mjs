// declareToolChanges: tool loadout declarations through system messages.
import { Type } from "typebox";
import { assert, scenario } from "../support/harness.mjs";
import { call, makeTool, scripted, system, text, user } from "../support/scripted.mjs";
import { baseConfig, recordedHooks, runLoop } from "../support/loop.mjs";
import { Trace, types } from "../support/trace.mjs";

const decl = (name, description = `${name} tool`, parameters = { type: "object", properties: {} }) => ({ name, description, parameters });

/** "+name" / "-name" per system message of one request. */
function loadout(messages) {
	return messages
		.filter((m) => m.role === "system")
		.map((m) => [...(m.toolsAdded ?? []).map((t) => `+${t.name}`), ...(m.toolsRemoved ?? []).map((t) => `-${t.name}`)].join(" "));
}

scenario(
	"tools without a system message: a declaration message is inserted before the prompt",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "alpha", { parameters: Type.Object({ path: Type.String() }), constrainedSampling: false, outputSchema: { type: "object" }, replay: "safe" });
		const b = makeTool(tr, "beta", { description: "second" });
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [a, b] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const sys = t.events.find((e) => e.type === "message_start").message;
			assert.deepEqual(Object.keys(sys), ["role", "content", "timestamp", "toolsAdded"]);
			assert.equal(sys.content, "");
			assert.equal(sys.timestamp, "<now>");
			assert.deepEqual(Object.keys(sys.toolsAdded[0]), ["name", "description", "parameters", "constrainedSampling"]);
			assert.deepEqual(Object.keys(sys.toolsAdded[1]), ["name", "description", "parameters"]);
			assert.deepEqual(t.calls[0].messages.map((m) => m.role), ["system", "user"]);
		},
	},
);

scenario(
	"loadout changes across turns: added, replaced, changed (removed + added), all removed",
	async (impl) => {
		const tr = new Trace();
		const first = makeTool(tr, "first");
		const second = makeTool(tr, "second");
		const secondChanged = makeTool(tr, "second", { description: "second, changed" });
		const loadouts = [[first, second], [second], [secondChanged], []];
		const streamFn = scripted(
			impl,
			[{ content: [call("c1", "first")] }, { content: [call("c2", "second")] }, { content: [call("c3", "second")] }, { content: [text("done")] }],
			{ tr },
		);
		const context = { messages: [], tools: [first] };
		let turn = 0;
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context,
			config: baseConfig(tr, { ...recordedHooks(tr, { prepareNextTurn: ({ context: c }) => ({ context: { ...c, tools: loadouts[turn++] } }) }) }),
			streamFn,
		});
		tr.note("loadouts", streamFn.calls.map((c) => loadout(c.messages)));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(t.notes.loadouts, [
				["+first"],
				["+first", "+second"],
				["+first", "+second", "-first"],
				["+first", "+second", "-first", "+second -second"],
			]);
		},
	},
);

scenario(
	"the last pending system message is rewritten with the tool changes (new object, keys after timestamp)",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const sys = system("custom prompt", { toolsAdded: [decl("stale")], toolsRemoved: [{ name: "ghost" }], sections: { s: "S" } });
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [sys, user("go")], context: { messages: [], tools: [a] }, config: baseConfig(tr), streamFn });
		tr.note("promptSystemId", tr.id(sys));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const ms = t.events.find((e) => e.type === "message_start");
			assert.notEqual(ms.messageId, t.notes.promptSystemId);
			assert.deepEqual(Object.keys(ms.message), ["role", "content", "sections", "timestamp", "toolsAdded"]);
			assert.deepEqual(ms.message.toolsAdded.map((x) => x.name), ["a"]);
		},
	},
);

scenario(
	"an unchanged pending system message without tool fields is passed through as the same object",
	async (impl) => {
		const tr = new Trace();
		const sys = system("new prompt");
		const u = user("go");
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [sys, u], context: { messages: [] }, config: baseConfig(tr), streamFn });
		tr.note("ids", [tr.id(sys), tr.id(u)]);
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const starts = t.events.filter((e) => e.type === "message_start").slice(0, 2).map((e) => e.messageId);
			assert.deepEqual(starts, t.notes.ids);
		},
	},
);

scenario(
	"an unchanged pending system message with toolsAdded: [] survives as is",
	async (impl) => {
		const tr = new Trace();
		const sys = system("p", { toolsAdded: [] });
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [sys, user("go")], context: { messages: [], tools: [] }, config: baseConfig(tr), streamFn });
		tr.note("sysId", tr.id(sys));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const ms = t.events.find((e) => e.type === "message_start");
			assert.equal(ms.messageId, t.notes.sysId);
			assert.deepEqual(ms.message.toolsAdded, []);
		},
	},
);

scenario(
	"a pending system message re-declaring already declared tools becomes a new object without tool keys",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const history = [{ role: "system", content: "base", toolsAdded: [decl("a")], timestamp: 1 }, user("old")];
		const sys = system("again", { toolsAdded: [decl("a")] });
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [sys, user("go")], context: { messages: history, tools: [a] }, config: baseConfig(tr), streamFn });
		tr.note("sysId", tr.id(sys));
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const ms = t.events.find((e) => e.type === "message_start");
			assert.notEqual(ms.messageId, t.notes.sysId);
			assert.deepEqual(Object.keys(ms.message), ["role", "content", "timestamp"]);
		},
	},
);

scenario(
	"with two pending system messages the earlier keeps (and counts) its tool fields",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const s1 = system("s1", { toolsAdded: [decl("x")] });
		const s2 = system("s2", { toolsAdded: [decl("stale")] });
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [s1, s2, user("go")], context: { messages: [], tools: [a] }, config: baseConfig(tr), streamFn });
		tr.note("ids", [tr.id(s1), tr.id(s2)]);
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const [m1, m2] = t.events.filter((e) => e.type === "message_start");
			assert.equal(m1.messageId, t.notes.ids[0]);
			assert.notEqual(m2.messageId, t.notes.ids[1]);
			assert.deepEqual(m2.message.toolsAdded.map((x) => x.name), ["a"]);
			assert.deepEqual(m2.message.toolsRemoved, [{ name: "x" }]);
		},
	},
);

scenario(
	"the declaration is inserted before the first non-system pending message (custom role counts)",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		const custom = { role: "note", text: "x", timestamp: 3 };
		await runLoop(impl, { tr, prompts: [custom, user("go")], context: { messages: [], tools: [a] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(
				t.events.filter((e) => e.type === "message_start").map((e) => e.message.role),
				["system", "note", "user", "assistant"],
			);
		},
	},
);

scenario(
	"key order inside parameters matters: a reordered schema is a changed declaration",
	async (impl) => {
		const tr = new Trace();
		const t1 = makeTool(tr, "t", { parameters: { type: "object", properties: { a: { type: "string" } } } });
		const t2 = makeTool(tr, "t", { parameters: { properties: { a: { type: "string" } }, type: "object" } });
		const streamFn = scripted(impl, [{ content: [call("c1", "t")] }, { content: [text("done")] }], { tr });
		await runLoop(impl, {
			tr,
			prompts: [user("go")],
			context: { messages: [], tools: [t1] },
			config: baseConfig(tr, { ...recordedHooks(tr, { prepareNextTurn: ({ context }) => ({ context: { ...context, tools: [t2] } }) }) }),
			streamFn,
		});
		tr.note("loadouts", streamFn.calls.map((c) => loadout(c.messages)));
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.deepEqual(t.notes.loadouts[1], ["+t", "+t -t"]) },
);

scenario(
	"declarations are JSON round-trips of parameters (undefined dropped, Date stringified, TypeBox marker gone)",
	async (impl) => {
		const tr = new Trace();
		const params = Type.Object({ when: Type.Optional(Type.String({ default: undefined })), n: Type.Number({ examples: [new Date(0)] }) });
		const a = makeTool(tr, "a", { parameters: params });
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [a] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			const p = t.calls[0].messages[0].toolsAdded[0].parameters;
			assert.equal(p.properties.n.examples[0], "1970-01-01T00:00:00.000Z");
			assert.equal("default" in p.properties.when, false);
		},
	},
);

scenario(
	"a tool whose parameters cannot round-trip through JSON rejects runAgentLoop before agent_start",
	async (impl) => {
		const tr = new Trace();
		const bad = makeTool(tr, "bad", { parameters: undefined });
		bad.parameters = undefined;
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools: [bad] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.equal(t.events.length, 0);
			assert.equal(t.notes.rejected.name, "SyntaxError");
		},
	},
);

scenario(
	"system messages already in the context declare the tools: nothing is inserted when they match",
	async (impl) => {
		const tr = new Trace();
		const a = makeTool(tr, "a");
		const history = [{ role: "system", content: "base", toolsAdded: [decl("a")], timestamp: 1 }];
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: history, tools: [a] }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls });
	},
	{ check: (t) => assert.deepEqual(types(t).slice(0, 4), ["agent_start", "turn_start", "message_start", "message_end"]) },
);

scenario("tools removed from the context are declared removed (toolsRemoved only)", async (impl) => {
	const tr = new Trace();
	const history = [{ role: "system", content: "base", toolsAdded: [decl("a"), decl("b")], timestamp: 1 }, user("old"), { role: "system", content: "", toolsRemoved: [{ name: "a" }], timestamp: 2 }];
	const b = makeTool(tr, "b");
	const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
	await runLoop(impl, { tr, kind: "continue", context: { messages: history.concat([user("go")]), tools: [] }, config: baseConfig(tr), streamFn });
	tr.note("b", b.name);
	return tr.result({ calls: streamFn.calls });
});

scenario(
	"in-place edits of the same tools array between requests: a changed description, a pushed tool, a removed tool",
	async (impl) => {
		const tr = new Trace();
		const first = makeTool(tr, "first");
		const second = makeTool(tr, "second");
		const tools = [first];
		// Each turn edits the array (or a tool in it) in place, inside the previous turn's tool call.
		const edits = [
			() => {},
			() => { first.description = "first, edited in place"; },
			() => { tools.push(second); },
			() => { tools.splice(0, 1); },
			() => {},
		];
		let turn = 0;
		const streamFn = scripted(
			impl,
			[1, 2, 3, 4].map((i) => ({ content: [call(`c${i}`, i < 4 ? "first" : "second")] })).concat([{ content: [text("done")] }]),
			{ tr, record: () => (edits[turn++](), {}) },
		);
		await runLoop(impl, { tr, prompts: [user("go")], context: { messages: [], tools }, config: baseConfig(tr), streamFn });
		return tr.result({ calls: streamFn.calls, loadouts: streamFn.calls.map((c) => loadout(c.messages)) });
	},
	{
		check(t) {
			assert.equal(t.calls.length, 5);
		},
	},
);

scenario(
	"the replay keeps JS Map order: a re-declared name keeps its place, one added again after a removal moves to the end",
	async (impl) => {
		const tr = new Trace();
		const history = [
			{ role: "system", content: "base", toolsAdded: [decl("a"), decl("b"), decl("c")], timestamp: 1 },
			user("old"),
			{ role: "system", content: "", toolsAdded: [decl("a", "a, again")], toolsRemoved: [{ name: "b" }], timestamp: 2 },
			{ role: "system", content: "", toolsAdded: [decl("b")], timestamp: 3 },
		];
		// The runtime's order differs from the transcript's (c, a, b): only the changed `a` is declared.
		const tools = [makeTool(tr, "c"), makeTool(tr, "a"), makeTool(tr, "b")];
		const streamFn = scripted(impl, [{ content: [text("ok")] }], { tr });
		await runLoop(impl, { tr, kind: "continue", context: { messages: history.concat([user("go")]), tools }, config: baseConfig(tr), streamFn });
		const agent = new impl.Agent({ streamFn, initialState: { messages: history } });
		agent.reset();
		tr.note("baseline", agent.state.messages);
		return tr.result({ calls: streamFn.calls });
	},
	{
		check(t) {
			assert.deepEqual(loadout(t.calls[0].messages), ["+a +b +c", "+a -b", "+b", "+a -a"]);
			assert.deepEqual(t.notes.baseline[0].toolsAdded.map((x) => `${x.name}: ${x.description}`), ["a: a, again", "c: c tool", "b: b tool"]);
		},
	},
);
