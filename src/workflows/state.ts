import { upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { EMPTY_AGENT_NOTES } from '../context/agent-notes';
import type { CarriedState, CaseStatus, InvestigationInput, InvestigationStatus } from '../schemas/investigation';
import { NO_USAGE } from '../schemas/model';
import { SA } from '../schemas/search-attributes';

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
    compactedThrough: 0,
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
  };
}

/** The state a run starts from: carried over from the previous run, or fresh. */
export function startingState(input: InvestigationInput): CarriedState {
  return input.carried ?? freshState();
}

/** The status query's answer. */
export function statusOf(id: RunIdentity, s: CarriedState): InvestigationStatus {
  return {
    workflowId: id.workflowId,
    ticketId: id.ticketId,
    customerId: id.customerId,
    status: s.status,
    step: s.step,
    model: s.model,
    lastReply: s.lastReply,
    pendingApproval: s.pending,
    decisions: s.decisions,
    totals: { ...s.totals, cost_usd: s.costUsd },
    steps: s.steps,
    agentNotes: s.agentNotes,
    caseNotes: s.caseNotes,
    transcriptMessages: s.transcript.length,
    continuedAsNew: s.runsSoFar,
  };
}

/** Sets the case status and shows it where operators look: search attributes and the memo. */
export function publish(id: RunIdentity, s: CarriedState, state: CaseStatus): void {
  s.status = state;
  upsertSearchAttributes([
    { key: SA.customerId, value: id.customerId },
    { key: SA.ticketId, value: id.ticketId },
    { key: SA.status, value: state },
    { key: SA.step, value: s.step },
    { key: SA.inputTokens, value: s.totals.input_tokens + s.totals.cache_creation_input_tokens + s.totals.cache_read_input_tokens },
  ]);
  const pending = s.pending ? `; refund ${s.pending.request_id} (${s.pending.amount_cents} cents, order ${s.pending.order_id}) awaiting approval` : '';
  upsertMemo({ summary: `Ticket ${id.ticketId} for ${id.customerId}: ${state}, step ${s.step}${pending}` });
}
