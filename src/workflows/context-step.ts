import { buildContext, type BuiltContext } from '../context/build-context';
import { costOf } from '../context/accounting';
import { clearingTrigger, idsToClear } from '../context/clearing';
import { chooseSplit } from '../context/split';
import { leanTokens } from '../context/references';
import { compacted, compactionPlan, notesLogged } from './by-reference';
import type { CarriedState } from '../schemas/investigation';
import { addUsage } from '../schemas/model';
import type { Run } from './state';
import { SYSTEM_PROMPT } from './prompt';
import { TOOLS } from './tool-dispatch';
import { mcpDefinitions } from './mcp-tools';
import { scheduledTrigger } from './cache-schedule';
import type { CacheHints } from '../context/cache-breakpoints';

// The context step before each model call: a clearing batch when one is due, compaction when
// the chat has grown long, then the lean request. Both change only what is sent; the
// transcript keeps every message word for word.

/** The transcript from the compaction split onwards: what requests are built from. */
export function liveTail(s: CarriedState) {
  return s.transcript.slice(s.compactedThrough);
}

/** Runs a clearing batch if one is due now; returns what it did, for the step record. */
function clearIfDue(run: Run): string | undefined {
  const { s, settings } = run;
  // With thinking on, the API's own context editing clears (it keeps thinking blocks valid).
  if (settings.thinking) return undefined;
  const trigger = s.shrinkContext
    ? 'context_window'
    : run.cacheSchedule
      ? scheduledTrigger(s, settings, run.cacheSchedule, Date.now(), () => ({ built: buildRequest(s), tail: liveTail(s) }))
      : clearingTrigger({
          step: s.step,
          lastBatchStep: s.lastBatchStep,
          clearEvery: settings.clearEvery,
          lastModelCallAt: s.lastModelCallAt,
          now: Date.now(),
          cacheTtlMs: settings.cacheTtlMs,
        });
  if (!trigger) return undefined;
  s.clearedIds = idsToClear(liveTail(s), settings.keepRecent);
  s.notesShown = s.agentNotes;
  s.lastBatchStep = s.step;
  return `cleared ${s.clearedIds.length} old results (${trigger})`;
}

/** Compacts the older part of the chat into case notes when the tail has grown past the limit. */
async function compactIfLong(run: Run): Promise<string | undefined> {
  const { s, settings } = run;
  const tail = liveTail(s);
  // A skeleton's blocks carry the estimate of their whole bodies; a plain transcript's are estimated as before.
  if (!s.shrinkContext && leanTokens(tail) <= settings.compactAboveTokens) return undefined;
  const split = chooseSplit(tail, settings.keepLastMessages);
  if (split === null || split <= 0) return undefined;
  const { notes, usage } = run.byRef ? await compactByReference(run, split) : await run.acts.compactConversation({ messages: tail.slice(0, split), previous: s.caseNotes });
  s.caseNotes = notes;
  // By reference the compacted messages have left the skeleton already (the log keeps them).
  if (!run.byRef) s.compactedThrough += split;
  // The prefix changes here anyway, so the context's copy of the notes catches up for free.
  s.notesShown = s.agentNotes;
  s.totals = addUsage(s.totals, usage);
  s.costUsd += costOf(usage, settings.prices);
  return `compacted ${split} messages into case notes`;
}

/** Compaction from the log: the activity reads the messages it summarises; they then leave the skeleton. */
async function compactByReference(run: Run, split: number) {
  const plan = compactionPlan(run, split);
  const result = await run.acts.compactFromLog(plan);
  compacted(run.s, plan, split);
  notesLogged(run.s, plan, result.notes);
  return result;
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
    messages: liveTail(s),
    clearedIds: s.clearedIds,
    memoryBlock: s.memoryBlock,
    agentNotes: s.notesShown,
    caseNotes: s.caseNotes,
  });
}
