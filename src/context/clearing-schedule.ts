import type { PriceTable } from '../schemas/model';
import { messageBreakpoints, type CacheHints, type MessageShape } from './cache-breakpoints';
import { API_CACHE_RULES, createCacheCostModel, summarise, type CacheRules, type CacheTtl, type CostBlock, type CostCall, type PricedCall, type PricedRun } from './cache-cost';

// The clearing schedule, chosen by the cache cost model. A workload is described by its step
// shapes (what each reply and its results add, and what a result shrinks to once cleared);
// a schedule is the set of calls before which a clearing batch runs, each batch clearing all
// but the last `keepRecent` results (the design text's keep-3 rule). Requests are built with
// the same breakpoint placement as the real ones (messageBreakpoints), so a schedule's price
// is what the API would bill, and the chooser finds the cheapest schedule under a peak bound.

/** What one step adds: the reply's blocks and the tool results that answer it. */
export interface StepShape {
  /** Tokens of each block of the assistant reply (text first, then its tool_use blocks). */
  reply: readonly number[];
  /** Each tool result: its tokens, and its tokens once cleared (the placeholder). */
  results: readonly { tokens: number; clearedTokens: number }[];
}

/** A run to schedule: call n sends the base, the opening and steps 1..n-1. */
export interface ScheduleWorkload {
  /** Tools then system blocks: cached by the system breakpoint, never cleared. */
  base: readonly number[];
  /** The opening user message's blocks. */
  opening: readonly number[];
  /** Step k's shape at index k-1; at least `callTimes.length - 1` of them. */
  steps: readonly StepShape[];
  /** When each call is made (ms): one entry a call. */
  callTimes: readonly number[];
  keepRecent: number;
}

/** How a schedule is priced. */
export interface ScheduleOptions {
  prices: PriceTable;
  rules?: CacheRules;
  /** Leave the tail unwritten on the call before a batch and on the last call (those writes would never be read). */
  skipTailBeforeBatch?: boolean;
  /** The TTL of call n's breakpoints (1-based); five minutes when absent. */
  ttlOf?: (call: number) => CacheTtl;
}

/** Results sent by call n (1-based): those of steps 1..n-1. */
function resultsBefore(w: ScheduleWorkload, call: number): number {
  let n = 0;
  for (let k = 0; k < call - 1; k += 1) n += w.steps[k]!.results.length;
  return n;
}

/** How many results a batch before call n clears: all but the last keepRecent. */
export function clearedByBatchAt(w: ScheduleWorkload, call: number): number {
  return Math.max(0, resultsBefore(w, call) - w.keepRecent);
}

/** A server-side compaction in effect: the summary made at call `at` replaces everything before that call's reply. */
export interface Compacted {
  at: number;
  summaryTokens: number;
}

/** Call n's request as the cache sees it, with `cleared` results cleared, and its breakpoints; after a compaction, as the API keeps it. */
export function requestAt(w: ScheduleWorkload, call: number, cleared: number, hints: CacheHints = {}, compacted?: Compacted): CostCall {
  const blocks: { key: string; tokens: number }[] = [];
  w.base.forEach((tokens, i) => blocks.push({ key: `base${i}`, tokens }));
  const baseEnd = blocks.length - 1;
  const shapes: MessageShape[] = compacted ? [] : [{ role: 'user', blocks: w.opening.map(() => ({ type: 'text' })) }];
  const firstOf: number[] = compacted ? [] : [blocks.length];
  if (!compacted) w.opening.forEach((tokens, i) => blocks.push({ key: `open${i}`, tokens }));
  let result = 0;
  for (let k = 1; k < call; k += 1) {
    const step = w.steps[k - 1]!;
    if (compacted && k < compacted.at) {
      result += step.results.length;
      continue;
    }
    // The compaction block leads the reply of the call that made it.
    const summary = compacted && k === compacted.at;
    firstOf.push(blocks.length);
    shapes.push({ role: 'assistant', blocks: [...(summary ? [{ type: 'compaction' }] : []), ...step.reply.map((_, j) => ({ type: j === 0 ? 'text' : 'tool_use' }))] });
    if (summary) blocks.push({ key: `summary${compacted.at}`, tokens: compacted.summaryTokens });
    step.reply.forEach((tokens, j) => blocks.push({ key: `reply${k}.${j}`, tokens }));
    firstOf.push(blocks.length);
    const resultShapes = step.results.map((r, j) => {
      const isCleared = result < cleared;
      result += 1;
      blocks.push({ key: `result${k}.${j}${isCleared ? ':cleared' : ''}`, tokens: isCleared ? r.clearedTokens : r.tokens });
      return { type: 'tool_result', ...(isCleared ? { cleared: true } : {}) };
    });
    shapes.push({ role: 'user', blocks: resultShapes });
  }
  const ttl = hints.ttl ?? '5m';
  const marked = new Set<number>([baseEnd, ...messageBreakpoints(shapes, hints).map(([m, b]) => firstOf[m]! + b)]);
  return { at: w.callTimes[call - 1]!, blocks: blocks.map((b, i): CostBlock => (marked.has(i) ? { ...b, breakpoint: ttl } : b)) };
}

