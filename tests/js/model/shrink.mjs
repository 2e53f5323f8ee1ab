// Delta debugging (Zeller's ddmin) over a sequence's steps: the shortest sub-sequence found that still
// fails the same way, so a report shows a few steps instead of a dozen.

/**
 * `fails(steps)` (async) tells whether a candidate still fails. Removes chunks of halving size, then
 * single steps, until no removal keeps it failing; stops after `budget` runs of `fails`.
 */
export async function shrink(steps, fails, { budget = 200 } = {}) {
  let current = steps;
  let runs = 0;
  let n = 2;
  while (current.length > 1 && runs < budget) {
    const size = Math.ceil(current.length / n);
    let reduced = false;
    for (let start = 0; start < current.length && runs < budget; start += size) {
      const candidate = [...current.slice(0, start), ...current.slice(start + size)];
      runs++;
      if (candidate.length > 0 && (await fails(candidate))) {
        current = candidate;
        n = Math.max(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (size === 1) break;
      n = Math.min(n * 2, current.length);
    }
  }
  return current;
}

/**
 * Then makes the steps left simpler one by one (`simpler(step)` gives a simpler one, or undefined) and
 * `merge(steps)` joins what can be joined, keeping each change only while `fails` still holds.
 */
export async function simplify(steps, fails, { simpler, merge = (s) => s }) {
  let current = steps;
  for (let i = 0; i < current.length; i++) {
    const step = simpler(current[i]);
    if (step === undefined) continue;
    const candidate = current.slice();
    candidate[i] = step;
    if (await fails(candidate)) current = candidate;
  }
  const merged = merge(current);
  if (merged.length < current.length && (await fails(merged))) current = merged;
  return current;
}
