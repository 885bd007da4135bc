import type { PriceTable } from '../../context/accounting';
import { createCacheCostModel, summarise, type CacheTtl, type PricedCall } from '../../context/cache-cost';
import { CACHE_TTL_MS, clearingTrigger } from '../../context/clearing';
import { chooseSchedule, clearedByBatchAt, requestAt, requestTokens, type Compacted, type PricedSchedule, type ScheduleWorkload } from '../../context/clearing-schedule';
import { COMPACTION_MIN_TRIGGER } from '../../context/server-context';
import { overPeak, tailWorthWriting, ttlBeforeWait } from '../../context/cache-schedule-rule';

// The schedule tables of `bench context`: the design text's workload at 30, 100 and 300 steps,
// every policy priced by the exact cache cost model (src/context/cache-cost.ts), today's
// policies with today's breakpoints (tools, rules, end) beside the cache-optimal schedule
// (chosen offline, knowing the run's length) and the online rule the workflow runs.

/** What a policy sees before each call. */
export interface ScheduleView {
  call: number;
  lastBatch: number;
  lastCallAt: number | null;
  lastTtlMs: number;
  now: number;
  tokensIfUnchanged: number;
  /** What the last step added (the next one is expected to add as much). */
  stepGrowth: number;
  /** A wait on a person follows this call. */
  waitFollows: boolean;
  /** Tokens after a batch now, for the wait TTL decision. */
  tokensIfCleared: number;
}

/** A policy's choice for one call. */
export interface ScheduleChoice {
  clear: boolean;
  writeTail?: boolean;
  ttl?: CacheTtl;
}

/** A named policy over the schedule model. */
export interface SchedulePolicy {
  name: string;
  /** Today's placement: a breakpoint on the last tool, the rules and the end only. */
  legacyBreakpoints?: boolean;
  decide(view: ScheduleView): ScheduleChoice;
}

/** The peak the cache-optimal rows keep every request under (the bound). */
export const SCHEDULE_PEAK = 30_000;

/** Share of waits on a person answered within the hour that the wait-TTL rule assumes in the bench. */
export const BENCH_WITHIN_HOUR_SHARE = 0.5;

/** The policies of the schedule tables: today's three, then the workflow's online rule. */
export function schedulePolicies(prices: PriceTable, peak = SCHEDULE_PEAK): SchedulePolicy[] {
  const cold = (v: ScheduleView) => v.lastCallAt !== null && v.now - v.lastCallAt > v.lastTtlMs;
  return [
    { name: "no clearing (today's breakpoints)", legacyBreakpoints: true, decide: () => ({ clear: false }) },
    {
      name: 'batch every 10 + cold cache (today)',
      legacyBreakpoints: true,
      decide: (v) => ({
        clear: clearingTrigger({ step: v.call, lastBatchStep: v.lastBatch, clearEvery: 10, lastModelCallAt: v.lastCallAt, now: v.now, cacheTtlMs: CACHE_TTL_MS }) !== null,
      }),
    },
    {
      name: 'over 40k + cold cache (today)',
      legacyBreakpoints: true,
      decide: (v) => ({
        clear:
          clearingTrigger({
            step: v.call,
            lastBatchStep: v.lastBatch,
            clearEvery: 0,
            lastModelCallAt: v.lastCallAt,
            now: v.now,
            cacheTtlMs: CACHE_TTL_MS,
            clearAboveTokens: 40_000,
            contextTokens: v.tokensIfUnchanged,
          }) !== null,
      }),
    },
    {
      name: `online rule, peak ${peak / 1000}k (the workflow's)`,
      decide: (v) => {
        const clear = cold(v) || overPeak({ ...v, peakTokens: peak });
        const now = clear ? v.tokensIfCleared : v.tokensIfUnchanged;
        const ttl = v.waitFollows
          ? ttlBeforeWait({ contextTokens: now, writtenTokens: v.stepGrowth, clearedTokens: v.tokensIfCleared, withinHourShare: BENCH_WITHIN_HOUR_SHARE, prices })
          : '5m';
        return {
          clear,
          ttl,
          writeTail: v.waitFollows || tailWorthWriting({ contextTokens: now, stepGrowthTokens: v.stepGrowth, tokensIfCleared: v.tokensIfCleared, peakTokens: peak }),
        };
      },
    },
  ];
}

/** A wait on a person after one call: how long it lasts. */
export interface Wait {
  afterCall: number;
  ms: number;
}

/** The workload with a wait inserted after a call (every later call moves by the wait). */
export function withWait(w: ScheduleWorkload, wait: Wait): ScheduleWorkload {
  return { ...w, callTimes: w.callTimes.map((t, i) => (i + 1 > wait.afterCall ? t + wait.ms : t)) };
}

