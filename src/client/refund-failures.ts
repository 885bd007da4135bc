import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Pool } from 'pg';
import { nextFreeSeq } from '../db/transcript-log';
import type { FailedRefund, InvestigationSettings } from '../schemas/investigation';
import { deskNumbersOf } from './closed-run';
import { workflowTaskTimeoutFor } from '../settings';
import { ticketIdOf } from '../schemas/event';
import { SA } from '../schemas/search-attributes';
import { refundFailedSignal } from '../workflows/investigation-api';
import { investigation } from '../workflows/investigation';

// A refund the payment provider reports failed or canceled (its webhook) reaches the case that
// paid it. A running case is signalled. A case that has closed is reopened: a fresh run of its
// workflow id, started by the failure alone, hands it to a person as a running case does (the
// desk's internal note, the ticket moved to "with a person", the customer told only that a
// colleague will pick it up), and waits for that person. Its transcript-log entries and desk posts
// are numbered after the closed run's, so nothing it writes collides with what that run wrote.

/** How the failure reached its case. */
export type FailureDelivery = 'signalled' | 'reopened';

/** The ticket an investigation's workflow id names; anything else is not a case a refund can belong to. */
function ticketOf(workflowId: string): string {
  const ticketId = ticketIdOf(workflowId);
  if (ticketId === undefined) throw new Error(`${workflowId} is not an investigation's workflow id`);
  return ticketId;
}

/** Tells the case `owner.workflowId` that its refund failed, reopening it when it has closed. */
export async function reportRefundFailure(
  client: Client,
  pool: Pool,
  owner: { workflowId: string; customerId: string },
  failure: FailedRefund,
  options: { taskQueue: string; settings: InvestigationSettings },
): Promise<FailureDelivery> {
  try {
    await client.workflow.getHandle(owner.workflowId).signal(refundFailedSignal, failure);
    return 'signalled';
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError) && (error as Error).name !== 'WorkflowNotFoundError') throw error;
  }
  const ticketId = ticketOf(owner.workflowId);
  const logFrom = await nextFreeSeq(pool, owner.workflowId);
  const deskFrom = await deskNumbersOf(client, owner.workflowId);
  // Signal-with-start: if another event reopened the case meanwhile, that run is signalled instead.
  await client.workflow.signalWithStart(investigation, {
    workflowId: owner.workflowId,
    taskQueue: options.taskQueue,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    workflowTaskTimeout: workflowTaskTimeoutFor(options.settings),
    args: [{ ticketId, customerId: owner.customerId, settings: options.settings, ...(logFrom > 1 ? { logFrom } : {}), ...(deskFrom ? { deskFrom } : {}) }],
    signal: refundFailedSignal,
    signalArgs: [failure],
    typedSearchAttributes: [
      { key: SA.customerId, value: owner.customerId },
      { key: SA.ticketId, value: ticketId },
    ],
    staticSummary: `Ticket ${ticketId} from ${owner.customerId}, reopened: refund ${failure.refund_id} ${failure.status} at ${failure.provider}`,
  });
  return 'reopened';
}
