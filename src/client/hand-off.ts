import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { NotFoundError, RefusedError } from '../errors';
import { humanReplyUpdate, resumeUpdate } from '../workflows/investigation-api';

// What a person does with a case that needs a person (status needs_human): ask the
// investigation to carry on, or answer the customer themselves. Both go through validated
// updates, so a case that is not waiting for a person refuses with the reason.

export type { BrokenRun } from '../schemas/investigation';

async function update<T>(workflowId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as Error).name === 'WorkflowNotFoundError') throw new NotFoundError(`no investigation ${workflowId} is running`);
    if (error instanceof WorkflowUpdateFailedError) throw new RefusedError(error.cause instanceof Error ? error.cause.message : error.message);
    throw error;
  }
}

/** `casework resume`: the investigation tries again, told that `by` asked it to. */
export function resumeInvestigation(client: Client, workflowId: string, input: { by: string; note?: string }): Promise<{ resumed: true }> {
  return update(workflowId, () => client.workflow.getHandle(workflowId).executeUpdate(resumeUpdate, { args: [input] }));
}

/** `casework reply`: a person's own reply to the customer, recorded as the case's answer. */
export function replyAsPerson(client: Client, workflowId: string, input: { by: string; text: string }): Promise<{ replied: true }> {
  return update(workflowId, () => client.workflow.getHandle(workflowId).executeUpdate(humanReplyUpdate, { args: [input] }));
}
