// The job list and the measuring loop, shared by the Node and the Chromium benchmarks.
//
// A backend runs one scenario on one implementation and returns the CPU clock at its marks:
//   backend.prepare(scenario, params)              build inputs (not measured)
//   backend.runOnce(impl, scenario, params, keep)  -> { marks: { label: seconds }, threadMarks?, check }
//   backend.gc()                                   full GC, a macrotask for finalizers, full GC again (not measured)
//   backend.memory()                               -> { heap: bytes, wasm: bytes }
//   backend.release()                              drop what the last `keep` run held

export const IMPLS = ["ours", "reference"];

/**
 * The jobs of one environment: measured runs interleaved (ours, reference, reference, ours, …) after
 * warm-up; `runs` for the cheap scenarios (S3 at 50,000 messages too: under half a second a run), `heavyRuns` for ours' S4b. S4b on the reference
 * is quadratic: `refS4bRuns` runs (1 for S4b-string) after one 1/10-size warm-up.
 */
export function jobs({ runs = 11, heavyRuns = 5, refS4bRuns = 2, s4bString = true } = {}) {
  const both = (n) => ({ ours: n, reference: n });
  const list = [];
  // Stream kinds (scenarios.mjs STREAM_KINDS): S1 and S2 run with each, as many times as the own
  // class: the headline is the worst kind, so no kind's median may rest on fewer runs.
  const kinds = [["own", ""], ["piai", " [pi-ai class]"], ["generator", " [async generator]"], ["pull", " [pull iterator]"]];
  for (const [kind, what] of kinds) {
    list.push({
      // Twice the runs too: a run is 5–10 ms, and its cost is bimodal in Chromium (one GC, or none).
      id: kind === "own" ? "S1" : `S1-${kind}`, scenario: "s1", params: { deltas: 20_000, size: 50, kind }, warm: both(5), runs: both(2 * runs - 1),
      divisor: 20_000, unit: "delta", quarters: 5_000, memory: kind === "own", unmarkedTotals: true,
      label: `S1 one prompt, 20,000 text deltas × 50 chars, listener reads event.message${what}`,
    });
  }
  for (const hooks of [false, true]) {
    for (const [kind, what] of kinds) {
      list.push({
        // Twice the runs: a run is 20–40 ms, and one major GC inside it moves it by half.
        id: `S2${kind === "own" ? "" : `-${kind}`}${hooks ? "-hooks" : ""}`, scenario: "s2", params: { turns: 200, tools: 8, kind, hooks }, warm: both(3), runs: both(2 * runs - 1),
        divisor: 200, unit: "turn", label: `S2 200 turns × 8 parallel trivial tools${what}${hooks ? " [beforeToolCall + afterToolCall]" : ""}`,
      });
    }
  }
  for (const size of [500, 5_000, 50_000]) {
    for (const [variant, what] of [["", ""], ["hooks", " [tool hooks]"], ["ui", " [UI reads state.messages]"]]) {
      if (variant && size === 500) continue;
      const heavy = size === 50_000;
      list.push({
        id: `S3-${size}${variant ? `-${variant}` : ""}`, scenario: "s3",
        params: { size, prompts: 100, hooks: variant === "hooks", ui: variant === "ui" }, warm: both(2),
        runs: both(runs),
        divisor: 100, unit: "prompt", memory: heavy && !variant,
        label: `S3 100 short prompts, Agent holding ${size.toLocaleString("en-US")} messages${what}`,
      });
    }
  }
  list.push({
    id: "S4a", scenario: "s4", params: { variant: "s4a", kind: "text", deltas: 20_000 },
    warmParams: { variant: "s4a-warm", kind: "text", deltas: 2_000 }, warm: both(3), runs: both(runs),
    divisor: 20_000, unit: "delta", label: "S4a streamProxy, 20,000 text deltas from 127.0.0.1",
  });
  const s4b = (shape, what) => ({
    id: shape === "edits" ? "S4b" : "S4b-string", scenario: "s4",
    params: { variant: `s4b-${shape}`, kind: "toolcall", deltas: 4_000 },
    warmParams: { variant: `s4b-${shape}-warm`, kind: "toolcall", deltas: 400 },
    warm: { ours: 3, reference: 1 }, runs: { ours: heavyRuns, reference: refS4bRuns },
    divisor: 1, perDelta: 4_000, unit: "run", quarters: 1_000,
    label: `S4b streamProxy, one tool call, 200 KB of arguments in 4,000 deltas (${what})`,
  });
  list.push(s4b("edits", "{path, edits: [1,590 small objects]}"));
  if (s4bString) {
    const extra = s4b("string", "{path, content: one 200 KB string}");
    extra.runs.reference = 1;
    list.push(extra);
  }
  return list;
}