/** Runs a policy call by call on the exact model. */
export function runPolicy(w: ScheduleWorkload, policy: SchedulePolicy, prices: PriceTable, waitAfter?: number): PricedSchedule {
  const model = createCacheCostModel(prices);
  const priced: PricedCall[] = [];
  const batches: number[] = [];
  let cleared = 0;
  let lastBatch = 0;
  let lastCallAt: number | null = null;
  let lastTtlMs = CACHE_TTL_MS;
  let previousTokens = 0;
  for (let call = 1; call <= w.callTimes.length; call += 1) {
    const now = w.callTimes[call - 1]!;
    const tokensIfUnchanged = requestTokens(requestAt(w, call, cleared));
    const tokensIfCleared = requestTokens(requestAt(w, call, clearedByBatchAt(w, call)));
    const view: ScheduleView = {
      call,
      lastBatch,
      lastCallAt,
      lastTtlMs,
      now,
      tokensIfUnchanged,
      tokensIfCleared,
      stepGrowth: call > 1 ? tokensIfUnchanged - previousTokens : 0,
      waitFollows: call === waitAfter,
    };
    const choice = policy.decide(view);
    if (choice.clear && clearedByBatchAt(w, call) > cleared) {
      cleared = clearedByBatchAt(w, call);
      lastBatch = call;
      batches.push(call);
    }
    const request = requestAt(w, call, cleared, { writeTail: choice.writeTail ?? true, ttl: choice.ttl ?? '5m' });
    const sent = policy.legacyBreakpoints ? legacy(request) : request;
    priced.push(model.price(sent));
    previousTokens = requestTokens(sent);
    lastCallAt = now;
    lastTtlMs = choice.ttl === '1h' ? 3_600_000 : CACHE_TTL_MS;
  }
  return { ...summarise(priced), batches };
}

/** Today's placement on the same request: the last tool, the rules (the base's last block) and the end. */
function legacy(request: ReturnType<typeof requestAt>): ReturnType<typeof requestAt> {
  const blocks = request.blocks.map(({ breakpoint: _drop, ...b }) => b);
  const baseEnd = blocks.findIndex((b) => b.key.startsWith('open')) - 1;
  const marks = new Set([baseEnd - 1, baseEnd, blocks.length - 1]);
  return { ...request, blocks: blocks.map((b, i) => (marks.has(i) ? { ...b, breakpoint: '5m' as const } : b)) };
}

/** Server-side context editing as the API applies it: on every request, from the full history the client sends. */
export const SERVER_EDITING = Object.freeze({ triggerInputTokens: 30_000, clearAtLeastTokens: 10_000 });

/** Server-side compaction at the lowest trigger the API allows, and the summary size the bench assumes (the design's CaseNotes budget). */
export const SERVER_COMPACTION = Object.freeze({ triggerInputTokens: COMPACTION_MIN_TRIGGER, summaryTokens: 2_000 });

/**
 * Anthropic's context editing (clear_tool_uses_20250919, keep 3) priced by the same model. The
 * client sends the whole history every time and the API clears it afresh: past the trigger,
 * whenever a clearing frees `clear_at_least`, every request goes out with all but the last three
 * results cleared, so the cleared part grows by a result a call and the kept tail is rewritten
 * on each, as when clearing every call.
 */
export function runServerEditing(w: ScheduleWorkload, prices: PriceTable): PricedSchedule {
  const model = createCacheCostModel(prices);
  const priced: PricedCall[] = [];
  const batches: number[] = [];
  for (let call = 1; call <= w.callTimes.length; call += 1) {
    const full = requestAt(w, call, 0);
    const cleared = requestAt(w, call, clearedByBatchAt(w, call));
    const edits = requestTokens(full) > SERVER_EDITING.triggerInputTokens && requestTokens(full) - requestTokens(cleared) >= SERVER_EDITING.clearAtLeastTokens;
    if (edits) batches.push(call);
    priced.push(model.price(edits ? cleared : full));
  }
  return { ...summarise(priced), batches };
}

/**
 * Anthropic's compaction (compact_20260112) priced by the same model: once a request passes the
 * trigger, that call reads it whole to write the summary (billed as output), then continues on
 * the tools, rules and summary alone; later requests start from the summary. The summary's
 * output is added to the input cost, so the row compares like with like.
 */
export function runServerCompaction(w: ScheduleWorkload, prices: PriceTable): PricedSchedule {
  const model = createCacheCostModel(prices);
  const priced: PricedCall[] = [];
  const batches: number[] = [];
  let compacted: Compacted | undefined;
  let outputUsd = 0;
  for (let call = 1; call <= w.callTimes.length; call += 1) {
    const request = requestAt(w, call, 0, {}, compacted);
    priced.push(model.price(request));
    if (requestTokens(request) <= SERVER_COMPACTION.triggerInputTokens) continue;
    batches.push(call);
    outputUsd += (SERVER_COMPACTION.summaryTokens * prices.output_per_mtok) / 1_000_000;
    compacted = { at: call, summaryTokens: SERVER_COMPACTION.summaryTokens };
    const base = request.blocks.filter((b) => b.key.startsWith('base'));
    priced.push(model.price({ at: request.at, blocks: [...base, { key: `summary${call}`, tokens: SERVER_COMPACTION.summaryTokens, breakpoint: '5m' }] }));
  }
  const run = summarise(priced);
  return { ...run, input_usd: run.input_usd + outputUsd, batches };
}

