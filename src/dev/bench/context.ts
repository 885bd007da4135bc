import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { createPromptCache } from '../../model/offline/cache';
import { addCall, DEFAULT_PRICES, emptyTotals, type PriceTable, type UsageTotals } from '../../context/accounting';
import { buildContext } from '../../context/build-context';
import { CACHE_TTL_MS, clearingTrigger, idsToClear, KEEP_RECENT } from '../../context/clearing';
import { estimateMessageTokens, estimateRequestTokens, estimateTokens, estimateToolTokens } from '../../context/tokens';
import { CUSTOMER_PREFIX, STUB } from '../../context/wire';
import type { ScheduleWorkload } from '../../context/clearing-schedule';
import { overPeak, tailWorthWriting } from '../../context/cache-schedule-rule';
import { estimateBlockTokens } from '../../context/tokens';
import { SCHEDULE_PEAK, scheduleTable, type ScheduleTable } from './context-schedule';

// The long-investigation scenario (docs/architecture.md, "Working memory"), replayed through the
// project's own clearing, context building, cache simulator and cost code: 3,000 tokens of
// instructions and tools, a 4,000-token tool result each step, 30 steps, the last 3 results
// kept, about 100 tokens left per cleared step. A correctness replay, not a timing test.

/** The scenario's numbers, as in docs/architecture.md. */
export const SCENARIO = Object.freeze({
  steps: 30,
  /** Instructions, tools and the customer's opening message: what step 1 sends. */
  base_tokens: 3_000,
  /** What each step adds: the assistant's short turn with its tool call, plus the tool result. */
  step_tokens: 4_000,
  /** What a step still costs once its result is cleared: the assistant's turn plus the placeholder. */
  cleared_step_tokens: 100,
  keep_recent: KEEP_RECENT,
  /** Workflow time between model calls: well inside the cache TTL. */
  step_interval_ms: 30_000,
  /** The extra column's pause: a wait for a refund approval after this step… */
  pause_after_step: 15,
  /** …lasting an hour, far past the cache TTL. */
  pause_ms: 3_600_000,
});

const SYSTEM_TOKENS = 1_200;
const TOOL_COUNT = 10;
const TOOL_TOKENS = 170;
const STUB_TOKENS = estimateTokens(STUB);
const ASSISTANT_TURN_TOKENS = SCENARIO.cleared_step_tokens - STUB_TOKENS;
const RESULT_TOKENS = SCENARIO.step_tokens - ASSISTANT_TURN_TOKENS;

/** Deterministic filler text whose estimateTokens is exactly `tokens` (four characters a token). */
function filler(tokens: number, seed: string): string {
  if (tokens <= 0) return '';
  const unit = `${seed} tracking event scanned at depot; `;
  return unit.repeat(Math.ceil((tokens * 4) / unit.length)).slice(0, tokens * 4);
}

function sizedTool(index: number): Tool {
  const name = `bench_tool_${index}`;
  const input_schema: Tool['input_schema'] = { type: 'object', properties: {} };
  const rest = TOOL_TOKENS - estimateTokens(name) - estimateTokens(JSON.stringify(input_schema));
  return { name, description: filler(rest, `tool ${index}`), input_schema };
}

function assistantTurn(step: number): MessageParam {
  const use = { type: 'tool_use' as const, id: `toolu_bench_${String(step).padStart(2, '0')}`, name: 'get_tracking_events', input: { order_id: '5102', page: step } };
  const useTokens = estimateTokens(use.name) + estimateTokens(JSON.stringify(use.input));
  return { role: 'assistant', content: [{ type: 'text', text: filler(ASSISTANT_TURN_TOKENS - useTokens, `step ${step} reasoning`) }, use] };
}

function resultMessage(step: number): MessageParam {
  const id = `toolu_bench_${String(step).padStart(2, '0')}`;
  return { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: filler(RESULT_TOKENS, `page ${step}`) }] };
}

