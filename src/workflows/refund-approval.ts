import { ActivityFailure, ApplicationFailure, condition, getExternalWorkflowHandle, log, setHandler, upsertMemo } from '@temporalio/workflow';
import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { RefundRequestResult } from '../activities/tools/refunds';
import { highestSeq } from '../context/log-messages';
import { labelDecisionNote } from '../context/wire';
import { refundAwaitingNote, refundDeniedNote, refundIssuedNote, refundRefusedNote } from './desk-notes';
import { describeLedger, LEDGER_REFUSAL, ledgerSummary } from '../context/ledger';
import type { OrderLedger } from '../schemas/ledger';
import type { CarriedState, InvestigationSettings, RefundDecision } from '../schemas/investigation';
import type { ToolCall, ToolOutcome, TypedToolOutcome } from '../schemas/tool-call';
import { decisionProblem, describeDuration } from './approvals';
import { toolEvidence } from '../context/tool-evidence';
import { queueNote } from './desk-posts';
import { decideRefundSignal, decideRefundUpdate, ledgerChangedSignal } from './investigation-api';
import { publish, type Run } from './state';
import { isLocalActivityFailure } from './activities';
import { settleMcpDecision } from './mcp-tools';

// The refund-approval conversation. request_refund files a request and answers at once: the
// conversation goes on while a person decides (the agent can say the refund is being reviewed,
// answer questions, gather facts), and nothing can pay until the decision. A decision arrives
// by update (validated before it reaches history) or signal; a reminder, then an automatic
// denial, come from timers. Once decided, the workflow records the decision, pays an approved
// refund itself (idempotent on the approval, so an approved refund never waits on the model
// choosing to call issue_refund), and tells the model what happened as a new turn. An approval
// the order ledger refuses is told to the model, the desk and the status, and the case goes on;
// a write that fails past the outage budget is retried (investigation.ts) with a person told.

/** What request_refund answers while the request waits. */
export interface FiledRequest {
  request_id: string;
  order_id: string;
  amount_cents: number;
  status: 'awaiting_approval';
  /** What the refund is for and the charge it reverses (runs from before the ledger have neither). */
  kind?: string;
  charge_id?: string | null;
  /** The order's ledger: what was refunded, what other cases have pending, what remains. */
  ledger?: ReturnType<typeof ledgerSummary>;
  /** Other pending requests for the same money: this request is flagged as overlapping them. */
  overlaps?: string[];
  next: string;
}

/** What the model is told once a request is decided. */
export interface DecisionNote {
  request_id: string;
  decision: RefundDecision['decision'];
  decided_by: string;
  reason: string | null;
  refund: { refund_id: string; amount_cents: number; status: 'issued' } | null;
  /** Approved, but the order ledger refused to pay: its words. */
  refused?: string;
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
    s.decisions.push({
      requestId: decision.requestId,
      decision: decision.decision,
      approver: decision.approver,
      reason: decision.reason,
      ...(typeof decision.decidedBy === 'string' && decision.decidedBy.trim() ? { decidedBy: decision.decidedBy.trim().slice(0, 200) } : {}),
      ...(typeof decision.via === 'string' && decision.via.trim() ? { via: decision.via.trim().slice(0, 200) } : {}),
    });
  };
  // Another case paid on the same order: the validator checks approvals against what it paid.
  setHandler(ledgerChangedSignal, (ledger: OrderLedger) => {
    const pending = s.pending;
    if (!pending || pending.order_id !== ledger.order_id) return;
    // Refunds only ever join a ledger: of two snapshots, the one with more refunds is the later.
    if (pending.ledger && pending.ledger.refunds.length > ledger.refunds.length) return;
    pending.ledger = ledger;
  });
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
 * The refund note's evidence lines, read from the transcript log (the skeleton holds previews);
 * if the log cannot be read past the outage budget the note goes without
 * evidence rather than with previews cut mid-JSON. Only a run that posts to a desk asks.
 */
async function refundEvidence(run: Run, currency: string | undefined): Promise<string[]> {
  const { s } = run;
  if (!run.postsToDesk) return toolEvidence(s.transcript, { currency });
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
  const filed = filedRequest(outcome);
  const { request_id, order_id, amount_cents, currency, reason, ledger } = filed;
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
    ...(filed.kind ? { kind: filed.kind, charge_id: filed.charge_id ?? null, overlaps: filed.overlaps ?? [] } : {}),
    ...(ledger ? { ledger } : {}),
  };
  const overlaps = filed.overlaps ?? [];
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
      ...(ledger ? { ledger: describeLedger(ledger, { except: request_id }), overlaps } : {}),
    }),
  );
  publish(run.id, s);
  const answer: FiledRequest = {
    request_id,
    order_id,
    amount_cents,
    status: 'awaiting_approval',
    ...(filed.kind ? { kind: filed.kind, charge_id: filed.charge_id ?? null } : {}),
    ...(ledger ? { ledger: ledgerSummary(ledger, request_id) } : {}),
    ...(overlaps.length ? { overlaps } : {}),
    next:
      (overlaps.length
        ? `This request overlaps ${overlaps.join(', ')}, pending in another case for the same money; the approver is told, and at most one of them can be paid. `
        : '') + 'A person will decide. You may tell the customer a colleague is reviewing the refund, but do not promise it. You will be told the decision in a later message.',
  };
  return { is_error: false, content: JSON.stringify(answer) };
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

