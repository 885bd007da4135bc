import type { TextBlockParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { BadInputError } from '../errors';
import type { AgentNotes } from '../schemas/investigation';
import type { CaseNotes } from '../schemas/case-notes';
import type { CompactionPlan, LayoutMessage, LogEntry, StepPlan } from '../schemas/transcript-log';
import { buildContext, type BuiltContext } from './build-context';
import { decodeLayout, decodeSeqs, PlanEncodingError } from './plan-encoding';
import { layoutSeqs, messagesOfLayout } from './references';

// The request a step plan stands for, rebuilt from the transcript log's entries. Pure: the model
// activity builds what it sends with it, and the codec server shows the same request in the web
// UI in place of the plan, so what an operator reads is what the model read.

/** A compact plan's string, decoded; a string that does not decode is bad input, never retried. */
function decoded<T>(decode: () => T, what: string): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof PlanEncodingError) throw new BadInputError(`the plan's ${what} does not decode: ${error.message}`);
    throw error;
  }
}

/** The live tail's layout a plan names; a layout that does not decode (or a plan of the retired first shape) is bad input. */
export const planLayout = (plan: StepPlan | CompactionPlan): LayoutMessage[] => decoded(() => decodeLayout(plan.layout), 'layout');

/** Every entry a step's request reads: the live tail's blocks, then the context blocks' current versions. */
export function stepPlanSeqs(plan: StepPlan): number[] {
  const refs = [plan.context.memory, plan.context.agentNotes, plan.context.caseNotes].filter((s): s is number => s !== null);
  return [...layoutSeqs(planLayout(plan)), ...refs];
}

/** The tool_use ids of the cleared results, which the plan names by their entries (tool_result blocks). */
export function clearedIdsOf(plan: StepPlan, entries: ReadonlyMap<number, LogEntry>): string[] {
  return decoded(() => decodeSeqs(plan.cleared), 'cleared results').map((seq) => {
    const body = entries.get(seq)?.body as ToolResultBlockParam | undefined;
    if (body?.type !== 'tool_result') throw new BadInputError(`the plan clears entry ${seq}, which is not a tool result of this step's messages`);
    return body.tool_use_id;
  });
}

/**
 * The request of one step: the rules and tools as given, the memory block, agent notes and
 * case notes at the entries the plan names, and the live tail's whole messages with the
 * cleared results as placeholders, cache breakpoints where the plan's cache hints put them.
 * `entries` must hold every entry stepPlanSeqs names (a missing one is an Error naming it).
 */
export function requestOfPlan(plan: StepPlan, entries: ReadonlyMap<number, LogEntry>, fixed: { system: string | readonly TextBlockParam[]; tools: readonly Tool[] }): BuiltContext {
  const bodyAt = (seq: number | null) => (seq === null ? null : (entries.get(seq)?.body ?? null));
  return buildContext({
    system: fixed.system,
    tools: fixed.tools,
    messages: messagesOfLayout(planLayout(plan), entries),
    clearedIds: clearedIdsOf(plan, entries),
    memoryBlock: bodyAt(plan.context.memory) as string | null,
    agentNotes: bodyAt(plan.context.agentNotes) as AgentNotes | null,
    caseNotes: bodyAt(plan.context.caseNotes) as CaseNotes | null,
    ...(plan.cache ? { cache: plan.cache } : {}),
  });
}