/** The scenario's fixed parts: system, tools and the opening message, 3,000 tokens together. */
function scenarioStart(): { system: TextBlockParam[]; tools: Tool[]; opening: MessageParam } {
  const tools = Array.from({ length: TOOL_COUNT }, (_, i) => sizedTool(i + 1));
  const system: TextBlockParam[] = [{ type: 'text', text: filler(SYSTEM_TOKENS, 'rule') }];
  const toolTokens = tools.reduce((n, t) => n + estimateToolTokens(t), 0);
  const prefix = CUSTOMER_PREFIX;
  const openingTokens = SCENARIO.base_tokens - SYSTEM_TOKENS - toolTokens;
  const opening: MessageParam = {
    role: 'user',
    content: [{ type: 'text', text: prefix + filler(openingTokens - estimateTokens(prefix), 'parcel never arrived').slice(0, openingTokens * 4 - prefix.length) }],
  };
  return { system, tools, opening };
}

/** What a policy sees before each step, to decide whether a clearing batch runs now. */
export interface PolicyView {
  step: number;
  lastBatchStep: number;
  lastModelCallAt: number | null;
  now: number;
  /** Tokens this step would send if nothing new were cleared. */
  tokensIfUnchanged: number;
  /** Tokens the last step added. */
  stepGrowth: number;
  /** Tokens this step would send after a batch now. */
  tokensIfCleared: number;
}

/** A clearing policy: when to recompute the set of cleared results. */
export interface ClearingPolicy {
  name: string;
  clearNow(view: PolicyView): boolean;
  /** Whether this step's tail is written to the cache (after any batch); written when absent. */
  writeTail?(view: PolicyView & { tokensNow: number }): boolean;
}

/** Batch threshold for the token-budget policy: clear once a request would pass this. */
export const TOKEN_BUDGET = 40_000;

/** The policies the benchmark compares, in table order. */
export const POLICIES: readonly ClearingPolicy[] = [
  { name: 'no clearing', clearNow: () => false },
  { name: 'clear every call', clearNow: () => true },
  {
    name: 'batch every 10 steps',
    clearNow: (v) => clearingTrigger({ ...v, clearEvery: 10, cacheTtlMs: Number.POSITIVE_INFINITY }) !== null,
  },
  {
    name: 'batch every 10 + cold cache',
    clearNow: (v) => clearingTrigger({ ...v, clearEvery: 10, cacheTtlMs: CACHE_TTL_MS }) !== null,
  },
  {
    name: `batch over ${TOKEN_BUDGET / 1000}k tokens + cold cache`,
    clearNow: (v) => clearingTrigger({ ...v, clearEvery: 0, cacheTtlMs: CACHE_TTL_MS, clearAboveTokens: TOKEN_BUDGET, contextTokens: v.tokensIfUnchanged }) !== null,
  },
  {
    name: `online rule, peak ${SCHEDULE_PEAK / 1000}k`,
    clearNow: (v) => clearingTrigger({ ...v, clearEvery: 0, cacheTtlMs: CACHE_TTL_MS }) !== null || overPeak({ ...v, peakTokens: SCHEDULE_PEAK }),
    writeTail: (v) => tailWorthWriting({ contextTokens: v.tokensNow, stepGrowthTokens: v.stepGrowth, tokensIfCleared: v.tokensIfCleared, peakTokens: SCHEDULE_PEAK }),
  },
];

/** One policy's replay. */
interface Replay {
  tokensAtLastStep: number;
  peakTokens: number;
  totals: UsageTotals;
  batches: number;
}

