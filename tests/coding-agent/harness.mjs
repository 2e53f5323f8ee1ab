// Runs pi-coding-agent 1.4.0 (the real `pi` CLI, its unbundled dist/cli.js) in two installs, one with
// its own pi-agent-core 1.4.0 and one whose pi-agent-core is our packed package, against a scripted
// OpenAI-compatible server, and records what each run did: stdout (text, or JSON/RPC records), stderr,
// the exit code, every request the server got, the files in the working folder and the session files.
// Records are normalised only where a run is nondeterministic (clock values, temporary paths, ids the
// agent generates), so the two installs can be compared with deepStrictEqual.
import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenAIServer } from "./openai-server.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SHIM = fileURLToPath(new URL("./node22.mjs", import.meta.url));
const REFERENCE_PACKAGE = join(ROOT, "node_modules/@earendil-works/pi-coding-agent");
/** The second install: test-output/coding-agent/ours/node_modules/@earendil-works/{pi-coding-agent,pi-agent-core}. */
const OURS_PREFIX = join(ROOT, "test-output/coding-agent/ours");
const OURS_PACKAGE = join(OURS_PREFIX, "node_modules/@earendil-works/pi-coding-agent");

export const INSTALLS = {
	reference: join(REFERENCE_PACKAGE, "dist/cli.js"),
	ours: join(OURS_PACKAGE, "dist/cli.js"),
};

/**
 * Lays out the second install: the coding agent's package (its package.json and dist/, without the
 * bundle and source maps) beside our package as `@earendil-works/pi-agent-core`, unpacked from
 * `npm pack pkg/`. Its other dependencies resolve from the repository's node_modules, as the first
 * install's do. Returns where `@earendil-works/pi-agent-core` resolves from each install's cli.js.
 */
export function prepareInstalls() {
	if (!existsSync(join(ROOT, "pkg/package.json"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");
	rmSync(OURS_PREFIX, { recursive: true, force: true });
	mkdirSync(OURS_PACKAGE, { recursive: true });
	cpSync(join(REFERENCE_PACKAGE, "package.json"), join(OURS_PACKAGE, "package.json"));
	cpSync(join(REFERENCE_PACKAGE, "dist"), join(OURS_PACKAGE, "dist"), {
		recursive: true,
		filter: (source) => !source.endsWith(".map") && !source.includes("/dist/bundle"),
	});
	const packDir = join(OURS_PREFIX, "pack");
	mkdirSync(packDir);
	const tarball = execFileSync("npm", ["pack", join(ROOT, "pkg"), "--pack-destination", packDir, "--silent"], { cwd: packDir, encoding: "utf8" }).trim().split("\n").at(-1);
	const core = join(OURS_PREFIX, "node_modules/@earendil-works/pi-agent-core");
	mkdirSync(core, { recursive: true });
	execFileSync("tar", ["-xzf", join(packDir, tarball), "-C", core, "--strip-components=1"]);
	const resolved = {};
	for (const [name, cli] of Object.entries(INSTALLS)) {
		// Node's lookup: the nearest node_modules/@earendil-works/pi-agent-core above the CLI.
		let dir = dirname(cli);
		while (!existsSync(join(dir, "node_modules/@earendil-works/pi-agent-core/package.json"))) dir = dirname(dir);
		const pkg = JSON.parse(readFileSync(join(dir, "node_modules/@earendil-works/pi-agent-core/package.json"), "utf8"));
		resolved[name] = `${pkg.name}@${pkg.version}`;
	}
	return resolved;
}

/** A fresh temporary folder with `agent/` (the agent dir, holding models.json) and `work/` (the cwd). */
export function makeHome(serverUrl) {
	const root = mkdtempSync(join(tmpdir(), "pi-ca-"));
	const agentDir = join(root, "agent");
	const work = join(root, "work");
	mkdirSync(agentDir);
	mkdirSync(work);
	const model = { id: "scripted-model", name: "Scripted", contextWindow: 100000, maxTokens: 4096 };
	writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { scripted: { baseUrl: `${serverUrl}/v1`, api: "openai-completions", apiKey: "test-key", models: [model] } } }));
	return { root, agentDir, work };
}

/**
 * Starts the CLI of `install` with `args` in `home.work`. `drive(child, records)` may write to stdin
 * and wait on the stdout records (JSON lines) seen so far; stdin is closed after it returns. Bounded:
 * the process is killed after `timeoutMs`.
 */
