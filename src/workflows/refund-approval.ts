import { ActivityFailure, ApplicationFailure, condition, log, patched, setHandler, upsertMemo } from '@temporalio/workflow';
import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { RefundRequestResult } from '../activities/tools/refunds';
import { highestSeq } from '../context/log-messages';
import { labelDecisionNote } from '../context/wire';
import { refundAwaitingNote, refundDeniedNote, refundIssuedNote } from './desk-notes';
import type { CarriedState, InvestigationSettings, RefundDecision } from '../schemas/investigation';
import type { ToolCall, ToolOutcome, TypedToolOutcome } from '../schemas/tool-call';
import { decisionProblem, describeDuration } from './approvals';
import { toolEvidence } from '../context/tool-evidence';
import { queueNote } from './desk-posts';
import { decideRefundSignal, decideRefundUpdate } from './investigation-api';
import { publish, type Run } from './state';
import { isLocalActivityFailure } from './activities';

// The refund-approval conversation. request_refund files a request and answers at once: the
// conversation goes on while a person decides (the agent can say the refund is being reviewed,
// answer questions, gather facts), and nothing can pay until the decision. A decision arrives
// by update (validated before it reaches history) or signal; a reminder, then an automatic
// denial, come from timers. Once decided, the workflow records the decision, pays an approved
// refund itself (idempotent on the approval, so an approved refund never waits on the model
// choosing to call issue_refund), and tells the model what happened as a new turn. A refund
// that cannot be paid puts the case in front of a person.

/** What request_refund answers while the request waits. */
export interface FiledRequest {
  request_id: string;
  order_id: string;
  amount_cents: number;
  status: 'awaiting_approval';
  next: string;
}

/** What the model is told once a request is decided. */
export interface DecisionNote {
  request_id: string;
  decision: RefundDecision['decision'];
  decided_by: string;
  reason: string | null;
  refund: { refund_id: string; amount_cents: number; status: 'issued' } | null;
  next: string;
}

/** Why a decision is refused, as a typed failure the client maps to its error kind. */
function refusal(problem: string): ApplicationFailure {
  // "Not yet": no request is pending, and this one is not decided: it may be about to be filed.
  const type = /no refund is waiting for approval/.test(problem) ? 'DecisionNotYet' : /already been decided/.test(problem) ? 'DecisionConflict' : 'DecisionRefused';
  return ApplicationFailure.create({ type, message: problem, nonRetryable: true });
}

/** Registers the decision handlers: the validated update (refusals never reach history) and the signal. */
export function installDecisionHandlers(s: CarriedState): void {
  const accept = (decision: RefundDecision) => {
    s.decisions.push({ requestId: decision.requestId, decision: decision.decision, approver: decision.approver, reason: decision.reason });
  };
  setHandler(decideRefundSignal, (decision: RefundDecision) => {
    const problem = decisionProblem(s.pending, s.decisions, decision);
    if (problem) log.warn('ignored a refund decision', { problem });
    else accept(decision);
  });
  setHandler(
    decideRefundUpdate,
    (decision: RefundDecision) => {
      accept(decision);
      return { accepted: true as const, requestId: decision.requestId, decision: decision.decision };
    },
    {
      validator: (decision: RefundDecision) => {
        const problem = decisionProblem(s.pending, s.decisions, decision);
        if (problem) throw refusal(problem);
      },
    },
  );
}

/**
 * The request request_refund filed. Histories recorded before outcomes were typed carry it only
 * as the JSON text the model reads, so replaying them reads it from there.
 */
function filedRequest(outcome: TypedToolOutcome<RefundRequestResult> & { is_error: false }): RefundRequestResult {
  if (outcome.result) return outcome.result;
  return JSON.parse(outcome.content) as RefundRequestResult;
}

/**
 * The patch under which a run kept by reference writes the refund note's evidence from the
 * whole tool results in the transcript log (an activity), not from its skeleton's previews.
 * By-reference runs recorded before it call no such activity, so they replay as recorded.
 */
export const EVIDENCE_FROM_LOG_PATCH = 'desk-evidence-from-log';

/**
 * The refund note's evidence lines. A run by reference reads them from the log (its skeleton
 * holds previews); if the log cannot be read past the outage budget the note goes without
 * evidence rather than with previews cut mid-JSON. Only a run that posts to a desk asks.
 */
async function refundEvidence(run: Run, currency: string | undefined): Promise<string[]> {
  const { s } = run;
  if (!run.byRef || !run.postsToDesk || !patched(EVIDENCE_FROM_LOG_PATCH)) return toolEvidence(s.transcript, { currency });
  try {
    return await run.acts.toolEvidenceFromLog({
      workflowId: run.id.workflowId,
      throughSeq: highestSeq(s.transcript),
      ...(s.log?.firstSeq ? { fromSeq: s.log.firstSeq } : {}),
      ...(currency ? { currency } : {}),
    });
  } catch (error) {
    if (!(error instanceof ActivityFailure || isLocalActivityFailure(error))) throw error;
    log.warn('the refund note goes without evidence: the transcript log could not be read', { error: error.message });
    return [];
  }
}

