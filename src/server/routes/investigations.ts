import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { readCaseStatus } from '../../client/case-status';
import { decideRefund, InvestigationNotFoundError } from '../../client/investigations';
import { ticketOwner } from '../../db/tickets';
import { NotFoundError } from '../../errors';
import { investigationId, ticketIdOf } from '../../schemas/event';
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
 * A key scoped to customers may read only their investigations. Checked in Postgres (the ticket
 * gate records each ticket's owner) before Temporal is asked anything, so another customer's
 * case, a case that does not exist and a Temporal outage all look alike: not found.
 */
async function checkScope(ctx: RouteContext, principal: Principal, workflowId: string): Promise<void> {
  if (mayReadAll(principal)) return;
  const ticketId = ticketIdOf(workflowId);
  const owner = ticketId ? await ticketOwner(ctx.deps.pool, ticketId) : undefined;
  if (!owner || !principal.customers.has(owner)) throw notFound(workflowId);
}

/**
 * GET /investigations/:id: the investigation's status. A running case answers from its status
 * query (503 with Retry-After when no worker answers in time); a closed one from the final
 * status its run returned, with no worker needed; a broken run (FAILED, TERMINATED, TIMED_OUT,
 * CANCELLED: a bug; the next event recovers it) with `brokenRun`. Another customer's
 * investigation is "not found", decided before Temporal is asked.
 */
export async function getInvestigation(ctx: RouteContext, principal: Principal, workflowId: string, trace: Trace): Promise<Answer> {
  await checkScope(ctx, principal, workflowId);
  const status = await ctx
    .temporal('reading the status', () => readCaseStatus(ctx.deps.client, workflowId, { waitMs: queryWaitMs(ctx) }))
    .catch((error: Error) => {
      if (error instanceof NotFoundError) throw notFound(workflowId);
      // A run that has not finished its first workflow task yet has no query handler.
      if (error.name === 'QueryNotRegisteredError') {
        throw new HttpError(503, `investigation ${workflowId} is starting; ask again shortly`, { 'retry-after': '1' });
      }
      throw error;
    });
  // The run's own record agrees with the gate's; checked again so a scoped key never sees another customer's case.
  if (!mayReadAll(principal) && !principal.customers.has(status.customerId)) throw notFound(workflowId);
  trace.customerId = status.customerId;
  return { status: 200, body: status };
}

/** How long a read waits for a worker's answer: inside the route's own Temporal deadline, leaving room for describe. */
function queryWaitMs(ctx: RouteContext): number {
  return Math.max(500, ctx.temporalTimeoutMs - 1_000);
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
