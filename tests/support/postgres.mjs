// A Postgres server from Debian's packages (/usr/lib/postgresql/<version>/bin, installed by
// scripts/bootstrap.sh), started by the test that needs it and stopped by it: a fresh cluster in a
// temporary directory (initdb), listening on 127.0.0.1 on a free port only, with trust
// authentication. As root it runs as the `postgres` user the package creates (initdb and the
// server refuse root), else as the current user.
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

function binaries() {
	const root = "/usr/lib/postgresql";
	const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => b - a) : [];
	for (const v of versions) if (existsSync(join(root, v, "bin", "initdb"))) return join(root, v, "bin");
	throw new Error("Debian's postgresql is not installed (no /usr/lib/postgresql/<version>/bin/initdb): run scripts/bootstrap.sh");
}

const freePort = () =>
	new Promise((resolve, reject) => {
		const s = net.createServer().once("error", reject);
		s.listen(0, "127.0.0.1", () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});

/** Starts a cluster; resolves { url, port, bin, stop() }. */
export async function startPostgres() {
	const bin = binaries();
	const dir = mkdtempSync(join(tmpdir(), "pi-pg-"));
	const asRoot = process.getuid?.() === 0;
	const run = (cmd, args) => {
		const full = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]] : [join(bin, cmd), args];
		return execFileSync(full[0], full[1], { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000, encoding: "utf8" });
	};
	if (asRoot) {
		const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
		const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
		chownSync(dir, uid, gid);
	}
	const data = join(dir, "data");
	run("initdb", ["-D", data, "-A", "trust", "-U", "test", "-E", "UTF8", "--locale=C", "--no-sync"]);
	const port = await freePort();
	const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`;
	try {
		run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
	} catch (err) {
		const log = spawnSync("cat", [join(dir, "log")], { encoding: "utf8" }).stdout;
		rmSync(dir, { recursive: true, force: true });
		throw new Error(`pg_ctl start failed: ${err.stderr ?? err.message}\n${log}`);
	}
	let stopped = false;
	return {
		url: `postgres://test@127.0.0.1:${port}/postgres`,
		port,
		bin,
		stop() {
			if (stopped) return;
			stopped = true;
			try {
				run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		},
	};
}
