// The model-based random test: seeded sequences of what users and the world do (prompt, steer, follow
// up, continue, abort, approve, deny, reload and resume, edit, regenerate and switch versions (branches),
// tools that throw or never settle, streams that error, stop mid-arguments or ignore the abort, workers
// that die), run on an `Agent` and on a
// `WorkerAgent` (over a MessageChannel), each with a session and a recorder; after every step the
// invariants of sequence.mjs hold. The regression sequences in regressions.json always run first.
//
// A failure is reported once per kind of problem, with the first seed that showed it, shrunk to the
// shortest sequence that still shows it, and the regression entry to keep.
//
//   PI_MODEL_SEEDS=20000 node --test tests/js/model/   more seeds per subject (default 1000)
//   PI_MODEL_FROM=5000                                 the first seed (default 1)
//   PI_MODEL_SEED=123 PI_MODEL_SUBJECT=worker          one sequence, its trace printed
//   PI_MODEL_DUMP=1 (with PI_MODEL_SEED)               also its recorded logs, and the messages of their replay
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { generate, runSequence, SUBJECTS } from "./sequence.mjs";
import { shrink, simplify } from "./shrink.mjs";

const SEEDS = Number(process.env.PI_MODEL_SEEDS ?? 1000);
const FROM = Number(process.env.PI_MODEL_FROM ?? 1);
const ONE = process.env.PI_MODEL_SEED;
const REGRESSIONS = JSON.parse(readFileSync(new URL("./regressions.json", import.meta.url), "utf8"));
// At most this many kinds of failure are shrunk and reported per subject (the rest are counted).
const REPORTED = 8;

/** A problem's kind, its numbers and ids left out: what makes two failures the same failure. */
const signature = (p) =>
  `${p.kind}: ${p.message.replace(/\[[^\]]*\]/g, "[…]").replace(/"[^"]*"/g, '"…"').replace(/\((echo|slow|guarded|boom|hang)\)/g, "(…)").replace(/\d+/g, "N")}`;

/** Fails with `text` alone: the trace is the report, a stack of the test runner would only hide it. */
function fail(text) {
  const error = new assert.AssertionError({ message: text });
  error.stack = "";
  throw error;
}

function report(subject, seed, steps, result, original) {
  const lines = [`${subject}, seed ${seed}: ${steps.length}${original ? ` of ${original}` : ""} steps`];
  lines.push(...result.trace);
  lines.push(`regression entry (tests/js/model/regressions.json): ${JSON.stringify({ seed, subject, steps })}`);
  return lines.join("\n");
}

// A step that only lets time pass, for one that matters only by the turn of the event loop it takes.
const simpler = ([op, arg]) => (op === "wait" ? (arg > 1 ? ["wait", 1] : undefined) : ["wait", 1]);
/** Adjacent waits as one (each step also takes a turn of its own). */
function mergeWaits(steps) {
  const out = [];
  for (const step of steps) {
    const last = out[out.length - 1];
    if (step[0] === "wait" && last?.[0] === "wait") out[out.length - 1] = ["wait", last[1] + step[1] + 1];
    else out.push(step);
  }
  return out;
}

/** Runs seeds, groups their problems by signature, shrinks the first seed of each. */
async function explore(t, subject, seeds) {
  const found = new Map();
  let failing = 0;
  const t0 = Date.now();
  for (const seed of seeds) {
    const steps = generate(seed, subject);
    const result = await runSequence({ seed, subject, steps });
    if (result.problems.length === 0) continue;
    failing++;
    for (const sig of new Set(result.problems.map(signature))) {
      const entry = found.get(sig);
      if (entry) entry.count++;
      else found.set(sig, { count: 1, seed, steps });
    }
  }
  t.diagnostic(`${subject}: ${seeds.length} sequences in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${failing} failing, ${found.size} kinds of problem`);
  let shown = 0;
  for (const [sig, { count, seed, steps }] of found) {
    if (shown++ >= REPORTED) {
      t.diagnostic(`not shrunk: ${sig} (${count} sequences)`);
      continue;
    }
    const stillFails = async (candidate) => (await runSequence({ seed, subject, steps: candidate })).problems.some((p) => signature(p) === sig);
    let shortest = await simplify(await shrink(steps, stillFails), stillFails, { simpler, merge: mergeWaits });
    // A sequence whose timing is close to a timer's may not fail every time: show a run that does.
    let result;
    for (let i = 0; i < 3 && !result; i++) {
      const r = await runSequence({ seed, subject, steps: shortest });
      if (r.problems.some((p) => signature(p) === sig)) result = r;
    }
    if (!result) {
      shortest = steps;
      result = await runSequence({ seed, subject, steps });
    }
    await t.test(`${subject}: ${sig} (${count} of ${seeds.length} sequences)`, () => {
      fail(report(subject, seed, shortest, result, steps.length));
    });
  }
  return found.size;
}

if (ONE !== undefined) {
  const subject = process.env.PI_MODEL_SUBJECT ?? "agent";
  test(`one sequence: ${subject}, seed ${ONE}`, async () => {
    const steps = generate(Number(ONE), subject);
    const result = await runSequence({ seed: Number(ONE), subject, steps });
    console.log(result.trace.join("\n"));
    assert.deepEqual(result.problems.map((p) => `${p.kind}: ${p.message}`), []);
  });
} else {
  test("kept regression sequences", async (t) => {
    for (const entry of REGRESSIONS) {
      const steps = entry.steps ?? generate(entry.seed, entry.subject);
      await t.test(`${entry.subject}, seed ${entry.seed}${entry.note ? `: ${entry.note}` : ""}`, async () => {
        const result = await runSequence({ seed: entry.seed, subject: entry.subject, steps });
        if (result.problems.length) fail(report(entry.subject, entry.seed, steps, result));
      });
    }
  });

  for (const subject of SUBJECTS) {
    test(`random sequences on ${subject === "worker" ? "a WorkerAgent" : "an Agent"}, seeds ${FROM}–${FROM + SEEDS - 1}`, { timeout: 600_000 }, async (t) => {
      const kinds = await explore(t, subject, Array.from({ length: SEEDS }, (_, i) => FROM + i));
      assert.equal(kinds, 0, `${kinds} kinds of problem (see the subtests)`);
    });
  }
}

