import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { readStatusOrBroken } from '../../client/hand-off';
import { decideRefund, InvestigationNotFoundError } from '../../client/investigations';
import { NotFoundError } from '../../errors';
import { investigationId } from '../../schemas/event';
import { describeIssues } from '../../schemas/issues';
import { mayDecideAs, mayReadAll, soleApprover, type Principal } from '../auth';
import type { RouteContext, Trace } from '../context';
import { decodeSegment, HttpError, readJsonBody, type Answer } from '../http';

// GET /investigations/:id (the status query) and POST /investigations/:id/approve | /deny
// (the validated update).

const WORKFLOW_ID = /^[A-Za-z0-9_-]{1,120}$/;

const DecisionBody = z.object({
  requestId: z.string().min(1).max(200),
  approver: z.string().trim().min(1).max(100).optional(),
  reason: z.string().max(2000).optional(),
});

/** The workflow id a path segment names: an investigation id, or a ticket id. */
export function workflowIdOf(segment: string, trace: Trace): string {
  const id = decodeSegment(segment, 'investigation id');
  const workflowId = id.startsWith('investigation-') ? id : investigationId(id);
  if (!WORKFLOW_ID.test(workflowId)) throw new HttpError(400, 'investigation id must be letters, digits, "-" and "_" (e.g. investigation-T-1001)');
  trace.workflowId = workflowId;
  return workflowId;
}

const notFound = (workflowId: string) => new HttpError(404, `no investigation ${workflowId}`);

/**
 * GET /investigations/:id: the status query's answer, with `brokenRun` when the latest run
 * FAILED, was TERMINATED, TIMED_OUT or CANCELLED (a bug; the next event recovers it); another
 * customer's investigation is "not found".
 */
export async function getInvestigation(ctx: RouteContext, principal: Principal, workflowId: string, trace: Trace): Promise<Answer> {
  const status = await ctx
    .temporal('reading the status', () => readStatusOrBroken(ctx.deps.client, workflowId))
    .catch((error: Error) => {
      if (error instanceof NotFoundError) throw notFound(workflowId);
      // A run that has not finished its first workflow task yet has no query handler.
      if (error.name === 'QueryNotRegisteredError') {
        throw new HttpError(503, `investigation ${workflowId} is starting; ask again shortly`, { 'retry-after': '1' });
      }
      throw error;
    });
  // So a scoped key cannot probe ticket ids.
  if (!mayReadAll(principal) && !principal.customers.has(status.customerId)) throw notFound(workflowId);
  trace.customerId = status.customerId;
  return { status: 200, body: status };
}

/** POST /investigations/:id/approve | /deny {requestId, approver?, reason?}: the validated update. */
export async function decide(ctx: RouteContext, req: IncomingMessage, principal: Principal, workflowId: string, decision: 'approved' | 'denied'): Promise<Answer> {
  if (principal.approvers.size === 0) {
    throw new HttpError(403, 'these credentials may not decide refunds; use a key with an approver:<name> grant');
  }
  const body = await readJsonBody(req, undefined, 'a JSON object: {"requestId": "...", "reason": "..."}');
  const parsed = DecisionBody.safeParse(body);
  if (!parsed.success) throw new HttpError(400, `invalid decision: ${describeIssues(parsed.error)}`);
  const approver = parsed.data.approver ?? soleApprover(principal);
  if (!approver) throw new HttpError(400, 'invalid decision: approver: required (the name of the person deciding)');
  if (!mayDecideAs(principal, approver)) throw new HttpError(403, `these credentials may not decide refunds as ${approver}`);
  const { requestId, reason } = parsed.data;
  const result = await ctx
    .temporal(
      'sending the decision',
      // The audit trail records the channel and the key, as the console's decisions do.
      () => decideRefund(ctx.deps.client, workflowId, { requestId, decision, approver, via: `http ${principal.label}`, ...(reason ? { reason } : {}) }),
      ctx.updateTimeoutMs,
    )
    .catch((error: Error) => {
      if (error instanceof InvestigationNotFoundError) throw notFound(workflowId);
      // The validator's refusals keep their kind: already decided is 409, the rest 422.
      throw error;
    });
  return { status: 200, body: { workflowId, requestId: result.requestId, decision: result.decision, approver } };
}
