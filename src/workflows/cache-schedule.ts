import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { BuiltContext } from '../context/build-context';
import type { CacheHints } from '../context/cache-breakpoints';
import { CACHE_TTL_MS_OF } from '../context/cache-cost';
import { overPeak, requestTokensWith, tailWorthWriting, ttlBeforeWait } from '../context/cache-schedule-rule';
import { clearingTrigger, idsToClear, type ClearingTrigger } from '../context/clearing';
import { leanTokens } from '../context/references';
import type { CacheScheduleSettings, CarriedState, InvestigationSettings } from '../schemas/investigation';
import type { Run } from './state';

/** This step's request as built with the current cleared set, and the live tail it came from. */
export interface StepView {
  built: BuiltContext;
  tail: readonly MessageParam[];
}

// The cache-optimal schedule inside the workflow (src/context/cache-schedule-rule.ts says why it
// is the optimum's online form): a batch when the request would pass the peak or the cache has
// gone cold, no cache write of a tail the next step's batch would rewrite, and the hour's TTL
// before a wait on a person when the cost model says it pays. Runs with a fixed batch interval
// configured clear as they always did.

/** The strategy a run's settings choose, as the console names it. */
export function strategyName(settings: InvestigationSettings, scheduled: boolean): string {
  if (settings.thinking) return 'server-side context editing (clear_tool_uses_20250919, keeps thinking valid)';
  if (scheduled && settings.cacheSchedule) return `cache-optimal clearing under ${settings.cacheSchedule.peakTokens.toLocaleString('en-US')} tokens (keep ${settings.keepRecent})`;
  return `a clearing batch every ${settings.clearEvery} steps and on a cold cache (keep ${settings.keepRecent})`;
}

/** The request's size now, after a batch now, and what the last step added. */
function sizes(s: CarriedState, keepRecent: number, { built, tail }: StepView) {
  let lastReply = tail.length;
  for (let i = tail.length - 1; i >= 0; i -= 1) {
    if (tail[i]!.role === 'assistant') {
      lastReply = i;
      break;
    }
  }
  return {
    now: requestTokensWith(built, new Set(s.clearedIds)),
    ifCleared: requestTokensWith(built, new Set(idsToClear(tail, keepRecent))),
    growth: leanTokens(tail.slice(lastReply)),
  };
}

/** Why a batch runs before this step under the schedule, or null. */
export function scheduledTrigger(s: CarriedState, settings: InvestigationSettings, schedule: CacheScheduleSettings, now: number, view: () => StepView): ClearingTrigger | null {
  // An hour's entry keeps the cache warm for an hour: only past that is it cold.
  const cacheTtlMs = s.cache?.lastTtl === '1h' ? CACHE_TTL_MS_OF['1h'] : settings.cacheTtlMs;
  const cold = clearingTrigger({ step: s.step, lastBatchStep: s.lastBatchStep, clearEvery: 0, lastModelCallAt: s.lastModelCallAt, now, cacheTtlMs });
  if (cold) return cold;
  const size = sizes(s, settings.keepRecent, view());
  return overPeak({ tokensIfUnchanged: size.now, tokensIfCleared: size.ifCleared, peakTokens: schedule.peakTokens }) ? 'over_budget' : null;
}

/** The cache hints for this step's request (after any batch), or none for runs without the schedule. */
export function cacheHintsFor(run: Run, view: StepView): CacheHints | undefined {
  const schedule = run.cacheSchedule;
  // With thinking on the API clears, not the schedule, so there is no batch to plan the tail around.
  if (!schedule || run.settings.thinking) return undefined;
  const { s, settings } = run;
  const size = sizes(s, settings.keepRecent, view);
  // A refund waits on a person once this turn ends: the hour's TTL keeps the context for the answer when that pays.
  if (s.pending) {
    const ttl = ttlBeforeWait({
      contextTokens: size.now,
      writtenTokens: size.growth,
      clearedTokens: size.ifCleared,
      withinHourShare: schedule.withinHourShare,
      prices: settings.prices,
    });
    if (ttl === '1h') return { ttl, writeTail: true };
  }
  return { writeTail: tailWorthWriting({ contextTokens: size.now, stepGrowthTokens: size.growth, tokensIfCleared: size.ifCleared, peakTokens: schedule.peakTokens }) };
}
