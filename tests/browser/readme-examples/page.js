// The page the README's Chromium examples run in: `runExample` gives the harness fresh values, imports
// the example's bundle and runs its check; it returns the errors the page saw.
import * as harness from "./harness.js";

const errors = [];
addEventListener("unhandledrejection", (e) => errors.push(`unhandled rejection: ${e.reason?.stack ?? e.reason}`));
addEventListener("error", (e) => errors.push(`error: ${e.message}`));

window.runExample = async ({ dir, main, block }) => {
  await harness.reset(block);
  const base = new URL(dir, location.href);
  const ns = main ? await import(new URL(main, base).href) : {};
  if (block.check) {
    const check = harness.checks[block.check];
    if (!check) throw new Error(`no check named ${block.check} in tests/browser/readme-examples/harness.js`);
    await check(ns, { dir: base, block, target: document.getElementById("target") });
  }
  // A rejection the example left behind surfaces within a macrotask.
  await new Promise((r) => setTimeout(r, 20));
  return errors;
};
window.ready = true;
