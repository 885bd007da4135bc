import type { Client } from '@temporalio/client';
import { SA } from '../schemas/search-attributes';
import { inputOfHistory } from './case-status';
import { patchMarkers, strandingPatches } from './removed-patches';

// Before a release that removes a way of running from the workflow code, the runs recorded in
// that way must have closed: their histories would not replay. Two ways are checked, on each
// running investigation's current run (continue-as-new starts a new history and carries the
// settings, so a long case's current run is what its next workflow task replays):
// - the retired in-workflow transcript, recorded in the run's input: settings without
//   historyByReference. The input is encrypted, so this reads it through the client's data
//   converter: the only way to tell without the keys is the coarser StartTime filter in
//   docs/deploy.md;
// - a patch this release removed, recorded by patched() rather than deprecatePatch(): the run
//   began on a build from before the deprecating one (removed-patches.ts).

/** A running investigation whose current run would not replay on this release, and why. */
export interface UndrainedRun {
  workflowId: string;
  runId: string;
  /** When the current run began (ISO). */
  startedAt: string;
  /** The case status its search attributes show, when set. */
  status?: string;
  /** It keeps its transcript in the workflow (the retired mode). */
  inWorkflowTranscript: boolean;
  /** The removed patches whose markers its history recorded without the deprecated flag. */
  patches: string[];
}

/** The visibility query for running investigations, on one task queue when given. */
export function runningInvestigationsQuery(taskQueue?: string): string {
  const queue = taskQueue ? ` AND TaskQueue="${taskQueue.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : '';
  return `WorkflowType="investigation" AND ExecutionStatus="Running"${queue}`;
}

/** The running investigations (on `taskQueue`, or all) whose current run would not replay on this release. */
export async function undrainedRuns(client: Client, options: { taskQueue?: string } = {}): Promise<UndrainedRun[]> {
  const found: UndrainedRun[] = [];
  for await (const execution of client.workflow.list({ query: runningInvestigationsQuery(options.taskQueue), pageSize: 100 })) {
    const run = { workflowId: execution.workflowId, runId: execution.runId };
    // One read of the history answers both: its started event holds the input, its markers the patches.
    const events = (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [];
    const input = await inputOfHistory(client.options.loadedDataConverter, events);
    const patches = strandingPatches(await patchMarkers(client.options.loadedDataConverter, events));
    const inWorkflowTranscript = input?.settings?.historyByReference !== true;
    if (!inWorkflowTranscript && patches.length === 0) continue;
    const status = execution.typedSearchAttributes.get(SA.status);
    found.push({ ...run, startedAt: execution.startTime.toISOString(), ...(status ? { status } : {}), inWorkflowTranscript, patches });
  }
  return found;
}
