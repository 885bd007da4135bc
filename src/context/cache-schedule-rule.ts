import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { PriceTable } from '../schemas/model';
import { DEFAULT_CACHE_WRITE_1H_MULTIPLIER, type CacheTtl } from './cache-cost';
import type { LeanBlock } from './references';
import { estimateBlockTokens, estimateSystemTokens, estimateTokens, estimateToolTokens } from './tokens';
import { STUB } from './wire';

// The online form of the cache-optimal schedule, for the workflow, which cannot see the future.
// The chooser (clearing-schedule.ts) finds that under a peak bound the cheapest schedules have
// as few batches as the bound allows: every batch rewrites the kept tail at the write price, so
// fewer batches cost less, and the bound alone decides how few (where within the bound's slack
// each falls moves the cost by well under a cent). The workflow therefore clears when this
// request would pass the bound (or the cache has gone cold, when clearing is free), and does
// not write the tail to the cache on a step whose successor will clear: that write would never
// be read. `bench context` prices this rule beside the offline optimum ($0.998 against $0.994
// on the design text's 30 steps).

/** The peak bound the schedule keeps every request under, by default (CASEWORK_CONTEXT_PEAK_TOKENS). */
export const DEFAULT_PEAK_TOKENS = 30_000;

/** Tokens a request would send with the results named in `cleared` as placeholders (skeleton blocks count their whole bodies). */
export function requestTokensWith(request: { system: readonly TextBlockParam[]; tools: readonly Tool[]; messages: readonly MessageParam[] }, cleared: ReadonlySet<string>): number {
  let sum = estimateSystemTokens(request.system) + request.tools.reduce((n, t) => n + estimateToolTokens(t), 0);
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      sum += estimateTokens(message.content);
      continue;
    }
    for (const block of message.content as LeanBlock[]) {
      if (block.type === 'tool_result' && cleared.has(block.tool_use_id)) sum += estimateTokens(STUB);
      else sum += block.tokens ?? estimateBlockTokens(block);
    }
  }
  return sum;
}

/**
 * Whether a clearing batch runs before this request under the peak bound: when the request
 * would pass it. A batch that cannot bring the request back under the bound (the placeholders
 * alone pass it, which is compaction's job) runs only when it frees at least half the bound,
 * so a long run is not charged a rewrite of its tail on every call.
 */
export function overPeak(v: { tokensIfUnchanged: number; tokensIfCleared: number; peakTokens: number }): boolean {
  if (v.tokensIfUnchanged <= v.peakTokens) return false;
  return v.tokensIfCleared <= v.peakTokens || v.tokensIfUnchanged - v.tokensIfCleared >= v.peakTokens / 2;
}

/**
 * Whether this step's tail is worth writing to the cache: not when the next request, grown as
 * much as this step grew, will clear (overPeak), since a batch rewrites the tail anyway.
 * `tokensIfCleared` is this request with all but the kept results cleared.
 */
export function tailWorthWriting(v: { contextTokens: number; stepGrowthTokens: number; tokensIfCleared: number; peakTokens: number }): boolean {
  return !overPeak({ tokensIfUnchanged: v.contextTokens + Math.max(0, v.stepGrowthTokens), tokensIfCleared: v.tokensIfCleared, peakTokens: v.peakTokens });
}

/**
 * The TTL for the last call before a wait on a person. An hour's entry costs the write premium
 * (2x instead of 1.25x) on what this call writes; it pays when the answer comes inside the
 * hour (the share given), because the next call then reads the whole context at 0.1x instead
 * of clearing on a cold cache and writing the cleared context at 1.25x.
 */
export function ttlBeforeWait(v: { contextTokens: number; writtenTokens: number; clearedTokens: number; withinHourShare: number; prices: PriceTable }): CacheTtl {
  const { prices } = v;
  const premium = v.writtenTokens * ((prices.cache_write_1h_multiplier ?? DEFAULT_CACHE_WRITE_1H_MULTIPLIER) - prices.cache_write_multiplier);
  const saving = v.withinHourShare * (v.clearedTokens * prices.cache_write_multiplier - v.contextTokens * prices.cache_read_multiplier);
  return saving > premium ? '1h' : '5m';
}
