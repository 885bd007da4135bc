import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { recordDecision, RefundDecisionInput } from '../activities/tools/refunds';
import { ticketsOf } from '../db/customer-keys';
import { markTold, recordClosure, untoldClosures, type ErasureClosure } from '../db/erasure-closures';
import { withCustomer } from '../db/pool';
import type { PostToDeskInput, PostToDeskResult } from '../desk/post';
import { NotFoundError, NotYetError, UnavailableError } from '../errors';
import { investigationId } from '../schemas/event';
import type { InvestigationStatus } from '../schemas/investigation';
import { HOLDING_REPLY } from '../workflows/hand-off';
import { describeCase } from './case-status';
import { closeTicketSignal, statusQuery } from '../workflows/investigation-api';

// An erasure closes the customer's open investigations first (docs/payload-privacy.md,
// "Erasure"): a running workflow must still replay and read its own conversation, which a
// destroyed key would stop. Each run is closed through the ticket's own close (the signal a
// desk's ticket.closed sends: the run records its case, which the erasure then deletes), and
// waited for, bounded. Once it has ended, a refund it left pending is withdrawn on the refund
// trail (a denial with the reason, first decision wins), the customer gets the holding reply and
// the team an internal note on the desk ticket. Each run is recorded before its close is sent and
// marked told after, so an erasure retried after any failure finishes the same runs, and the
// desk posts carry the run's next numbers, so a retry never posts twice.

/** How long an erasure waits for the runs it closed to end before it says which did not. */
export const CLOSE_WAIT_MS = 120_000;

/** Who the refund trail says withdrew a refund pending on an erased customer's case (as the approval timer is `casework-timer`). */
export const ERASURE_APPROVER = 'casework-erasure';

/** The reason recorded on a refund withdrawn because its customer asked to be erased. */
export const WITHDRAWN_REASON = 'withdrawn: the customer asked for their data to be erased, so the case was closed before anyone decided';

/** The internal note the team reads on the desk ticket of a case an erasure closed. */
export function erasureClosedNote(input: { customerId: string; by: string; withdrawn: string | null }): { body: string; tags: string[]; status: 'with_person' } {
  const refund = input.withdrawn ? ` Refund request ${input.withdrawn}, still waiting for a decision, was withdrawn: nothing was paid.` : '';
  return {
    body:
      `casework: this case was closed because customer ${input.customerId} asked for their data to be erased (erasure by ${input.by}).${refund} ` +
      'The customer was told a colleague will reply here. casework no longer holds this conversation: a person follows up from the desk.',
    tags: ['casework_erased'],
    status: 'with_person',
  };
}

/** Posts one reply or note to the desk ticket of an investigation (the postToDesk activity's function, wired by the caller). */
export type DeskPoster = (input: PostToDeskInput) => Promise<PostToDeskResult>;

/** Where closing acts: the app pool, Temporal, and the desk (absent: no desk is configured, nothing is posted). */
export interface ClosingDeps {
  pool: Pool;
  client: Client;
  post?: DeskPoster;
  /** How long to wait for the runs to end; CLOSE_WAIT_MS when unset. */
  closeWaitMs?: number;
}

/** What became of one investigation an erasure closed. */
export interface ClosedCase {
  workflowId: string;
  runId: string;
  /** The refund request withdrawn on the trail, or null when none was pending. */
  refundWithdrawn: string | null;
  /** How the customer and the team were told: posted to the desk, or why not (no desk for the ticket). */
  told: 'posted' | `not posted: ${string}`;
}

/** One closed case in words: the refund withdrawn, and how the customer and the team were told (or that a person must). */
export function closedCaseLine(c: ClosedCase): string {
  const refund = c.refundWithdrawn ? `refund ${c.refundWithdrawn} withdrawn; ` : '';
  const told = c.told === 'posted' ? 'holding reply and internal note posted to the desk' : `${c.told}: tell the customer and the team yourself`;
  return `${c.workflowId}: ${refund}${told}`;
}

/** Some closed runs did not end in time: they are named, nothing was erased; the same erasure finishes them later. */
export class CasesNotClosedError extends NotYetError {
  constructor(
    readonly customerId: string,
    readonly workflowIds: string[],
    waitedMs: number,
  ) {
    super(
      `customer ${customerId}: ${workflowIds.length} investigation(s) asked to close did not end within ${Math.round(waitedMs / 1000)} s: ${workflowIds.join(', ')}. ` +
        'Nothing was erased; check that a worker runs (casework status <id>), then run the erasure again: it waits for the same runs.',
      { retryAfterSeconds: 30 },
    );
  }
}

/** The customer's investigations that are running now, with their runs (described one by one: visibility may lag, a describe does not; an erased one still describes). */
export async function openInvestigations(deps: Pick<ClosingDeps, 'pool' | 'client'>, customerId: string): Promise<{ workflowId: string; runId: string }[]> {
  const open: { workflowId: string; runId: string }[] = [];
  for (const ticketId of await ticketsOf(deps.pool, customerId)) {
    const run = await describeCase(deps.client, investigationId(ticketId)).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (run?.state === 'running') open.push({ workflowId: run.workflowId, runId: run.runId });
  }
  return open;
}