function replay(policy: ClearingPolicy, prices: PriceTable, pause: boolean): Replay {
  const { system, tools, opening } = scenarioStart();
  const cache = createPromptCache();
  const transcript: MessageParam[] = [opening];
  let clearedIds: string[] = [];
  let lastBatchStep = 0;
  let lastModelCallAt: number | null = null;
  let now = 0;
  let totals = emptyTotals();
  let tokensAtLastStep = 0;
  let batches = 0;
  for (let step = 1; step <= SCENARIO.steps; step += 1) {
    const tokensIfUnchanged = estimateRequestTokens(buildContext({ system, tools, messages: transcript, clearedIds }));
    const tokensIfCleared = estimateRequestTokens(buildContext({ system, tools, messages: transcript, clearedIds: idsToClear(transcript, SCENARIO.keep_recent) }));
    const view = { step, lastBatchStep, lastModelCallAt, now, tokensIfUnchanged, tokensIfCleared, stepGrowth: step > 1 ? tokensIfUnchanged - tokensAtLastStep : 0 };
    if (policy.clearNow(view)) {
      clearedIds = idsToClear(transcript, SCENARIO.keep_recent);
      lastBatchStep = step;
      batches += 1;
    }
    const tokensNow = estimateRequestTokens(buildContext({ system, tools, messages: transcript, clearedIds }));
    const writeTail = policy.writeTail?.({ ...view, tokensNow }) ?? true;
    const request = buildContext({ system, tools, messages: transcript, clearedIds, cache: { writeTail } });
    tokensAtLastStep = estimateRequestTokens(request);
    const usage = cache.account(request, now);
    totals = addCall(totals, usage, prices);
    lastModelCallAt = now;
    transcript.push(assistantTurn(step), resultMessage(step));
    now += SCENARIO.step_interval_ms + (pause && step === SCENARIO.pause_after_step ? SCENARIO.pause_ms : 0);
  }
  return { tokensAtLastStep, peakTokens: totals.peak_input_tokens, totals, batches };
}

/** One row of the table. Costs are input only (the figures); output is the same under every policy. */
export interface ContextBenchRow {
  policy: string;
  tokens_at_step_30: number;
  peak_tokens: number;
  total_input_tokens: number;
  cost_full_price_usd: number;
  cost_with_caching_usd: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Cost with caching when the run also waits an hour (past the cache TTL) after step 15. */
  cost_with_caching_and_pause_usd: number;
  clearing_batches: number;
}

/** The benchmark's result: the scenario and one row per policy. */
export interface ContextBenchResult {
  scenario: typeof SCENARIO;
  prices: PriceTable;
  rows: ContextBenchRow[];
  /** The schedule tables, priced by the exact cache cost model, at 30, 100 and 300 steps. */
  schedules: ScheduleTable[];
}

/** Run lengths of the schedule tables. */
export const SCHEDULE_STEPS = [30, 100, 300] as const;

/** The scenario as step shapes for the cache cost model: the same blocks, sized by the same estimator, `steps` long. */
export function scenarioWorkload(steps: number): ScheduleWorkload {
  const { system, tools, opening } = scenarioStart();
  const openingBlocks = typeof opening.content === 'string' ? [] : opening.content;
  return {
    base: [...tools.map((t) => estimateToolTokens(t)), ...system.map((b) => estimateTokens(b.text))],
    opening: openingBlocks.map((b) => estimateBlockTokens(b)),
    steps: Array.from({ length: steps }, (_, i) => {
      const reply = assistantTurn(i + 1);
      const result = resultMessage(i + 1);
      const blocks = (m: MessageParam) => (typeof m.content === 'string' ? [] : m.content);
      return { reply: blocks(reply).map((b) => estimateBlockTokens(b)), results: blocks(result).map((b) => ({ tokens: estimateBlockTokens(b), clearedTokens: STUB_TOKENS })) };
    }),
    callTimes: Array.from({ length: steps }, (_, i) => i * SCENARIO.step_interval_ms),
    keepRecent: SCENARIO.keep_recent,
  };
}