/** Runs request_refund: files the request for a person and answers at once; the decision comes later. */
export async function requestRefund(run: Run, use: ToolUseBlock, call: ToolCall, summary: string): Promise<ToolOutcome> {
  const { s, settings } = run;
  if (s.pending) {
    return {
      is_error: true,
      content: `Refund request ${s.pending.request_id} is already waiting for a person's decision; wait for it before asking for another.`,
    };
  }
  const outcome = await run.acts.tools.request_refund.executeWithOptions({ ...run.acts.toolOptions, summary }, [call]);
  if (outcome.is_error) return outcome;
  const { request_id, order_id, amount_cents, currency, reason } = filedRequest(outcome);
  s.pending = {
    request_id,
    order_id,
    amount_cents,
    ...(currency ? { currency } : {}),
    reason,
    requested_at: new Date().toISOString(),
    tool_use_id: use.id,
    approvers: settings.approvers,
    reminded: false,
  };
  queueNote(
    run,
    refundAwaitingNote({
      workflowId: run.id.workflowId,
      requestId: request_id,
      orderId: order_id,
      amountCents: amount_cents,
      currency,
      reason,
      evidence: await refundEvidence(run, currency),
      approvers: settings.approvers.map((a) => `${a.name} (up to ${(a.limit_cents / 100).toFixed(2)})`),
    }),
  );
  publish(run.id, s);
  const filed: FiledRequest = {
    request_id,
    order_id,
    amount_cents,
    status: 'awaiting_approval',
    next: 'A person will decide. You may tell the customer a colleague is reviewing the refund, but do not promise it. You will be told the decision in a later message.',
  };
  return { is_error: false, content: JSON.stringify(filed) };
}

/** The decision on the pending request, once a person (or the timer) has made one. */
export function pendingDecision(s: CarriedState): RefundDecision | undefined {
  const pending = s.pending;
  return pending ? s.decisions.find((d) => d.requestId === pending.request_id) : undefined;
}

/**
 * Runs beside the conversation while a request waits: a reminder after the reminder delay, an
 * automatic denial after the timeout. Ends when the request is decided.
 */
export async function watchApproval(s: CarriedState, settings: InvestigationSettings): Promise<void> {
  const request = s.pending;
  if (!request) return;
  const decided = () => s.decisions.some((d) => d.requestId === request.request_id);
  const elapsed = () => Date.now() - Date.parse(request.requested_at);
  if (!request.reminded) {
    if (!(await condition(decided, Math.max(0, settings.approvalReminderMs - elapsed())))) {
      request.reminded = true;
      log.warn('refund request still awaiting approval', { requestId: request.request_id });
      upsertMemo({ reminder: `refund ${request.request_id} waiting since ${request.requested_at}` });
    }
  }
  if (!(await condition(decided, Math.max(0, settings.approvalTimeoutMs - elapsed())))) {
    s.decisions.push({
      requestId: request.request_id,
      decision: 'denied',
      approver: 'casework-timer',
      reason: `no decision within ${describeDuration(settings.approvalTimeoutMs)}; denied automatically`,
    });
  }
}

/** The patch that added the desk note for a denied refund. */
export const DESK_DENIED_NOTE_PATCH = 'desk-refund-denied-note';

/**
 * Records the pending request's decision, pays it when approved, and returns what to tell the
 * model; null when a person must take over because the refund could not be paid.
 */
export async function settleDecision(run: Run, decision: RefundDecision): Promise<{ note: string } | { failed: string }> {
  const { s, id } = run;
  const request = s.pending;
  if (!request) throw new Error('settleDecision needs a pending request');
  const recorded = await run.acts.recordRefundDecision({
    customerId: id.customerId,
    requestId: decision.requestId,
    decision: decision.decision,
    approver: decision.approver,
    reason: decision.reason,
    decidedAt: new Date().toISOString(),
  });
  let refund: DecisionNote['refund'] = null;
  if (decision.decision === 'approved') {
    const call: ToolCall = {
      name: 'issue_refund',
      input: { request_id: request.request_id },
      context: { ...id, toolUseId: `approval-${request.request_id}` },
    };
    let outcome: ToolOutcome;
    try {
      outcome = await run.acts.tools.issue_refund.executeWithOptions({ ...run.acts.toolOptions, summary: `issue_refund: request ${request.request_id} (approved)` }, [call]);
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return { failed: `the approved refund ${request.request_id} could not be paid: the refund service did not answer` };
    }
    if (outcome.is_error) return { failed: `the approved refund ${request.request_id} could not be paid: ${outcome.content}` };
    const paid = JSON.parse(outcome.content) as { refund_id: string; amount_cents: number; order_id: string };
    refund = { refund_id: paid.refund_id, amount_cents: paid.amount_cents, status: 'issued' };
    if (!s.refunds.some((r) => r.refund_id === paid.refund_id)) {
      s.refunds.push({
        request_id: request.request_id,
        refund_id: paid.refund_id,
        order_id: paid.order_id,
        amount_cents: paid.amount_cents,
        approval_id: recorded.approvalId ?? '',
      });
      queueNote(
        run,
        refundIssuedNote({ requestId: request.request_id, orderId: paid.order_id, amountCents: paid.amount_cents, currency: request.currency, approver: decision.approver }),
      );
    }
  }
  // Runs recorded before the denial note (no marker) schedule no post for it, so they replay as recorded.
  if (decision.decision === 'denied' && run.postsToDesk && patched(DESK_DENIED_NOTE_PATCH)) {
    queueNote(
      run,
      refundDeniedNote({
        requestId: request.request_id,
        orderId: request.order_id,
        amountCents: request.amount_cents,
        currency: request.currency,
        approver: decision.approver,
        reason: decision.reason,
      }),
    );
  }
  s.pending = null;
  const note: DecisionNote = {
    request_id: decision.requestId,
    decision: decision.decision,
    decided_by: decision.approver,
    reason: decision.reason ?? null,
    refund,
    next: refund
      ? 'Approved by a person, and casework has issued the refund. Tell the customer; there is no need to call issue_refund.'
      : 'Not approved. Do not promise a refund; tell the customer honestly and offer the next step.',
  };
  return { note: labelDecisionNote(JSON.stringify(note)) };
}
