// The UI benchmark's page: loads one setup's bundle (/build/<setup>.js), mounts its chat app and, in a
// cold run, sends the first prompt at once. The runner (tests/bench/ui/run.mjs) reads `window.__answer`
// (cold) or calls `window.__warm()` (warm). `performance.mark`s "ui-start" and "ui-end" bound a warm run
// in the trace; a cold run is measured from the navigation on.
const params = new URLSearchParams(location.search);
const setup = params.get("setup");
const workload = params.get("workload");
const expected = Number(params.get("length"));
const ui = window.__ui;
const nextFrame = () => new Promise((r) => requestAnimationFrame(r));

/** Resolves once the finished answer is on screen: the last row is an assistant row, not streaming, with the whole text. */
async function rendered() {
  for (;;) {
    const rows = document.querySelectorAll("#app .row");
    const last = rows[rows.length - 1];
    if (last && last.dataset.role === "assistant" && !("streaming" in last.dataset) && last.textContent.length === expected) return;
    await nextFrame();
  }
}

async function answer(app) {
  await app.send("Write a long answer.");
  await rendered();
  await nextFrame();
  performance.mark("ui-end");
  return { renders: ui.renders, firstToken: ui.firstToken, agentCreated: ui.agentCreated, maxGap: ui.maxGap, frames: ui.frames };
}

const started = performance.now();
ui.begin();
const { mount } = await import(`/build/${setup}.js`);
const app = mount(document.getElementById("app"), { origin: location.origin, workload });
if (params.get("mode") === "cold") {
  window.__answer = answer(app).then((r) => ({ ...r, started }), (e) => ({ error: String(e?.stack ?? e) }));
}
/** Clears the transcript (the last answer's rows go) and waits until that is on screen. */
window.__clear = async () => {
  app.reset();
  await nextFrame();
  await nextFrame();
};
/** One answer between the marks "ui-start" and "ui-end". */
window.__measure = () => {
  ui.begin();
  performance.mark("ui-start");
  return answer(app);
};
window.__warm = async () => {
  await window.__clear();
  return window.__measure();
};
/** FNV-1a of the answer's row text, checked against the workload's text by the runner. */
window.__hash = () => {
  const rows = document.querySelectorAll("#app .row");
  const text = rows[rows.length - 1].textContent;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return { hash: h >>> 0, length: text.length, rows: rows.length };
};
window.__ready = true;