/** Total tokens of a request. */
export function requestTokens(call: CostCall): number {
  return call.blocks.reduce((n, b) => n + b.tokens, 0);
}

/** A priced schedule: the batches and every call's bill. */
export interface PricedSchedule extends PricedRun {
  batches: number[];
}

/** Prices a run under a schedule (the calls before which a batch runs), exactly, from an empty cache. */
export function priceSchedule(w: ScheduleWorkload, batches: readonly number[], options: ScheduleOptions): PricedSchedule {
  const model = createCacheCostModel(options.prices, options.rules ?? API_CACHE_RULES);
  const batchSet = new Set(batches);
  const priced: PricedCall[] = [];
  let cleared = 0;
  for (let n = 1; n <= w.callTimes.length; n += 1) {
    if (batchSet.has(n)) cleared = clearedByBatchAt(w, n);
    const writeTail = !(options.skipTailBeforeBatch && (batchSet.has(n + 1) || n === w.callTimes.length));
    priced.push(model.price(requestAt(w, n, cleared, { writeTail, ttl: options.ttlOf?.(n) ?? '5m' })));
  }
  return { ...summarise(priced), batches: [...batches].sort((a, b) => a - b) };
}

/** The cheapest schedule under a peak bound, or null when no schedule keeps every request under it. */
export function chooseSchedule(w: ScheduleWorkload, options: ScheduleOptions & { peakTokens: number }): PricedSchedule | null {
  const calls = w.callTimes.length;
  const rules = options.rules ?? API_CACHE_RULES;
  const skip = options.skipTailBeforeBatch ?? true;
  const memo = new Map<string, { cost: number; next: number } | null>();

  // Calls b.. under a batch at b (0: none yet) that followed one at b0, priced on a cache that
  // holds what calls b0..b-1 left; [i] is the cost of calls b..b+i when call b+i+1 is a batch
  // or, at the run's end, is the last call (either way its tail unwritten).
  function segment(b0: number, b: number): number[] {
    const model = createCacheCostModel(options.prices, rules);
    const start = Math.max(b0, 1);
    let cleared = b0 > 0 ? clearedByBatchAt(w, b0) : 0;
    const ttl = (n: number) => options.ttlOf?.(n) ?? '5m';
    for (let n = start; n < Math.max(b, 1); n += 1) model.price(requestAt(w, n, cleared, { writeTail: !(skip && n === b - 1), ttl: ttl(n) }));
    if (b > 0) cleared = clearedByBatchAt(w, b);
    const costs: number[] = [];
    let sum = 0;
    for (let n = Math.max(b, 1); n <= calls; n += 1) {
      const full = requestAt(w, n, cleared, { ttl: ttl(n) });
      if (requestTokens(full) > options.peakTokens) break;
      // Before a batch, or at the run's end, nothing will read this call's tail.
      const lastBeforeBatch = skip ? model.peek(requestAt(w, n, cleared, { writeTail: false, ttl: ttl(n) })).input_usd : null;
      const priced = model.price(full).input_usd;
      costs.push(sum + (lastBeforeBatch ?? priced));
      sum += priced;
    }
    return costs;
  }

  function best(b0: number, b: number): { cost: number; next: number } | null {
    const key = `${b0},${b}`;
    if (memo.has(key)) return memo.get(key)!;
    const costs = segment(b0, b);
    const first = Math.max(b, 1);
    let choice: { cost: number; next: number } | null = null;
    costs.forEach((cost, i) => {
      const last = first + i;
      if (last === calls) {
        if (!choice || cost < choice.cost) choice = { cost, next: calls + 1 };
        return;
      }
      const rest = best(b, last + 1);
      if (rest && (!choice || cost + rest.cost < choice.cost)) choice = { cost: cost + rest.cost, next: last + 1 };
    });
    memo.set(key, choice);
    return choice;
  }

  const plan = best(0, 0);
  if (!plan) return null;
  const batches: number[] = [];
  let previous = 0;
  for (let next = plan.next; next <= calls;) {
    batches.push(next);
    const key = `${previous},${next}`;
    previous = next;
    next = memo.get(key)!.next;
  }
  return priceSchedule(w, batches, { ...options, skipTailBeforeBatch: skip });
}
