// Stopping a server a test started as a child process.

/** Asks `proc` to stop (SIGTERM), kills it 5 s later if it has not, and resolves once `exited` has. */
export async function stopProcess(proc, exited) {
	if (proc.exitCode !== null || proc.signalCode !== null) return;
	proc.kill("SIGTERM");
	const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
	await exited;
	clearTimeout(timer);
}
