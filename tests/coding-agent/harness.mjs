// Runs pi-coding-agent 1.4.0 (the real `pi` CLI, its unbundled dist/cli.js) in two installs, one with
// its own pi-agent-core 1.4.0 and one whose pi-agent-core is our packed package, against a scripted
// OpenAI-compatible server, and records what each run did: stdout (text, or JSON/RPC records), stderr,
// the exit code, every request the server got, the files in the working folder and the session files.
// Records are normalised only where a run is nondeterministic (clock values, temporary paths and files, ids
// the agent generates), so the two installs can be compared with deepStrictEqual.
import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SHIM = fileURLToPath(new URL("./node22.mjs", import.meta.url));
const SOURCE_PACKAGE = join(ROOT, "node_modules/@earendil-works/pi-coding-agent");
const CORE = "node_modules/@earendil-works/pi-agent-core";
/**
 * The two installs, test-output/coding-agent/<dir>/node_modules/@earendil-works/{pi-coding-agent,
 * pi-agent-core}. Their folders' names have the same length: the system prompt names the coding
 * agent's folder, and compaction counts the prompt's characters.
 */
/** Where the installs are laid out and a failing comparison leaves its two records. */
export const OUTPUT = join(ROOT, "test-output/coding-agent");
const PREFIXES = {
	reference: join(OUTPUT, "reference"),
	ours: join(OUTPUT, "ours-wasm"),
};
const packageOf = (install) => join(PREFIXES[install], "node_modules/@earendil-works/pi-coding-agent");

export const INSTALLS = {
	reference: join(packageOf("reference"), "dist/cli.js"),
	ours: join(packageOf("ours"), "dist/cli.js"),
};

/**
 * Lays out both installs: the coding agent's published files (without its bundle, which has
 * pi-agent-core compiled in, and the source maps) beside, as `@earendil-works/pi-agent-core`, the
 * repository's 1.4.0 in one and our package unpacked from `npm pack pkg/` in the other. Their other
 * dependencies resolve from the repository's node_modules. Returns where
 * `@earendil-works/pi-agent-core` resolves from each install's cli.js.
 */
export function prepareInstalls() {
	if (!existsSync(join(ROOT, "pkg/package.json"))) throw new Error("pkg/ is not built (node scripts/build.mjs)");
	for (const install of Object.keys(PREFIXES)) {
		rmSync(PREFIXES[install], { recursive: true, force: true });
		cpSync(SOURCE_PACKAGE, packageOf(install), {
			recursive: true,
			filter: (source) => !source.endsWith(".map") && !source.includes("/dist/bundle"),
		});
	}
	cpSync(join(ROOT, CORE), join(PREFIXES.reference, CORE), { recursive: true });
	const packDir = join(PREFIXES.ours, "pack");
	mkdirSync(packDir);
	const tarball = execFileSync("npm", ["pack", join(ROOT, "pkg"), "--pack-destination", packDir, "--silent"], { cwd: packDir, encoding: "utf8" }).trim().split("\n").at(-1);
	mkdirSync(join(PREFIXES.ours, CORE), { recursive: true });
	execFileSync("tar", ["-xzf", join(packDir, tarball), "-C", join(PREFIXES.ours, CORE), "--strip-components=1"]);
	const resolved = {};
	for (const [name, cli] of Object.entries(INSTALLS)) {
		// Node's lookup: the nearest node_modules/@earendil-works/pi-agent-core above the CLI.
		let dir = dirname(cli);
		while (!existsSync(join(dir, CORE, "package.json"))) dir = dirname(dir);
		const pkg = JSON.parse(readFileSync(join(dir, CORE, "package.json"), "utf8"));
		resolved[name] = `${pkg.name}@${pkg.version}`;
	}
	return resolved;
}

/**
 * A fresh temporary folder with `agent/` (the agent dir: models.json, and settings.json when
 * `settings` is given) and `work/` (the cwd). The provider `scripted` has `scripted-model`, with
 * `model`'s fields over its defaults, then `models` (more models, each a full entry).
 */
export function makeHome(serverUrl, { model, models = [], settings } = {}) {
	const root = mkdtempSync(join(tmpdir(), "pi-ca-"));
	const agentDir = join(root, "agent");
	const work = join(root, "work");
	mkdirSync(agentDir);
	mkdirSync(work);
	const first = { id: "scripted-model", name: "Scripted", contextWindow: 100000, maxTokens: 4096, ...model };
	writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { scripted: { baseUrl: `${serverUrl}/v1`, api: "openai-completions", apiKey: "test-key", models: [first, ...models] } } }));
	if (settings) writeFileSync(join(agentDir, "settings.json"), JSON.stringify(settings));
	return { root, agentDir, work };
}