export async function runCli(install, home, args, { drive, timeoutMs = 40_000 } = {}) {
	const child = spawn(process.execPath, ["--import", SHIM, INSTALLS[install], "--model", "scripted/scripted-model", ...args], {
		cwd: home.work,
		env: { ...process.env, PI_CODING_AGENT_DIR: home.agentDir, HOME: home.root, PI_OFFLINE: "1", NO_COLOR: "1" },
		stdio: ["pipe", "pipe", "pipe"],
	});
	let stdout = "";
	let stderr = "";
	let consumed = 0;
	const records = [];
	const waiters = new Set();
	child.stdout.on("data", (data) => {
		stdout += data;
		let newline;
		while ((newline = stdout.indexOf("\n", consumed)) !== -1) {
			const line = stdout.slice(consumed, newline);
			consumed = newline + 1;
			try {
				records.push(JSON.parse(line));
			} catch {
				// Text mode prints text, not records.
			}
			for (const waiter of waiters) waiter();
		}
	});
	child.stderr.on("data", (data) => (stderr += data));
	const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
	const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? signal)));
	/** Resolves once a record satisfies `test` (or the process exits). */
	records.waitFor = (test) =>
		new Promise((resolve, reject) => {
			const check = () => {
				const found = records.find(test);
				if (found) {
					waiters.delete(check);
					resolve(found);
				}
			};
			waiters.add(check);
			check();
			exited.then(() => waiters.has(check) && reject(new Error(`exited before the awaited record; stderr: ${stderr.slice(0, 500)}`)));
		});
	records.send = (command) => child.stdin.write(`${JSON.stringify(command)}\n`);
	try {
		if (drive) await drive(child, records);
	} finally {
		child.stdin.end();
	}
	const code = await exited;
	clearTimeout(timer);
	return { code, stdout, stderr, records };
}

/** Every file under `dir` (relative path -> text). */
export function filesUnder(dir) {
	const out = {};
	const walk = (d) => {
		for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
			const path = join(d, entry.name);
			if (entry.isDirectory()) walk(path);
			else out[relative(dir, path)] = readFileSync(path, "utf8");
		}
	};
	if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
	return out;
}

/**
 * One conversation, with one install: a fresh home and server with `script`, then `steps` (each a
 * `runCli` call: `{ args, drive? }`) in order. Returns what happened, normalised.
 */
export async function conversation(install, { script, steps, setup }) {
	const server = await startOpenAIServer(structuredClone(script));
	const home = makeHome(server.url);
	try {
		setup?.(home);
		const runs = [];
		for (const step of steps) {
			const run = await runCli(install, home, typeof step.args === "function" ? step.args(home) : step.args, step);
			// RPC command responses come when each command's asynchronous handling ends, so where one
			// falls among the session events is scheduling: they are compared apart, in order of id.
			const records = [...run.records];
			const responses = records.filter((r) => r.type === "response").sort((a, b) => String(a.id).localeCompare(String(b.id)));
			const stdout = records.length ? { events: records.filter((r) => r.type !== "response"), responses } : run.stdout;
			runs.push({ code: run.code, stdout, stderr: run.stderr });
		}
		const sessions = filesUnder(join(home.agentDir, "sessions"));
		const result = {
			runs,
			requests: server.requests,
			files: filesUnder(home.work),
			sessions: Object.fromEntries(Object.entries(sessions).map(([name, text]) => [name, text.split("\n").filter(Boolean).map((line) => JSON.parse(line))])),
		};
		return normalise(result, home.root, dirname(dirname(INSTALLS[install])));
	} finally {
		await server.close();
		rmSync(home.root, { recursive: true, force: true });
	}
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO = /\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:[.-]\d{3})?Z/g;

/**
 * Replaces what differs from run to run whatever the package: the temporary folder, the folder the
 * coding agent is installed in (its system prompt names its docs), clock values
 * (timestamps, ISO dates, durations), and ids the agent generates (UUIDs, by order of appearance;
 * session entry ids, by the same rule). Everything else is kept as it was.
 */
export function normalise(value, root, packageDir) {
	const ids = new Map();
	const id = (raw) => {
		if (!ids.has(raw)) ids.set(raw, `<id${ids.size + 1}>`);
		return ids.get(raw);
	};
	const text = (s) =>
		s
			.split(root)
			.join("<root>")
			// The session folder's name is the cwd with its slashes as dashes.
			.split(root.replaceAll("/", "-"))
			.join("-<root>")
			.split(packageDir)
			.join("<pi-coding-agent>")
			.replace(ISO, "<iso>")
			.replace(/\b\d{4}-\d{2}-\d{2}\b/g, "<date>")
			.replace(UUID, id);
	const walk = (v, key) => {
		if (typeof v === "string") return key === "id" || key === "parentId" || key === "entryId" ? (/^[0-9a-f]{8,}$/.test(v) ? id(v) : text(v)) : text(v);
		if (typeof v === "number") {
			if (key === "durationMs" || key === "elapsedMs") return "<ms>";
			if (key === "wall_time_seconds") return "<s>";
			return v >= 1e12 ? "<now>" : v;
		}
		if (Array.isArray(v)) return v.map((x) => walk(x, key));
		if (v && typeof v === "object") {
			const out = {};
			for (const [k, x] of Object.entries(v)) out[text(k)] = walk(x, k);
			return out;
		}
		return v;
	};
	return walk(value);
}
