import { upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { EMPTY_AGENT_NOTES } from '../context/agent-notes';
import type { CacheScheduleSettings, CarriedState, CaseStatus, HandOff, InvestigationInput, InvestigationSettings, InvestigationStatus } from '../schemas/investigation';
import type { RunActivities } from './activities';
import { NO_USAGE } from '../schemas/model';
import { SA } from '../schemas/search-attributes';
import type { TranscriptLogState } from '../schemas/transcript-log';

/** Who this run is for: fixed at start, the same in every continuation. */
export interface RunIdentity {
  workflowId: string;
  ticketId: string;
  customerId: string;
}

/** The state of a brand-new investigation. */
export function freshState(): CarriedState {
  return {
    transcript: [],
    step: 0,
    turnSteps: 0,
    status: 'investigating',
    lastReply: null,
    totals: { ...NO_USAGE },
    costUsd: 0,
    steps: [],
    clearedIds: [],
    lastBatchStep: 0,
    lastModelCallAt: null,
    caseNotes: null,
    agentNotes: EMPTY_AGENT_NOTES,
    notesShown: EMPTY_AGENT_NOTES,
    memoryBlock: null,
    pending: null,
    decisions: [],
    inbox: [],
    seenEventIds: [],
    model: null,
    runsSoFar: 0,
    awaiting: 'customer',
    handOffs: [],
    refunds: [],
    shrinkContext: false,
    emptyReplies: 0,
    recoveries: [],
    contextEventDue: null,
  };
}

/** The state a run starts from: carried over from the previous run (fields it predates filled in), or fresh. */
export function startingState(input: InvestigationInput): CarriedState {
  if (!input.carried) return freshState();
  const carried: Partial<CarriedState> & CarriedState = input.carried;
  return { ...freshState(), ...carried, awaiting: carried.awaiting ?? (carried.status === 'waiting_for_customer' ? 'customer' : 'model') };
}

/** The hand-over a person must act on, if any. */
export function openHandOff(s: CarriedState): HandOff | null {
  const last = s.handOffs[s.handOffs.length - 1];
  return last && !last.resolution ? last : null;
}

/** The case status operators see, from what the run waits for. */
export function caseStatusOf(s: CarriedState): CaseStatus {
  if (s.status === 'closed') return 'closed';
  if (s.awaiting === 'person') return 'needs_human';
  if (s.awaiting === 'model') return 'investigating';
  const pending = s.pending;
  if (pending) {
    // A decision taken but not yet settled (recorded, paid, told to the model) is work in hand.
    return s.decisions.some((d) => d.requestId === pending.request_id) ? 'investigating' : 'awaiting_approval';
  }
  return 'waiting_for_customer';
}

/** The status query's answer. */
export function statusOf(id: RunIdentity, s: CarriedState): InvestigationStatus {
  return {
    workflowId: id.workflowId,
    ticketId: id.ticketId,
    customerId: id.customerId,
    status: caseStatusOf(s),
    step: s.step,
    // What a person must act on comes first: the web UI shows the top of the answer.
    pendingApproval: s.pending,
    handOff: openHandOff(s),
    handOffs: s.handOffs,
    model: s.model,
    lastReply: s.lastReply,
    decisions: s.decisions,
    totals: { ...s.totals, cost_usd: s.costUsd },
    steps: s.steps,
    ...(s.log ? { stepsInLog: s.log.stepsLogged } : {}),
    agentNotes: s.agentNotes,
    caseNotes: s.caseNotes,
    transcriptMessages: s.transcript.length + (s.log?.droppedMessages ?? 0),
    continuedAsNew: s.runsSoFar,
    refunds: s.refunds,
    ...(s.refusedRefunds?.length ? { refusedRefunds: s.refusedRefunds } : {}),
    ...(s.failedRefunds?.length ? { failedRefunds: s.failedRefunds } : {}),
    recoveredFrom: s.recoveries[s.recoveries.length - 1] ?? null,
    ...(s.desk ? { desk: s.desk } : {}),
    ...(s.cache ? { contextStrategy: s.cache.strategy } : {}),
  };
}

/** Steps between search-attribute updates that only move the step count (history by reference). */
export const PUBLISH_STEP_EVERY = 10;

/**
 * Whether a run by reference upserts now: when what operators act on changed (status, refund,
 * hand-over), else every PUBLISH_STEP_EVERY steps. Each upsert is two history events, so a run
 * by reference does not spend them on every step; the status query always has the live step.
 */
function publishDue(s: CarriedState, log: TranscriptLogState, state: CaseStatus): boolean {
  const key = `${state}|${s.pending?.request_id ?? ''}|${s.pending?.reminded ?? ''}|${s.handOffs.length}|${openHandOff(s) ? 'open' : ''}`;
  const last = log.published;
  if (last && last.key === key && s.step - last.step < PUBLISH_STEP_EVERY) return false;
  log.published = { key, step: s.step };
  return true;
}

/** Shows the case status (caseStatusOf, or `closed`) where operators look: search attributes and the memo. */
export function publish(id: RunIdentity, s: CarriedState, closed = false): void {
  const state: CaseStatus = closed ? 'closed' : caseStatusOf(s);
  s.status = state;
  if (s.log && !publishDue(s, s.log, state)) return;
  upsertSearchAttributes([
    { key: SA.customerId, value: id.customerId },
    { key: SA.ticketId, value: id.ticketId },
    { key: SA.status, value: state },
    { key: SA.step, value: s.step },
    { key: SA.inputTokens, value: s.totals.input_tokens + s.totals.cache_creation_input_tokens + s.totals.cache_read_input_tokens },
  ]);
  const pending = s.pending ? `; refund ${s.pending.request_id} (${s.pending.amount_cents} cents, order ${s.pending.order_id}) awaiting approval` : '';
  const handOff = openHandOff(s);
  const person = handOff ? `; needs a person: ${handOff.reason}` : '';
  upsertMemo({ summary: `Ticket ${id.ticketId} for ${id.customerId}: ${state}, step ${s.step}${pending}${person}` });
}

/** One run's identity, state, settings and activities: what the workflow's modules work on. */
export interface Run {
  id: RunIdentity;
  s: CarriedState;
  settings: InvestigationSettings;
  acts: RunActivities;
  /** True when this run posts its replies and notes to a desk (desk-posts.ts decides once, at start). */
  postsToDesk?: boolean;
  /** True when the run posts only if the worker has a desk for its ticket: the first post answering "skipped" ends the posting. */
  deskIfConfigured?: boolean;
  /** The cache-optimal clearing schedule this run follows (decided once, at start). */
  cacheSchedule?: CacheScheduleSettings;
}
