import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { costBreakdown, totalInputTokens } from '../../context/accounting';
import { idsToClear } from '../../context/clearing';
import { estimateTokens } from '../../context/tokens';
import { STUB } from '../../context/wire';
import type { PriceTable } from '../../schemas/model';
import type { StepRecord } from '../../schemas/investigation';
import { marksOf } from './chart';

// What a run would have cost had no clearing batch run: each batch's cleared results, back in
// every later request at their full size. An estimate from the transcript (which keeps every
// result word for word), priced as uncached input, the price a changed prefix pays; the
// measured figures are the run's own usage.

/** The estimate: extra tokens and what they would have cost. */
export interface NoClearingEstimate {
  extraInputTokens: number;
  extraCostUsd: number;
}

function resultTokens(transcript: readonly MessageParam[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const message of transcript) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const text = typeof block.content === 'string' ? block.content : (block.content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('');
      sizes.set(block.tool_use_id, Math.max(0, estimateTokens(text) - estimateTokens(STUB)));
    }
  }
  return sizes;
}

/** The transcript as it stood before the `n`th model call (the messages before the nth assistant message). */
function before(transcript: readonly MessageParam[], n: number): MessageParam[] {
  let seen = 0;
  for (let i = 0; i < transcript.length; i++) {
    if (transcript[i]?.role === 'assistant' && ++seen === n) return transcript.slice(0, i);
  }
  return [...transcript];
}

/** Tokens each step would have sent on top of what it did, had no batch cleared anything. */
function extraPerStep(steps: readonly StepRecord[], transcript: readonly MessageParam[], keepRecent: number): number[] {
  const sizes = resultTokens(transcript);
  const assistantCount = transcript.filter((m) => m.role === 'assistant').length;
  const offset = assistantCount - steps.length;
  const cleared = new Set<string>();
  return steps.map((step, i) => {
    if (marksOf(step).clearing) for (const id of idsToClear(before(transcript, i + offset + 1), keepRecent)) cleared.add(id);
    let extra = 0;
    for (const id of cleared) extra += sizes.get(id) ?? 0;
    return extra;
  });
}

/** The estimate for the steps this transcript holds; `keepRecent` as the run's settings say. */
export function noClearingEstimate(steps: readonly StepRecord[], transcript: readonly MessageParam[], keepRecent: number, prices: PriceTable): NoClearingEstimate {
  const extra = extraPerStep(steps, transcript, keepRecent).reduce((n, x) => n + x, 0);
  return { extraInputTokens: extra, extraCostUsd: (extra * prices.input_per_mtok) / 1_000_000 };
}

/** What the run's input cost against what it would have cost with no clearing, both with the prompt cache. */
export interface CachedComparison {
  inputUsd: number;
  noClearingInputUsd: number;
  /** Positive: clearing saved this much; negative: it cost this much more. */
  savingUsd: number;
}

/**
 * The run's input cost beside an estimate of the same run with no clearing, priced as the cache
 * bills it: with nothing cleared each request is the previous one plus what the step added, so
 * it reads the previous request at the read price and writes the rest. A cleared run rewrites
 * what follows each batch, which is why clearing saves less than the uncached estimate says,
 * and can cost more.
 */
export function cachedComparison(steps: readonly StepRecord[], transcript: readonly MessageParam[], keepRecent: number, prices: PriceTable): CachedComparison {
  const extra = extraPerStep(steps, transcript, keepRecent);
  const perToken = prices.input_per_mtok / 1_000_000;
  let previous = 0;
  let noClearing = 0;
  let actual = 0;
  steps.forEach((step, i) => {
    const full = totalInputTokens(step.usage) + (extra[i] ?? 0);
    const read = Math.min(previous, full);
    noClearing += perToken * (read * prices.cache_read_multiplier + (full - read) * prices.cache_write_multiplier);
    const cost = costBreakdown(step.usage, prices);
    actual += cost.total_usd - cost.output_usd;
    previous = full;
  });
  return { inputUsd: actual, noClearingInputUsd: noClearing, savingUsd: noClearing - actual };
}