/**
 * Closes every open investigation of the customer, waits for each to end (bounded), withdraws
 * the refunds they left pending and tells the customer and the team; returns what it did, run by
 * run. Throws CasesNotClosedError naming the runs that did not end in time (after finishing the
 * ones that did), or UnavailableError naming a case whose desk refused the posts.
 */
export async function closeOpenInvestigations(deps: ClosingDeps, input: { customerId: string; by: string }): Promise<ClosedCase[]> {
  const { customerId, by } = input;
  for (const run of await openInvestigations(deps, customerId)) {
    await recordClosure(deps.pool, { ...run, customerId, by });
    // The ticket's own close: the run stops waiting, records its case and ends. Sent again on a retry, it changes nothing.
    await deps.client.workflow.getHandle(run.workflowId, run.runId).signal(closeTicketSignal, { eventId: `erasure-${run.runId}`, customerId });
  }
  const closures = await untoldClosures(deps.pool, customerId);
  const waitMs = deps.closeWaitMs ?? CLOSE_WAIT_MS;
  const ended = await Promise.all(closures.map((closure) => finalStatus(deps.client, closure, waitMs)));
  const closed: ClosedCase[] = [];
  const refused: string[] = [];
  for (const [i, closure] of closures.entries()) {
    const status = ended[i];
    if (status === undefined) continue;
    try {
      closed.push(await tell(deps, customerId, closure, status));
    } catch (error) {
      refused.push(`${closure.workflowId}: ${(error as Error).message}`);
    }
  }
  const late = closures.filter((_, i) => ended[i] === undefined).map((c) => c.workflowId);
  if (late.length) throw new CasesNotClosedError(customerId, late, waitMs);
  if (refused.length) {
    throw new UnavailableError(
      `customer ${customerId}: the case was closed but the desk refused the holding reply or the note, so nothing was erased: ${refused.join('; ')}. ` +
        'Fix the desk (or tell the customer yourself), then run the erasure again: it posts each once.',
    );
  }
  return closed;
}

/** The run's final status once it has ended; null when it ended without one (failed, terminated); undefined when it did not end in time. */
async function finalStatus(client: Client, closure: ErasureClosure, waitMs: number): Promise<InvestigationStatus | null | undefined> {
  const handle = client.workflow.getHandle(closure.workflowId, closure.runId);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
  try {
    return await Promise.race([handle.result() as Promise<InvestigationStatus>, late]);
  } catch {
    // A run that failed or was terminated has ended too; its last state, if a worker can still answer for it, says what was pending.
    return client.withDeadline(Date.now() + 10_000, () => handle.query(statusQuery)).catch(() => null);
  } finally {
    clearTimeout(timer);
  }
}

/** Withdraws the run's pending refund and tells the customer and the team; marks the run told. */
async function tell(deps: ClosingDeps, customerId: string, closure: ErasureClosure, status: InvestigationStatus | null): Promise<ClosedCase> {
  const pending = status?.pendingApproval;
  let refundWithdrawn: string | null = null;
  if (pending && !status.decisions.some((d) => d.requestId === pending.request_id)) {
    const decision = RefundDecisionInput.parse({
      customerId,
      requestId: pending.request_id,
      decision: 'denied',
      approver: ERASURE_APPROVER,
      decidedBy: closure.requestedBy,
      decidedVia: 'erasure',
      reason: WITHDRAWN_REASON,
      decidedAt: new Date().toISOString(),
    });
    // The first decision wins: one a person made before the close stays, and nothing is withdrawn.
    const recorded = await withCustomer(deps.pool, customerId, (client) => recordDecision(client, decision));
    if (recorded.approver === ERASURE_APPROVER) refundWithdrawn = pending.request_id;
  }
  const told = await postToDesk(deps, closure, status, erasureClosedNote({ customerId, by: closure.requestedBy, withdrawn: refundWithdrawn }));
  await markTold(deps.pool, closure);
  return { workflowId: closure.workflowId, runId: closure.runId, refundWithdrawn, told };
}

/**
 * The holding reply and the note, numbered after everything the run itself numbered (its final
 * outbox), so the desk's exactly-once key is new to the ticket and the same on every retry.
 */
async function postToDesk(deps: ClosingDeps, closure: ErasureClosure, status: InvestigationStatus | null, note: ReturnType<typeof erasureClosedNote>): Promise<ClosedCase['told']> {
  if (!deps.post) return 'not posted: no desk is configured in this process';
  if (!status) return 'not posted: the run ended without a status to number the posts after';
  const ticketId = status.ticketId;
  const outbox = status.desk;
  const reply = await deps.post({ workflowId: closure.workflowId, ticketId, kind: 'reply', sequence: (outbox?.replies ?? 0) + 1, body: HOLDING_REPLY });
  if (reply.outcome === 'skipped') return `not posted: ${reply.reason}`;
  await deps.post({ workflowId: closure.workflowId, ticketId, kind: 'note', sequence: (outbox?.notes ?? 0) + 1, body: note.body, tags: note.tags, status: note.status });
  return 'posted';
}
