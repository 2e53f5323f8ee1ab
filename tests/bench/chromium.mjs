// Headless Chromium with the bench page loaded and a CDP session, for run.mjs and profile.mjs.
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../support/chromium.mjs";

export { CHROMIUM_ARGS } from "../support/chromium.mjs";

/**
 * Opens `${base}/bench/page.html`. Returns { browser, page, cdp, marks(), reset() }: every
 * `__benchMark(label)` call from the page records TaskDuration (seconds of main-thread CPU time:
 * Performance.enable with timeDomain "threadTicks") under `label`.
 */
export async function openBenchPage(base, { log = () => {} } = {}) {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
  let marks = {};
  await page.exposeBinding("__benchMark", async (_source, label) => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    marks[label] = metrics.find((m) => m.name === "TaskDuration").value;
  });
  const errors = [];
  page.on("pageerror", (error) => errors.push(error));
  page.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "warning") log(`[page ${msg.type()}] ${msg.text()}`);
  });
  await page.goto(`${base}/bench/page.html`);
  await page.waitForFunction(() => window.benchReady === true || undefined, undefined, { timeout: 60_000 }).catch((e) => {
    throw errors[0] ?? e;
  });
  return {
    browser,
    page,
    cdp,
    version: browser.version(),
    errors,
    takeMarks() {
      const m = marks;
      marks = {};
      return m;
    },
  };
}
