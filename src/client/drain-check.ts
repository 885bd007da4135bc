import type { Client } from '@temporalio/client';
import { SA } from '../schemas/search-attributes';
import { runInput } from './case-status';

// Before a release that removes a way of running from the workflow code, the runs recorded in
// that way must have closed: their histories would not replay. The retired in-workflow transcript
// is recorded in each run's input: a run started with it has settings without historyByReference
// (continue-as-new carries the settings, so a long case's current run says how it began). The
// input is encrypted, so this reads it through the client's data converter: the only way to tell
// without the keys is the coarser StartTime filter in docs/deploy.md.

/** A running investigation whose current run keeps its transcript in the workflow. */
export interface InWorkflowTranscriptRun {
  workflowId: string;
  runId: string;
  /** When the current run began (ISO). */
  startedAt: string;
  /** The case status its search attributes show, when set. */
  status?: string;
}

/** The visibility query for running investigations, on one task queue when given. */
export function runningInvestigationsQuery(taskQueue?: string): string {
  const queue = taskQueue ? ` AND TaskQueue="${taskQueue.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : '';
  return `WorkflowType="investigation" AND ExecutionStatus="Running"${queue}`;
}

/** The running investigations (on `taskQueue`, or all) whose current run began in the retired in-workflow transcript mode. */
export async function inWorkflowTranscriptRuns(client: Client, options: { taskQueue?: string } = {}): Promise<InWorkflowTranscriptRun[]> {
  const found: InWorkflowTranscriptRun[] = [];
  for await (const execution of client.workflow.list({ query: runningInvestigationsQuery(options.taskQueue), pageSize: 100 })) {
    const input = await runInput(client, { workflowId: execution.workflowId, runId: execution.runId, taskQueue: execution.taskQueue, state: 'running' });
    if (input?.settings?.historyByReference === true) continue;
    const status = execution.typedSearchAttributes.get(SA.status);
    found.push({ workflowId: execution.workflowId, runId: execution.runId, startedAt: execution.startTime.toISOString(), ...(status ? { status } : {}) });
  }
  return found;
}
