import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { InvestigationStatus } from '../schemas/investigation';
import type { investigation } from '../workflows/investigation';

/**
 * How many replies and notes the closed run of `workflowId` numbered (its result's outbox), so a
 * run started over it numbers its desk posts after them: a post's number is part of its
 * idempotency key, and a reused number would be skipped by the desk as already posted.
 * Undefined when that run left no result (a broken run, whose recovery carries its outbox).
 */
export async function deskNumbersOf(client: Client, workflowId: string): Promise<{ replies: number; notes: number } | undefined> {
  try {
    const closed: InvestigationStatus = await client.workflow.getHandle<typeof investigation>(workflowId).result();
    return closed.desk ? { replies: closed.desk.replies, notes: closed.desk.notes } : undefined;
  } catch (error) {
    if (error instanceof WorkflowFailedError) return undefined;
    throw error;
  }
}
