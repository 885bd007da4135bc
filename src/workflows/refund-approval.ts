import { condition, log, setHandler, upsertMemo } from '@temporalio/workflow';
import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { CarriedState, InvestigationSettings, RefundDecision, RefundRequest } from '../schemas/investigation';
import type { RefundRequestResult } from '../activities/tools/refunds';
import type { ToolCall, ToolOutcome, TypedToolOutcome } from '../schemas/tool-call';
import { recordRefundDecision, tools, TOOL_ACTIVITY_OPTIONS } from './activities';
import { decisionProblem, describeDuration } from './approvals';
import { decideRefundSignal, decideRefundUpdate } from './investigation-api';
import { publish, type RunIdentity } from './state';

// The refund-approval conversation: the model asks (request_refund), the workflow waits durably
// for a person (update or signal), reminds and finally denies on its own, records the decision in
// the refund trail, and answers the model with what was decided. Only a decision recorded here
// lets issue_refund pay (the database refuses a refund without an approval row).

/** The result the model reads once a request is decided. */
export interface DecisionResult {
  request_id: string;
  decision: RefundDecision['decision'];
  decided_by: string;
  reason: string | null;
  approval_id: string | null;
  next: string;
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
        if (problem) throw new Error(problem);
      },
    },
  );
}

/** Waits for a person's decision: a reminder after the reminder delay, an automatic denial after the timeout. */
async function waitForDecision(s: CarriedState, settings: InvestigationSettings, request: RefundRequest): Promise<RefundDecision> {
  const decided = () => s.decisions.find((d) => d.requestId === request.request_id);
  const elapsed = () => Date.now() - Date.parse(request.requested_at);
  if (!request.reminded) {
    const remindIn = Math.max(0, settings.approvalReminderMs - elapsed());
    if (!(await condition(() => decided() !== undefined, remindIn))) {
      request.reminded = true;
      log.warn('refund request still awaiting approval', { requestId: request.request_id });
      upsertMemo({ reminder: `refund ${request.request_id} waiting since ${request.requested_at}` });
    }
  }
  const timeoutIn = Math.max(0, settings.approvalTimeoutMs - elapsed());
  if (!(await condition(() => decided() !== undefined, timeoutIn))) {
    s.decisions.push({
      requestId: request.request_id,
      decision: 'denied',
      approver: 'casework-timer',
      reason: `no decision within ${describeDuration(settings.approvalTimeoutMs)}; denied automatically`,
    });
  }
  const decision = decided();
  if (!decision) throw new Error(`refund request ${request.request_id} has no decision after waiting`);
  return decision;
}

/** What the model reads once a request is decided: the decision, who made it and the next step. */
function decisionResult(decision: RefundDecision, approvalId: string | null): DecisionResult {
  const approved = decision.decision === 'approved';
  return {
    request_id: decision.requestId,
    decision: decision.decision,
    decided_by: decision.approver,
    reason: decision.reason ?? null,
    approval_id: approved ? approvalId : null,
    next: approved
      ? 'Approved by a human. Call issue_refund with this request_id.'
      : 'Not approved. Do not promise a refund; tell the customer honestly and offer the next step.',
  };
}

/**
 * The request request_refund filed. Histories recorded before outcomes were typed carry it only
 * as the JSON text the model reads, so replaying them reads it from there.
 */
function filedRequest(outcome: TypedToolOutcome<RefundRequestResult> & { is_error: false }): RefundRequestResult {
  if (outcome.result) return outcome.result;
  return JSON.parse(outcome.content) as RefundRequestResult;
}

/** Runs request_refund: files the request, waits for a person, records the decision and returns it. */
export async function requestRefund(
  id: RunIdentity,
  s: CarriedState,
  settings: InvestigationSettings,
  use: ToolUseBlock,
  call: ToolCall,
  summary: string,
): Promise<ToolOutcome> {
  const outcome = await tools.request_refund.executeWithOptions({ ...TOOL_ACTIVITY_OPTIONS, summary }, [call]);
  if (outcome.is_error) return outcome;
  const { request_id, order_id, amount_cents, reason } = filedRequest(outcome);
  s.pending = {
    request_id,
    order_id,
    amount_cents,
    reason,
    requested_at: new Date().toISOString(),
    tool_use_id: use.id,
    approvers: settings.approvers,
    reminded: false,
  };
  publish(id, s, 'awaiting_approval');
  const decision = await waitForDecision(s, settings, s.pending);
  const recorded = await recordRefundDecision({
    customerId: id.customerId,
    requestId: decision.requestId,
    decision: decision.decision,
    approver: decision.approver,
    reason: decision.reason,
    decidedAt: new Date().toISOString(),
  });
  s.pending = null;
  publish(id, s, 'investigating');
  return { is_error: false, content: JSON.stringify(decisionResult(decision, recorded.approvalId)) };
}
