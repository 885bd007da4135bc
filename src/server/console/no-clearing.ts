import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
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

/** The estimate for the steps this transcript holds; `keepRecent` as the run's settings say. */
export function noClearingEstimate(steps: readonly StepRecord[], transcript: readonly MessageParam[], keepRecent: number, prices: PriceTable): NoClearingEstimate {
  const sizes = resultTokens(transcript);
  const assistantCount = transcript.filter((m) => m.role === 'assistant').length;
  const offset = assistantCount - steps.length;
  const cleared = new Set<string>();
  let extra = 0;
  steps.forEach((step, i) => {
    if (marksOf(step).clearing) for (const id of idsToClear(before(transcript, i + offset + 1), keepRecent)) cleared.add(id);
    for (const id of cleared) extra += sizes.get(id) ?? 0;
  });
  return { extraInputTokens: extra, extraCostUsd: (extra * prices.input_per_mtok) / 1_000_000 };
}
