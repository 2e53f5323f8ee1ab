// Reading a Chromium trace (the DevTools protocol's Tracing domain) for the UI benchmark: where the page's
// main thread spent its CPU time between two points, by kind (JavaScript, garbage collection, style and
// layout, paint, other), its long tasks, its rendering frames, and the worker threads' CPU time.

/** The categories recorded: every main-thread task with its CPU time, V8 and GC, user timing marks. */
export const CATEGORIES = [
  "toplevel",
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "blink.user_timing",
  "v8",
  "v8.execute",
  "disabled-by-default-v8.gc",

];

export async function startTrace(cdp) {
  await cdp.send("Tracing.start", {
    transferMode: "ReturnAsStream",
    traceConfig: { includedCategories: CATEGORIES, recordMode: "recordAsMuchAsPossible" },
  });
}

export async function endTrace(cdp) {
  const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
  await cdp.send("Tracing.end");
  const { stream } = await complete;
  const chunks = [];
  for (;;) {
    const { data, eof, base64Encoded } = await cdp.send("IO.read", { handle: stream, size: 8 << 20 });
    chunks.push(base64Encoded ? Buffer.from(data, "base64").toString("utf8") : data);
    if (eof) break;
  }
  await cdp.send("IO.close", { handle: stream });
  const parsed = JSON.parse(chunks.join(""));
  return Array.isArray(parsed) ? parsed : parsed.traceEvents;
}

const TOP = new Set(["RunTask", "ThreadControllerImpl::RunTask", "ThreadPool_RunTask"]);
const KINDS = [
  ["gc", /GC|Scavenge|MarkCompact|Sweep|Marking|Heap(?!Snapshot)|ThreadState::|CppGC/],
  ["layout", /^(Layout|UpdateLayoutTree|RecalculateStyles|ScheduleStyleRecalculation|InvalidateLayout|LayoutShift)$/],
  ["paint", /^(Paint|PrePaint|Layerize|UpdateLayer|UpdateLayerTree|PaintImage|Commit|CompositeLayers|RasterTask|Decode Image)$/],
  ["js", /^(FunctionCall|EvaluateScript|TimerFire|FireAnimationFrame|EventDispatch|FireIdleCallback|RunMicrotasks|XHRReadyStateChange|ResourceReceivedData|v8\.|V8\.|wasm|WebAssembly|ParseScript|CompileScript|CompileCode|Compile|OptimizeCode)/],
];
const kindOf = (name) => {
  for (const [kind, re] of KINDS) if (re.test(name)) return kind;
  return undefined;
};

/** Complete events (ph X, or B/E pairs) of one thread, sorted by start, with `end` and CPU `tdur` (µs). */
function threadSpans(events, pid, tid) {
  const spans = [];
  const open = [];
  for (const e of events) {
    if (e.pid !== pid || e.tid !== tid) continue;
    if (e.ph === "X") spans.push({ name: e.name, ts: e.ts, end: e.ts + (e.dur ?? 0), tdur: e.tdur ?? e.dur ?? 0, args: e.args });
    else if (e.ph === "B") open.push(e);
    else if (e.ph === "E") {
      const b = open.pop();
      if (b) spans.push({ name: b.name, ts: b.ts, end: e.ts, tdur: e.tts !== undefined && b.tts !== undefined ? e.tts - b.tts : e.ts - b.ts, args: b.args });
    }
  }
  spans.sort((a, b) => a.ts - b.ts || b.end - a.end);
  return spans;
}

/**
 * The main thread's CPU time by kind in [from, to] (µs, trace clock): each event's own time (its CPU
 * time less its children's) goes to its kind, or to the nearest enclosing event's kind; time in a task
 * outside any known event is "other". Tasks are counted when they start in the window.
 */
