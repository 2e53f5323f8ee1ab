#!/usr/bin/env node
// Cargo's runner for tests/wasm_browser.rs (see scripts/test-wasm.sh):
//
//   node scripts/wasm-browser-runner.mjs <test.wasm> [test args…]
//
// wasm-bindgen-test-runner builds the test page and serves it; headless Chromium (Debian's, through
// playwright-core, with the flags every other browser test uses) runs it, and the page's output decides.
//
// Why not the runner's own chromedriver mode: its HTTP server (rouille on tiny_http) was seen, on this
// 2-core machine, to stop answering while Chromium loads the page's fifteen JS modules over parallel
// keep-alive connections. The page then sat at "Loading scripts..." until chromedriver gave up after
// 300 s, and a second start sometimes did the same. Requests it gets one at a time, each on a
// connection of its own, it always answers, so a small proxy here hands them over that way.
import { spawn } from "node:child_process";
import http from "node:http";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../tests/support/chromium.mjs";

const TEST_TIMEOUT_MS = 120_000;
const [wasm, ...testArgs] = process.argv.slice(2);
if (!wasm) {
  console.error("usage: wasm-browser-runner.mjs <test.wasm> [test args…]");
  process.exit(2);
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = http.createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

const upstreamPort = await freePort();
const runner = spawn("wasm-bindgen-test-runner", [wasm, ...testArgs], {
  env: { ...process.env, NO_HEADLESS: "1", WASM_BINDGEN_TEST_ADDRESS: `127.0.0.1:${upstreamPort}` },
  stdio: ["ignore", "pipe", "inherit"],
});
let proxy;
let browser;
const finish = async (code) => {
  await browser?.close().catch(() => {});
  proxy?.close();
  runner.kill();
  process.exit(code);
};
const deadline = setTimeout(() => {
  console.error(`wasm-browser-runner: no test result within ${TEST_TIMEOUT_MS / 1000} s`);
  finish(1);
}, TEST_TIMEOUT_MS);
runner.on("exit", (code) => {
  if (browser === undefined) {
    console.error(`wasm-bindgen-test-runner exited (${code}) before serving the test page`);
    finish(1);
  }
});

// The runner prints this line once its server listens.
await new Promise((resolve) => {
  let seen = "";
  runner.stdout.on("data", (chunk) => {
    seen += chunk;
    if (seen.includes("are now available at")) resolve();
  });
});

let queue = Promise.resolve();
proxy = http.createServer((req, res) => {
  queue = queue.then(
    () =>
      new Promise((done) => {
        const headers = { ...req.headers, connection: "close" };
        const upstream = http.request(
          { host: "127.0.0.1", port: upstreamPort, path: req.url, method: req.method, headers, agent: false },
          (response) => {
            res.writeHead(response.statusCode, response.headers);
            response.pipe(res);
            response.on("end", done);
            response.on("error", done);
          },
        );
        upstream.on("error", (error) => {
          res.writeHead(502);
          res.end(String(error));
          done();
        });
        req.pipe(upstream);
      }),
  );
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));

browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
const page = await browser.newPage();
page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
await page.goto(`http://127.0.0.1:${proxy.address().port}/`);
let printed = 0;
for (;;) {
  const output = await page.evaluate(() => document.querySelector("#output")?.textContent ?? "");
  process.stdout.write(output.slice(printed));
  printed = output.length;
  if (output.includes("test result: ")) {
    clearTimeout(deadline);
    process.stdout.write("\n");
    await finish(/test result: ok\./.test(output) ? 0 : 1);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
