import { timelineTable, type FollowUpTimeline } from './capacity-timeline';

// What the capacity bench measured, and how it prints it: one table per run, and both targets.

/** The target the bench states: orchestration on top of the model's own time, p95, for an evicted workflow. */
export const EVICTED_P95_TARGET_MS = 150;

/** Worker memory when `open` cases had been answered. */
export interface RssSample {
  open: number;
  rssMb: number;
  /** The main thread's V8 heap right after a forced full collection (activities, connections); workflows run in a thread of their own, not counted here. */
  heapMb: number;
  cached: number;
  /** With several workers: each one's RSS and cached workflows (the fields above are their sums). */
  perWorker?: { rssMb: number; cached: number }[];
}

/** One worker's part of a run: its memory at the last sample and the evicted cases it resumed. */
export interface WorkerShare {
  worker: number;
  identity: string;
  rssMb: number;
  cached: number;
  /** Follow-ups to evicted cases whose signal's workflow task this worker ran (the replay). */
  evicted: LatencyStats;
}

/** Follow-up-to-reply times of one kind of case, in ms. */
export interface LatencyStats {
  n: number;
  /** Every follow-up got exactly one reply (counted at the desk). */
  replies: number[];
  p50: number;
  p95: number;
  modelP50: number;
  modelP95: number;
  orchestrationP50: number;
  orchestrationP95: number;
}

/** One run: N cases through one worker with one cache size. */
export interface CapacityRun {
  cache: 'default' | number;
  /** Cache slots over every worker. */
  cacheSlots: number;
  workers: WorkerShare[];
  cases: number;
  openSeconds: number;
  loadBefore: number[];
  loadAfter: number[];
  rss: RssSample[];
  cached: LatencyStats;
  evicted: LatencyStats;
  replay: {
    n: number;
    p50: number;
    p95: number;
    events: number;
    /** Per replayed workflow: payloads decrypted, payloads encrypted (the commands made again), payloads fetched from the payload store, and the ms each took. */
    decodedPerWorkflow: number;
    decodeMsPerWorkflow: number;
    encodedPerWorkflow: number;
    encodeMsPerWorkflow: number;
    fetchedPerWorkflow: number;
    fetchMsPerWorkflow: number;
  };
  /** Where each sampled follow-up's time went, from its history's event times. */
  timelines: { cached: FollowUpTimeline[]; evicted: FollowUpTimeline[] };
  /** Sampled histories: sizes, and how many cases lost a workflow task (timed out by the server, e.g. evicted mid-turn). */
  history: { n: number; medianBytes: number; maxBytes: number; medianEvents: number; lostTasks: number; casesLosingTasks: number };
  /** KB of worker RSS per added case while the cache filled, and after it was full (null when it never filled). */
  kbPerCase: { filling: number; full: number | null };
}

/** What the bench returns (and prints as JSON with --json). */
export interface CapacityResult {
  model: string;
  runs: CapacityRun[];
}