/** How settleDecision ended: a note for the model; a failure a person must see; or blocked on a write to retry. */
export type Settled = { note: string } | { failed: string } | { blocked: string };

const why = (error: ActivityFailure) => (error.cause instanceof Error ? error.cause.message : error.message);

/** Tells every other case with a request pending on the order what the ledger now holds. A closed case is skipped. */
async function tellOtherCases(run: Run, ledger: OrderLedger): Promise<void> {
  const others = [...new Set(ledger.pending.map((p) => `investigation-${p.ticket_id}`))].filter((id) => id !== run.id.workflowId);
  const sent = await Promise.allSettled(others.map((id) => getExternalWorkflowHandle(id).signal(ledgerChangedSignal, ledger)));
  for (const [i, result] of sent.entries()) {
    if (result.status === 'rejected') log.info('another case on the order could not be told of the ledger', { workflowId: others[i] });
  }
}

/** The approved refund the ledger refused: recorded, the team told on the desk, and the model told why. */
function refusedByLedger(run: Run, decision: RefundDecision, content: string): { note: string } {
  const { s } = run;
  const request = s.pending!;
  const words = content.slice(LEDGER_REFUSAL.length);
  (s.refusedRefunds ??= []).push({ request_id: request.request_id, order_id: request.order_id, approver: decision.approver, reason: words, at: new Date().toISOString() });
  queueNote(
    run,
    refundRefusedNote({
      requestId: request.request_id,
      orderId: request.order_id,
      amountCents: request.amount_cents,
      currency: request.currency,
      approver: decision.approver,
      reason: words,
    }),
  );
  s.pending = null;
  const note: DecisionNote = {
    request_id: decision.requestId,
    decision: decision.decision,
    decided_by: decision.approver,
    reason: decision.reason ?? null,
    refund: null,
    refused: words,
    next:
      'A person approved it, but the order ledger refused to pay it, so nothing was paid. Tell the customer honestly, in plain words, ' +
      'that this refund cannot be paid and why (for example, that charge was already refunded in another case); the team has been told.',
  };
  return { note: labelDecisionNote(JSON.stringify(note)) };
}

/**
 * Records the pending request's decision, pays it when approved, and returns what to tell the
 * model; `failed` when a person must take over because the refund could not be paid, `blocked`
 * when a write could not be made within the outage budget (the caller retries it).
 */
export async function settleDecision(run: Run, decision: RefundDecision): Promise<Settled> {
  const { s, id } = run;
  const request = s.pending;
  if (!request) throw new Error('settleDecision needs a pending request');
  // A money-moving MCP call rides on the same approval; only runs that offer MCP tools (patch mcp-tools) file one.
  if (request.mcp) return settleMcpDecision(run, decision);
  let recorded: { approvalId: string | null };
  try {
    recorded = await run.acts.recordRefundDecision({
      customerId: id.customerId,
      requestId: decision.requestId,
      decision: decision.decision,
      approver: decision.approver,
      ...(decision.decidedBy ? { decidedBy: decision.decidedBy } : {}),
      ...(decision.via ? { decidedVia: decision.via } : {}),
      reason: decision.reason,
      decidedAt: new Date().toISOString(),
    });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return { blocked: `the ${decision.decision} decision on refund ${request.request_id} could not be recorded: ${why(error)}` };
  }
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
      return { blocked: `the approved refund ${request.request_id} could not be paid yet: ${why(error)}` };
    }
    if (outcome.is_error) {
      if (outcome.content.startsWith(LEDGER_REFUSAL)) return refusedByLedger(run, decision, outcome.content);
      return { failed: `the approved refund ${request.request_id} could not be paid: ${outcome.content}` };
    }
    const paid = JSON.parse(outcome.content) as { refund_id: string; amount_cents: number; order_id: string; currency?: string; ledger?: OrderLedger };
    refund = { refund_id: paid.refund_id, amount_cents: paid.amount_cents, status: 'issued' };
    if (!s.refunds.some((r) => r.refund_id === paid.refund_id)) {
      s.refunds.push({
        request_id: request.request_id,
        refund_id: paid.refund_id,
        order_id: paid.order_id,
        amount_cents: paid.amount_cents,
        approval_id: recorded.approvalId ?? '',
        ...(paid.currency ? { currency: paid.currency } : {}),
      });
      queueNote(
        run,
        refundIssuedNote({ requestId: request.request_id, orderId: paid.order_id, amountCents: paid.amount_cents, currency: request.currency, approver: decision.approver }),
      );
      if (paid.ledger) await tellOtherCases(run, paid.ledger);
    }
  }
  if (decision.decision === 'denied' && run.postsToDesk) {
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