/**
 * Starts the CLI of `install` with `args` in `context.home.work`. `drive(child, records, context)`
 * may write to stdin, wait on the stdout records (JSON lines) seen so far and release the server's
 * paused answers (`context.release`); stdin is closed after it returns. Bounded: the process is
 * killed after `timeoutMs`.
 */
export async function runCli(install, context, args, { drive, timeoutMs = 60_000 } = {}) {
	const { home } = context;
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
	/** Resolves once a record from index `from` on satisfies `test` (rejects if the process exits first). */
	records.waitFor = (test, from = 0) =>
		new Promise((resolve, reject) => {
			const check = () => {
				const found = records.slice(from).find(test);
				if (found) {
					waiters.delete(check);
					resolve(found);
				}
			};
			waiters.add(check);
			check();
			exited.then(() => waiters.has(check) && reject(new Error(`exited before the awaited record; stderr: ${stderr.slice(0, 500)}`)));
		});
	/** Resolves with the first record satisfying `test` among those that arrive after the call. */
	records.next = (test) => records.waitFor(test, records.length);
	/** Resolves once the agent has settled `n` times in all (RPC mode's `agent_settled` records). */
	records.settled = (n) => records.waitFor(() => records.filter((r) => r.type === "agent_settled").length >= n);
	records.send = (command) => child.stdin.write(`${JSON.stringify(command)}\n`);
	/** Sends an RPC command and resolves with its response. */
	records.ask = (command) => {
		const from = records.length;
		records.send(command);
		return records.waitFor((r) => r.type === "response" && r.id === command.id, from);
	};
	try {
		if (drive) await drive(child, records, context);
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
 * One conversation, with one install: a route of `server` (startOpenAIServer) with `script`, a fresh
 * home (`home`: makeHome's options), `setup(home)`, then `steps` (each a `runCli` call:
 * `{ args, drive? }`) in order. Returns what happened, normalised.
 */
export async function conversation(server, install, { script, steps, setup, home: homeOptions }) {
	const route = server.open(structuredClone(script));
	const home = makeHome(route.url, homeOptions);
	try {
		setup?.(home);
		const runs = [];
		for (const step of steps) {
			const run = await runCli(install, { home, release: route.release }, typeof step.args === "function" ? step.args(home) : step.args, step);
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
			requests: route.requests,
			files: filesUnder(home.work),
			sessions: Object.fromEntries(Object.entries(sessions).map(([name, text]) => [name, text.split("\n").filter(Boolean).map((line) => JSON.parse(line))])),
		};
		return normalise(result, { root: home.root, packageDir: packageOf(install), serverUrl: route.url });
	} finally {
		route.close();
		rmSync(home.root, { recursive: true, force: true });
	}
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO = /\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:[.-]\d{3})?Z/g;

/**
 * Replaces what differs from run to run whatever the package: the temporary folder, the folder the
 * coding agent is installed in (its system prompt names its docs), the server's route (a model's
 * `baseUrl`), clock values (timestamps, ISO dates, durations, a codemode script's wall time), the bash tool's temporary log files, and ids the agent generates (UUIDs, by
 * order of appearance; session entry ids, by the same rule). Everything else is kept as it was.
 */
export function normalise(value, { root, packageDir, serverUrl }) {
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
			.split(serverUrl)
			.join("<server>")
			.replace(ISO, "<iso>")
			// A codemode result's header says how long its script ran.
			.replace(/^(Script (?:completed|failed)\nWall time )[\d.]+ seconds/, "$1<s> seconds")
			.replace(/\b\d{4}-\d{2}-\d{2}\b/g, "<date>")
			// The bash tool keeps a truncated output's full text in a temporary file of a random name.
			.replace(/\/pi-bash-[0-9a-f]+\.log\b/g, "/pi-bash-<random>.log")
			.replace(UUID, id);
	const walk = (v, key) => {
		// Session entries are named by 8 hex digits in `id`, `parentId` and every other `…Id` field.
		if (typeof v === "string") return /^(?:id|\w*Id)$/.test(key ?? "") && /^[0-9a-f]{8,}$/.test(v) ? id(v) : text(v);
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