/** One row of a schedule table. */
export interface ScheduleRow {
  policy: string;
  batches: number;
  peak_tokens: number;
  total_input_tokens: number;
  cost_usd: number;
  /** The same run with a 30-minute wait on a person after the middle call. */
  cost_with_wait_usd: number;
}

/** One schedule table: a run length and its rows. */
export interface ScheduleTable {
  steps: number;
  peak_bound: number;
  rows: ScheduleRow[];
  /** Set when no keep-3 schedule keeps every request under the bound (the placeholders alone pass it). */
  infeasible?: string;
  /** The strategy the model chooses: the cheapest that keeps the bound, else the cheapest that clears at all. */
  chosen: string;
}

/** The cheapest row that keeps every request under the bound; when none can, the cheapest that clears at all. */
export function chooseStrategy(rows: readonly ScheduleRow[], peak: number): string {
  const cheapest = (xs: readonly ScheduleRow[]) => xs.reduce<ScheduleRow | null>((a, b) => (a === null || b.cost_usd < a.cost_usd ? b : a), null);
  const within = cheapest(rows.filter((r) => r.peak_tokens <= peak));
  return (within ?? cheapest(rows.filter((r) => r.batches > 0)))?.policy ?? 'none';
}

/** Prices every policy on the workload, then the offline optimum under the bound. */
export function scheduleTable(w: ScheduleWorkload, prices: PriceTable, peak = SCHEDULE_PEAK): ScheduleTable {
  const steps = w.callTimes.length;
  const wait: Wait = { afterCall: Math.floor(steps / 2), ms: 30 * 60_000 };
  const waited = withWait(w, wait);
  const rows: ScheduleRow[] = schedulePolicies(prices, peak).map((policy) => {
    const run = runPolicy(w, policy, prices);
    return {
      policy: policy.name,
      batches: run.batches.length,
      peak_tokens: run.peak_tokens,
      total_input_tokens: run.total_tokens,
      cost_usd: run.input_usd,
      cost_with_wait_usd: runPolicy(waited, policy, prices, wait.afterCall).input_usd,
    };
  });
  const server = (name: string, price: (w: ScheduleWorkload) => PricedSchedule): ScheduleRow => {
    const priced = price(w);
    return {
      policy: name,
      batches: priced.batches.length,
      peak_tokens: priced.peak_tokens,
      total_input_tokens: priced.total_tokens,
      cost_usd: priced.input_usd,
      cost_with_wait_usd: price(waited).input_usd,
    };
  };
  rows.push(
    server(`server-side context editing (trigger ${SERVER_EDITING.triggerInputTokens / 1000}k, keep 3)`, (x) => runServerEditing(x, prices)),
    server(`server-side compaction (trigger ${SERVER_COMPACTION.triggerInputTokens / 1000}k, the least allowed)`, (x) => runServerCompaction(x, prices)),
  );
  const best = chooseSchedule(w, { prices, peakTokens: peak });
  if (!best) {
    const floor = requestTokens(requestAt(w, steps, clearedByBatchAt(w, steps)));
    return {
      steps,
      peak_bound: peak,
      rows,
      chosen: chooseStrategy(rows, peak),
      infeasible: `no keep-${w.keepRecent} schedule stays under ${peak.toLocaleString('en-US')} tokens: cleared at step ${steps} the request is still ${floor.toLocaleString('en-US')} (the placeholders add up; compaction is what bounds it)`,
    };
  }
  // Offline, the wait is known: the call before it may take the hour's TTL, and the chooser prices both.
  const waitTtl = (n: number): CacheTtl => (n === wait.afterCall ? '1h' : '5m');
  const bestWait = [chooseSchedule(waited, { prices, peakTokens: peak }), chooseSchedule(waited, { prices, peakTokens: peak, ttlOf: waitTtl })].reduce((a, b) =>
    a && (!b || a.input_usd <= b.input_usd) ? a : b,
  );
  rows.push({
    policy: `cache-optimal, peak ${peak / 1000}k (offline)`,
    batches: best.batches.length,
    peak_tokens: best.peak_tokens,
    total_input_tokens: best.total_tokens,
    cost_usd: best.input_usd,
    cost_with_wait_usd: bestWait?.input_usd ?? Number.NaN,
  });
  return { steps, peak_bound: peak, rows, chosen: chooseStrategy(rows, peak) };
}
