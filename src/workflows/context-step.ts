import { buildContext, type BuiltContext } from '../context/build-context';
import { costOf } from '../context/accounting';
import { clearingTrigger, idsToClear } from '../context/clearing';
import { chooseSplit } from '../context/split';
import { leanTokens } from '../context/references';
import { compacted, compactionPlan, notesLogged } from './by-reference';
import type { CarriedState, InvestigationSettings } from '../schemas/investigation';
import { addUsage } from '../schemas/model';
import type { Run } from './state';
import { SYSTEM_PROMPT } from './prompt';
import { TOOLS } from './tool-dispatch';
import { mcpDefinitions } from './mcp-tools';
import { scheduledTrigger } from './cache-schedule';
import type { CacheHints } from '../context/cache-breakpoints';

// The context step before each model call: a clearing batch when one is due, compaction when
// the chat has grown long, then the lean request. Both change only what is sent; the
// transcript log keeps every message word for word, and the skeleton (s.transcript) holds the
// live tail that requests are built from.

/** Runs a clearing batch if one is due now; returns what it did, for the step record. */
export function clearIfDue(run: Run): string | undefined {
  const { s, settings } = run;
  // With thinking on, the API's own context editing clears (it keeps thinking blocks valid).
  if (settings.thinking) return undefined;
  const trigger = s.shrinkContext
    ? 'context_window'
    : run.cacheSchedule
      ? scheduledTrigger(s, settings, run.cacheSchedule, Date.now(), () => ({ built: buildRequest(s), tail: s.transcript }))
      : clearingTrigger({
          step: s.step,
          lastBatchStep: s.lastBatchStep,
          clearEvery: settings.clearEvery,
          lastModelCallAt: s.lastModelCallAt,
          now: Date.now(),
          cacheTtlMs: settings.cacheTtlMs,
        });
  if (!trigger) return undefined;
  s.clearedIds = idsToClear(s.transcript, settings.keepRecent);
  s.notesShown = s.agentNotes;
  s.lastBatchStep = s.step;
  return `cleared ${s.clearedIds.length} old results (${trigger})`;
}

/** Where to split the skeleton for compaction now (the messages before it are compacted), or null when the tail is short enough. */
export function compactionSplit(s: CarriedState, settings: InvestigationSettings): number | null {
  // A skeleton's blocks carry the estimate of their whole bodies.
  if (!s.shrinkContext && leanTokens(s.transcript) <= settings.compactAboveTokens) return null;
  const split = chooseSplit(s.transcript, settings.keepLastMessages);
  return split === null || split <= 0 ? null : split;
}

/** Compacts the older part of the chat into case notes from the log when the tail has grown past the limit; the compacted messages leave the skeleton. */
async function compactIfLong(run: Run): Promise<string | undefined> {
  const { s, settings } = run;
  const split = compactionSplit(s, settings);
  if (split === null) return undefined;
  const plan = compactionPlan(run, split);
  const { notes, usage } = await run.acts.compactFromLog(plan);
  compacted(s, plan, split);
  notesLogged(s, plan, notes);
  s.caseNotes = notes;
  // The prefix changes here anyway, so the context's copy of the notes catches up for free.
  s.notesShown = s.agentNotes;
  s.totals = addUsage(s.totals, usage);
  s.costUsd += costOf(usage, settings.prices);
  return `compacted ${split} messages into case notes`;
}

/** Clearing and compaction as due; returns the context events of this step, if any. */
export async function prepareContext(run: Run): Promise<string | undefined> {
  const events = [clearIfDue(run), await compactIfLong(run)].filter((e): e is string => e !== undefined);
  // A reply that ran out of context asked for one shrink, now done.
  run.s.shrinkContext = false;
  return events.length ? events.join('; ') : undefined;
}

/** The lean request for this step: rules, tools, memory, notes and the tail with cleared results; `cache` places its breakpoints. */
export function buildRequest(s: CarriedState, cache?: CacheHints): BuiltContext {
  return buildContext({
    ...(cache ? { cache } : {}),
    system: SYSTEM_PROMPT,
    tools: s.mcp?.tools.length ? [...TOOLS, ...mcpDefinitions(s)] : TOOLS,
    messages: s.transcript,
    clearedIds: s.clearedIds,
    memoryBlock: s.memoryBlock,
    agentNotes: s.notesShown,
    caseNotes: s.caseNotes,
  });
}
