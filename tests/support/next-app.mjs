// A fresh Next.js app for the tests that run one (tests/browser/bundlers/nextjs.test.mjs,
// tests/browser/server/nextjs.test.mjs): the pinned versions, and its install and `next build` with the
// defaults (App Router, Turbopack). Packages come from the npm registry (npm's cache first).
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export const NEXT_VERSIONS = { next: "16.4.6", react: "19.3.1", "react-dom": "19.3.1" };

/** `npm install` then `next build` in `app`; gives the path of next's CLI. */
export function installAndBuild(app, env = {}) {
	execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: app, stdio: "pipe" });
	const next = join(app, "node_modules/next/dist/bin/next");
	execFileSync(process.execPath, [next, "build"], { cwd: app, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NO_COLOR: "1", ...env }, stdio: "pipe" });
	return next;
}