function breakdown(spans, from, to) {
  const totals = { cpu: 0, js: 0, gc: 0, layout: 0, paint: 0, other: 0 };
  const tasks = [];
  const stack = [];
  const pop = (until) => {
    while (stack.length && stack[stack.length - 1].end <= until) {
      const s = stack.pop();
      const self = Math.max(0, s.tdur - s.childCpu);
      if (s.counted) totals[s.kind] += self;
    }
  };
  for (const s of spans) {
    pop(s.ts);
    const parent = stack[stack.length - 1];
    if (!parent && !TOP.has(s.name)) continue; // outside any task: not main-thread work of a task
    const counted = parent ? parent.counted : s.ts >= from && s.ts <= to;
    if (parent) parent.childCpu += s.tdur;
    else if (counted) {
      totals.cpu += s.tdur;
      tasks.push({ ts: s.ts, dur: s.end - s.ts, cpu: s.tdur, frame: false });
    }
    const kind = kindOf(s.name) ?? parent?.kind ?? "other";
    const entry = { ...s, kind, childCpu: 0, counted, task: parent ? parent.task : tasks[tasks.length - 1] };
    if (counted && (s.name === "Layout" || s.name === "PrePaint") && entry.task) entry.task.frame = true;
    if (counted && s.name === "Layout" && entry.task) entry.task.layout = (entry.task.layout ?? 0) + s.tdur;
    stack.push(entry);
  }
  pop(Infinity);
  return { totals, tasks };
}

const threadNames = (events) => {
  const names = new Map();
  for (const e of events) if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args?.name);
  return names;
};

/**
 * The page's figures between `from` and `to`: two user-timing mark names ("ui-start", "ui-end") or, for
 * `from`, null (the first task of the renderer's main thread in the trace: a cold run from navigation).
 */
export function analyse(events, { from = "ui-start", to = "ui-end" } = {}) {
  const end = events.find((e) => e.name === to && (e.cat ?? "").includes("blink.user_timing"));
  if (!end) throw new Error(`trace has no "${to}" mark`);
  const pid = end.pid;
  const names = threadNames(events);
  let mainTid;
  for (const [key, name] of names) if (name === "CrRendererMain" && key.startsWith(`${pid}:`)) mainTid = Number(key.split(":")[1]);
  if (mainTid === undefined) mainTid = end.tid;
  const spans = threadSpans(events, pid, mainTid);
  let start;
  if (from) {
    const mark = events.find((e) => e.name === from && e.pid === pid && (e.cat ?? "").includes("blink.user_timing"));
    if (!mark) throw new Error(`trace has no "${from}" mark`);
    start = mark.ts;
  } else start = spans.find((s) => TOP.has(s.name))?.ts ?? end.ts;
  const { totals, tasks } = breakdown(spans, start, end.ts);
  // Worker threads of the same renderer (the agent's worker): their tasks' CPU time in the window.
  let workerCpu = 0;
  for (const [key, name] of names) {
    if (!key.startsWith(`${pid}:`) || !/Worker/.test(name ?? "") || /Compositor|ThreadPool/.test(name)) continue;
    const tid = Number(key.split(":")[1]);
    for (const s of threadSpans(events, pid, tid)) if (TOP.has(s.name) && s.ts >= start && s.ts <= end.ts) workerCpu += s.tdur;
  }
  let heap = 0;
  for (const e of events) {
    if (e.name === "UpdateCounters" && e.pid === pid && e.ts >= start && e.ts <= end.ts) heap = Math.max(heap, e.args?.data?.jsHeapSizeUsed ?? 0);
  }
  const long = tasks.filter((t) => t.dur >= 50_000);
  // Rendering frames (tasks that laid out or pre-painted): their CPU time, early in the answer and late.
  const frames = tasks.filter((t) => t.frame);
  const quarter = (k) => frames.filter((t) => t.ts >= start + ((end.ts - start) * k) / 4 && t.ts < start + ((end.ts - start) * (k + 1)) / 4);
  const med = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] : 0);
  const ms = (us) => us / 1000;
  return {
    wall: ms(end.ts - start),
    cpu: ms(totals.cpu),
    js: ms(totals.js),
    gc: ms(totals.gc),
    layout: ms(totals.layout),
    paint: ms(totals.paint),
    other: ms(totals.other),
    workerCpu: ms(workerCpu),
    longTasks: long.length,
    longestTask: ms(Math.max(0, ...tasks.map((t) => t.dur))),
    frames: frames.length,
    earlyFrame: ms(med(quarter(0).map((t) => t.cpu))),
    lateFrame: ms(med(quarter(3).map((t) => t.cpu))),
    earlyLayout: ms(med(quarter(0).map((t) => t.layout ?? 0))),
    lateLayout: ms(med(quarter(3).map((t) => t.layout ?? 0))),
    heapPeak: heap,
  };
}