function analyse(marks) {
  const out = { total: marks.end - marks.start };
  if ("q0" in marks && "q4" in marks) out.quarters = [1, 2, 3, 4].map((q) => marks[`q${q}`] - marks[`q${q - 1}`]);
  return out;
}

/** Runs every job; returns plain data. `log` gets one line per job. */
export async function runJobs(backend, list, log = () => {}) {
  const results = [];
  for (const job of list) {
    const t0 = Date.now();
    // One full GC before the job, none between measured runs: V8's forced full GC also throws away
    // optimised code, so a GC right before a run would make every measured run partly cold.
    await backend.gc();
    await backend.prepare(job.scenario, job.params);
    if (job.warmParams) await backend.prepare(job.scenario, job.warmParams);
    const warmMax = Math.max(job.warm.ours, job.warm.reference);
    for (let w = 0; w < warmMax; w++) {
      for (const impl of IMPLS) if (w < job.warm[impl]) await backend.runOnce(impl, job.scenario, job.warmParams ?? job.params, false);
    }
    const samples = { ours: [], reference: [] };
    const threadSamples = { ours: [], reference: [] };
    const checks = { ours: undefined, reference: undefined };
    const rounds = Math.max(job.runs.ours, job.runs.reference);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? IMPLS : [...IMPLS].reverse();
      for (const impl of order) {
        if (samples[impl].length >= job.runs[impl]) continue;
        const { marks, threadMarks, check } = await backend.runOnce(impl, job.scenario, job.params, false);
        const sample = analyse(marks);
        const threadSample = threadMarks && analyse(threadMarks);
        if (job.unmarkedTotals) {
          // A mark inside the run costs the page a DevTools round trip, on both sides alike: the run's
          // total comes from a run without the quarter marks, its quarters from this one.
          const plain = await backend.runOnce(impl, job.scenario, { ...job.params, quarterMarks: false }, false);
          sample.total = analyse(plain.marks).total;
          if (threadSample) threadSample.total = analyse(plain.threadMarks).total;
        }
        samples[impl].push(sample);
        if (threadSample) threadSamples[impl].push(threadSample);
        checks[impl] = check;
      }
    }
    let memory;
    if (job.memory) {
      memory = {};
      // Retained by the finished run's Agent: heap with it alive minus heap once it is released
      // (both after a full GC; the scenario's inputs are cached and stay alive in both).
      for (const impl of IMPLS) {
        await backend.gc();
        const before = await backend.memory();
        await backend.runOnce(impl, job.scenario, job.params, true);
        await backend.gc();
        const held = await backend.memory();
        await backend.release();
        await backend.gc(); // runs FinalizationRegistry callbacks (wasm-bindgen frees Rust objects there) and GCs again
        const released = await backend.memory();
        memory[impl] = { heap: held.heap - released.heap, heapAlive: held.heap, wasm: held.wasm, wasmGrowth: held.wasm - before.wasm };
      }
    }
    const wall = (Date.now() - t0) / 1000;
    results.push({ job, samples, threadSamples, checks, memory, wall });
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
    log(`${job.id}: ours ${(med(samples.ours.map((s) => s.total)) * 1e3).toFixed(2)} ms, reference ${(med(samples.reference.map((s) => s.total)) * 1e3).toFixed(2)} ms per run (${wall.toFixed(1)} s wall)`);
  }
  return results;
}
