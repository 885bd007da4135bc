import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { NotFoundError, RefusedError } from '../errors';
import type { BrokenRun, InvestigationStatus } from '../schemas/investigation';
import { brokenRunOf } from './recovery';
import { humanReplyUpdate, resumeUpdate, statusQuery } from '../workflows/investigation-api';

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

/**
 * The status of an investigation whose latest run may have ended badly: the status query's
 * answer, with `brokenRun` set when the run FAILED, was TERMINATED, TIMED_OUT or CANCELLED —
 * a bug (a failure casework expects becomes needs_human, not a failed run).
 */
export async function readStatusOrBroken(client: Client, workflowId: string): Promise<InvestigationStatus & { brokenRun?: BrokenRun }> {
  const handle = client.workflow.getHandle(workflowId);
  let description;
  try {
    description = await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as Error).name === 'WorkflowNotFoundError') throw new NotFoundError(`no investigation ${workflowId}`);
    throw error;
  }
  const state = description.status.name;
  let queryError: unknown;
  const status = await handle.query(statusQuery).catch((error: unknown) => {
    queryError = error;
    return undefined;
  });
  const broken = brokenRunOf(state);
  if (status) return broken ? { ...status, brokenRun: broken } : status;
  // A run that works but did not answer (still starting, no worker): the caller hears why.
  if (!broken) throw queryError;
  // A run that broke before it answered anything: report what Temporal knows.
  return {
    workflowId,
    ticketId: '',
    customerId: '',
    status: 'needs_human',
    step: 0,
    model: null,
    lastReply: null,
    pendingApproval: null,
    decisions: [],
    totals: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0 },
    steps: [],
    agentNotes: { found: [], ruled_out: [], to_do: [] },
    caseNotes: null,
    transcriptMessages: 0,
    continuedAsNew: 0,
    handOff: null,
    refunds: [],
    brokenRun: broken,
  };
}