function scheduleLines(t: ScheduleTable): string[] {
  const header = ['policy', 'batches', 'peak tokens', 'total input tokens', 'cost, with caching', 'with a 30 min wait'];
  const body = t.rows.map((r) => [r.policy, String(r.batches), count(r.peak_tokens), count(r.total_input_tokens), usd(r.cost_usd), usd(r.cost_with_wait_usd)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [
    `${t.steps} steps, peak bound ${count(t.peak_bound)}:`,
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map(line),
    ...(t.infeasible ? [`  (${t.infeasible})`] : []),
    `  chosen by the model: ${t.chosen}`,
  ];
}

const usd = (n: number) => `$${n.toFixed(2)}`;
const count = (n: number) => n.toLocaleString('en-US');

function table(rows: ContextBenchRow[]): string[] {
  const header = ['policy', 'tokens at step 30', 'peak tokens', 'total input tokens', 'cost, full price', 'cost, with caching', 'with caching + 1 h pause'];
  const body = rows.map((r) => [
    r.policy,
    count(r.tokens_at_step_30),
    count(r.peak_tokens),
    count(r.total_input_tokens),
    usd(r.cost_full_price_usd),
    usd(r.cost_with_caching_usd),
    usd(r.cost_with_caching_and_pause_usd),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
}

/**
 * Replays the scenario under each clearing policy and prints one table (or, with `json`, the
 * same table as JSON). Costs are input tokens at $4 per million; "with caching" runs every
 * request through the prompt-cache simulator (writes 1.25x, reads 0.1x).
 */
export function runContextBench(options: { json?: boolean; out: (line: string) => void; prices?: PriceTable }): ContextBenchResult {
  const prices = options.prices ?? DEFAULT_PRICES;
  const rows = POLICIES.map((policy): ContextBenchRow => {
    const plain = replay(policy, prices, false);
    const paused = replay(policy, prices, true);
    const u = plain.totals.usage;
    return {
      policy: policy.name,
      tokens_at_step_30: plain.tokensAtLastStep,
      peak_tokens: plain.peakTokens,
      total_input_tokens: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
      cost_full_price_usd: plain.totals.full_price_usd,
      cost_with_caching_usd: plain.totals.cost_usd,
      cache_read_tokens: u.cache_read_input_tokens,
      cache_write_tokens: u.cache_creation_input_tokens,
      cost_with_caching_and_pause_usd: paused.totals.cost_usd,
      clearing_batches: plain.batches,
    };
  });
  const schedules = SCHEDULE_STEPS.map((steps) => scheduleTable(scenarioWorkload(steps), prices));
  const result: ContextBenchResult = { scenario: SCENARIO, prices, rows, schedules };
  if (options.json) {
    options.out(JSON.stringify(result, null, 2));
    return result;
  }
  options.out(
    `Context benchmark: ${SCENARIO.steps} steps, ${count(SCENARIO.base_tokens)} tokens of instructions and tools, ` +
      `${count(SCENARIO.step_tokens)} tokens per step, last ${SCENARIO.keep_recent} results kept, ${SCENARIO.cleared_step_tokens} tokens per cleared step.`,
  );
  options.out(
    `Input costs at $${prices.input_per_mtok}/M tokens; with caching: writes ${prices.cache_write_multiplier}x, reads ${prices.cache_read_multiplier}x ` +
      `(offline prompt-cache simulator, ${SCENARIO.step_interval_ms / 1000} s between calls; the last column adds a 1 h wait after step ${SCENARIO.pause_after_step}).`,
  );
  for (const line of table(rows)) options.out(line);
  options.out('');
  options.out(
    "Schedules priced by the exact cache cost model (src/context/cache-cost.ts): today's policies with today's breakpoints (last tool, rules, end); " +
      'the online rule and the offline optimum with the planned ones (rules, clearing frontier, previous end, end unless the next step clears). ' +
      'The last column waits 30 minutes on a person after the middle step (the online rule picks the 1 h TTL there when it pays).',
  );
  for (const t of schedules) for (const line of [...scheduleLines(t), '']) options.out(line);
  return result;
}

/** A step's size in this scenario's transcript (exported for the test that checks the synthetic sizes). */
export function scenarioStepTokens(step: number): { assistant: number; result: number } {
  return { assistant: estimateMessageTokens(assistantTurn(step)), result: estimateMessageTokens(resultMessage(step)) };
}

if (require.main === module) {
  runContextBench({ json: process.argv.includes('--json'), out: (line) => console.log(line) });
}
