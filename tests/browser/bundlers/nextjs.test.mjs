// Next.js (App Router, Turbopack, its default configuration) with the packed package: `npm pack` of pkg/, a
// fresh app in a temporary directory (next, react and react-dom pinned, from the npm registry), a client
// component that runs the shared scenario (scenario.mjs: one prompt with one tool call) in useEffect, then
// `next build`, `next start` on 127.0.0.1 and the page in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core). The build also prerenders the page on the server, which imports the package in
// Node. Skipped when pkg/ is not built. PI_BROWSER_PKG_DIR=<dir> tests another build of pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../support/chromium.mjs";
import { NEXT_VERSIONS, installAndBuild } from "../../support/next-app.mjs";
import { EXPECTED, SCENARIO } from "./scenario.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG_DIR = process.env.PI_BROWSER_PKG_DIR ? resolve(process.env.PI_BROWSER_PKG_DIR) : join(REPO, "pkg");

const FILES = {
  "app/scenario.js": `${SCENARIO}\nexport { run };\n`,
  "app/layout.js": `export default function RootLayout({ children }) {
  return <html><body>{children}</body></html>;
}
`,
  "app/page.js": `"use client";
import { useEffect, useState } from "react";
import * as pkg from "pi-agent-wasm";
import { run } from "./scenario.js";
export default function Page() {
  const [status, setStatus] = useState("running");
  useEffect(() => {
    run(pkg).then(
      (main) => { window.__result = { main }; setStatus("done"); },
      (e) => { window.__result = { error: String((e && e.stack) || e) }; },
    );
  }, []);
  return <p>{status}</p>;
}
`,
};

const freePort = () =>
  new Promise((done, fail) => {
    const server = net.createServer().once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });

test("Next.js App Router: a client component runs a prompt with a tool", { timeout: 600000 }, async (t) => {
  if (!existsSync(join(PKG_DIR, "package.json"))) throw new Error("pkg/ is not built: run node scripts/build.mjs");
  const tmp = mkdtempSync(join(tmpdir(), "pi-next-"));
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  try {
    const packed = execFileSync("npm", ["pack", PKG_DIR, "--pack-destination", tmp, "--silent"], { encoding: "utf8" }).trim().split("\n").at(-1);
    const app = join(tmp, "app");
    mkdirSync(join(app, "app"), { recursive: true });
    writeFileSync(join(app, "package.json"), JSON.stringify({
      name: "fresh-next-app", private: true,
      dependencies: { ...NEXT_VERSIONS, "pi-agent-wasm": `file:${join(tmp, packed)}` },
    }, null, 2));
    for (const [file, text] of Object.entries(FILES)) writeFileSync(join(app, file), text);
    const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NO_COLOR: "1" };
    const next = installAndBuild(app);

    const port = await freePort();
    const server = spawn(process.execPath, [next, "start", "-p", String(port), "-H", "127.0.0.1"], { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise((r) => server.once("exit", r));
    cleanups.push(() => {
      server.kill();
      return exited;
    });
    let output = "";
    await new Promise((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`next start did not get ready:\n${output}`)), 60000);
      const read = (chunk) => {
        output += chunk;
        if (/Ready in/.test(output)) {
          clearTimeout(timer);
          ready();
        }
      };
      server.stdout.on("data", read);
      server.stderr.on("data", read);
      server.once("exit", (code) => fail(new Error(`next start exited (${code}):\n${output}`)));
    });

    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    cleanups.push(() => browser.close());
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30000 });
    const result = await page.evaluate(() => window.__result);
    assert.equal(result.error, undefined, result.error);
    assert.deepEqual(result.main, EXPECTED);
    assert.deepEqual(errors, []);
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
});
