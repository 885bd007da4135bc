import { NO_USAGE, addUsage, type PriceTable, type TokenUsage } from '../schemas/model';

export type { PriceTable } from '../schemas/model';

// Token and cost accounting for model calls, from the API's own usage fields: input_tokens
// is the uncached part only; cache writes and reads are reported beside it.

/** Defaults: $4 per million input tokens, cache write 1.25x, cache read 0.1x, output $20 per million. */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  input_per_mtok: 4,
  output_per_mtok: 20,
  cache_write_multiplier: 1.25,
  cache_read_multiplier: 0.1,
});

/** One call's cost, split the way its tokens are. */
export interface CallCost {
  uncached_usd: number;
  cache_write_usd: number;
  cache_read_usd: number;
  output_usd: number;
  total_usd: number;
}

/** One model call's accounting: input split into uncached, cache write and cache read, plus output. */
export interface CallAccount {
  uncached_input_tokens: number;
  cache_write_tokens: number;
  cache_read_tokens: number;
  output_tokens: number;
  /** Everything the call sent: uncached + cache write + cache read. */
  total_input_tokens: number;
  cost: CallCost;
  /** What the same call would cost with every input token at the full price (no caching). */
  full_price_usd: number;
}

const PER_TOKEN = 1 / 1_000_000;

/** All input tokens one call sent, cached or not. */
export function totalInputTokens(usage: TokenUsage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/** One call's cost, split by kind of token. */
export function costBreakdown(usage: TokenUsage, prices: PriceTable = DEFAULT_PRICES): CallCost {
  const input = prices.input_per_mtok * PER_TOKEN;
  const uncached_usd = usage.input_tokens * input;
  const cache_write_usd = usage.cache_creation_input_tokens * input * prices.cache_write_multiplier;
  const cache_read_usd = usage.cache_read_input_tokens * input * prices.cache_read_multiplier;
  const output_usd = usage.output_tokens * prices.output_per_mtok * PER_TOKEN;
  return { uncached_usd, cache_write_usd, cache_read_usd, output_usd, total_usd: uncached_usd + cache_write_usd + cache_read_usd + output_usd };
}

/** One call's total cost in USD. */
export function costOf(usage: TokenUsage, prices: PriceTable = DEFAULT_PRICES): number {
  return costBreakdown(usage, prices).total_usd;
}

/** One call's cost with every input token charged at the full price, as if nothing were cached. */
export function fullPriceCost(usage: TokenUsage, prices: PriceTable = DEFAULT_PRICES): number {
  return (totalInputTokens(usage) * prices.input_per_mtok + usage.output_tokens * prices.output_per_mtok) * PER_TOKEN;
}

/** The accounting of one model call. */
export function accountCall(usage: TokenUsage, prices: PriceTable = DEFAULT_PRICES): CallAccount {
  return {
    uncached_input_tokens: usage.input_tokens,
    cache_write_tokens: usage.cache_creation_input_tokens,
    cache_read_tokens: usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
    total_input_tokens: totalInputTokens(usage),
    cost: costBreakdown(usage, prices),
    full_price_usd: fullPriceCost(usage, prices),
  };
}

/** Running totals over a run's model calls. JSON-safe. */
export interface UsageTotals {
  calls: number;
  usage: TokenUsage;
  cost_usd: number;
  full_price_usd: number;
  /** The largest input a single call sent. */
  peak_input_tokens: number;
}

/** Totals before any call. */
export function emptyTotals(): UsageTotals {
  return { calls: 0, usage: { ...NO_USAGE }, cost_usd: 0, full_price_usd: 0, peak_input_tokens: 0 };
}

/** Totals after one more call, as a new object. */
export function addCall(totals: UsageTotals, usage: TokenUsage, prices: PriceTable = DEFAULT_PRICES): UsageTotals {
  return {
    calls: totals.calls + 1,
    usage: addUsage(totals.usage, usage),
    cost_usd: totals.cost_usd + costOf(usage, prices),
    full_price_usd: totals.full_price_usd + fullPriceCost(usage, prices),
    peak_input_tokens: Math.max(totals.peak_input_tokens, totalInputTokens(usage)),
  };
}

/** Totals over many calls. */
export function totalsOf(usages: readonly TokenUsage[], prices: PriceTable = DEFAULT_PRICES): UsageTotals {
  return usages.reduce((totals, usage) => addCall(totals, usage, prices), emptyTotals());
}