/** The printed table of one run. */
export function capacityTable(run: CapacityRun): string[] {
  const lines: string[] = [];
  const n = (v: number) => v.toLocaleString('en-US');
  const cacheText = run.cache === 'default' ? `default (${n(run.cacheSlots)} workflows)` : `${n(run.cacheSlots)} workflows (--cache-size)`;
  const fleet = run.workers.length > 1;
  const who = fleet ? `${run.workers.length} worker processes on one task queue` : 'one worker process';
  lines.push(`Capacity: ${n(run.cases)} open cases, ${who}, workflow cache ${cacheText}${fleet ? ' over all of them' : ''}`);
  lines.push(`  load average (as uptime prints it): ${run.loadBefore.join(' ')} before, ${run.loadAfter.join(' ')} after; cases opened in ${run.openSeconds} s`);
  lines.push('  open cases   cached workflows   worker RSS (MB)   main-thread heap after GC (MB)');
  for (const r of run.rss) lines.push(`  ${n(r.open).padStart(10)}   ${n(r.cached).padStart(16)}   ${r.rssMb.toFixed(1).padStart(15)}   ${r.heapMb.toFixed(1).padStart(30)}`);
  const kb = (v: number | null) => (v === null ? '—' : `${v.toFixed(1)} KB`);
  lines.push(`  RSS per added case: ${kb(run.kbPerCase.filling)} while the cache filled, ${kb(run.kbPerCase.full)} once it was full`);
  lines.push('  follow-up → reply        n   replies each   p50 ms   p95 ms   model p50/p95 ms   orchestration p50 ms   p95 ms');
  const row = (name: string, s: LatencyStats) => {
    const each = s.n === 0 ? '—' : [...new Set(s.replies)].join('/');
    const cell = (v: number) => (s.n === 0 ? '—' : v.toFixed(1));
    lines.push(
      `  ${name.padEnd(22)} ${String(s.n).padStart(3)}   ${each.padStart(12)}   ${cell(s.p50).padStart(6)}   ${cell(s.p95).padStart(6)}   ` +
        `${(s.n === 0 ? '—' : `${s.modelP50.toFixed(2)}/${s.modelP95.toFixed(2)}`).padStart(16)}   ${cell(s.orchestrationP50).padStart(20)}   ${cell(s.orchestrationP95).padStart(6)}`,
    );
  };
  row('cached', run.cached);
  row('evicted (replayed)', run.evicted);
  if (run.cached.n && run.evicted.n) {
    const d = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} ms`;
    lines.push(
      `  evicted over cached: p50 ${d(run.evicted.orchestrationP50 - run.cached.orchestrationP50)}, p95 ${d(run.evicted.orchestrationP95 - run.cached.orchestrationP95)} (the replay at the follow-up)`,
    );
  }
  if (fleet) {
    lines.push('  per worker (last sample)   RSS (MB)   cached   evicted resumed here: n   p50 ms   p95 ms   orchestration p95 ms');
    for (const w of run.workers) {
      const cell = (v: number) => (w.evicted.n === 0 ? '—' : v.toFixed(1));
      lines.push(
        `  worker ${String(w.worker).padEnd(18)} ${w.rssMb.toFixed(1).padStart(8)}   ${n(w.cached).padStart(6)}   ${String(w.evicted.n).padStart(24)}   ${cell(w.evicted.p50).padStart(6)}   ${cell(w.evicted.p95).padStart(6)}   ${cell(w.evicted.orchestrationP95).padStart(20)}`,
      );
    }
  }
  lines.push(
    `  replay (Worker.runReplayHistories): ${run.replay.n} workflows of ${run.replay.events} events (median), p50 ${run.replay.p50} ms, p95 ${run.replay.p95} ms per workflow`,
  );
  const r = run.replay;
  lines.push(
    `  replay's data converter per workflow: ${r.decodedPerWorkflow} payloads decrypted (${r.decodeMsPerWorkflow} ms), ${r.encodedPerWorkflow} encrypted (${r.encodeMsPerWorkflow} ms), ${r.fetchedPerWorkflow} fetched from the payload store (${r.fetchMsPerWorkflow} ms)`,
  );
  lines.push(
    ...timelineTable([
      { name: 'cached', timelines: run.timelines.cached },
      { name: 'evicted', timelines: run.timelines.evicted },
    ]),
  );
  lines.push(
    `  history per case after one follow-up: ${n(run.history.medianBytes)} bytes median, ${n(run.history.maxBytes)} max, ${run.history.medianEvents} events (${run.history.n} cases)`,
    `  workflow tasks lost (timed out by the server, e.g. a case evicted mid-turn): ${run.history.lostTasks} in ${run.history.casesLosingTasks} of the ${run.history.n} sampled cases`,
  );
  lines.push(...targetLines(run));
  return lines;
}

/** The two targets, each met or missed by how much. */
export function targetLines(run: CapacityRun): string[] {
  const { filling, full } = run.kbPerCase;
  const rss =
    full === null
      ? `not measured in this run: the cache (${run.cacheSlots.toLocaleString('en-US')}) did not fill before the last sample`
      : full < filling
        ? `met: ${full.toFixed(1)} KB per case once full, against ${filling.toFixed(1)} KB while filling`
        : `MISSED: ${full.toFixed(1)} KB per case once full, not below ${filling.toFixed(1)} KB while filling`;
  const p95 = run.evicted.orchestrationP95;
  const evicted =
    run.evicted.n === 0
      ? 'not measured in this run: no case was evicted'
      : p95 <= EVICTED_P95_TARGET_MS
        ? `met: ${p95.toFixed(1)} ms`
        : `MISSED by ${(p95 - EVICTED_P95_TARGET_MS).toFixed(1)} ms: ${p95.toFixed(1)} ms`;
  return [
    `  target: RSS grows sub-linearly once the cache is full — ${rss}`,
    `  target: an evicted workflow resumes with p95 ≤ ${EVICTED_P95_TARGET_MS} ms of orchestration on top of the model's own time — ${evicted}`,
  ];
}
