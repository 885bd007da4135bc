import type { Client } from '@temporalio/client';
import type { CaseStatus } from '../schemas/investigation';
import type { OpenInvestigationCounts, OpenInvestigationSource } from './metrics';

// The approvals-waiting gauge is a count from Temporal's visibility store, not a tally of this
// process's own events: it stays right across restarts, continue-as-new and many replicas.
// Counts are cached so frequent scrapes (or several replicas) do not hammer visibility.

const OPEN_STATUSES: (keyof OpenInvestigationCounts & CaseStatus)[] = ['investigating', 'awaiting_approval', 'waiting_for_customer', 'needs_human'];

function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The visibility query for running investigations on `taskQueue` in case status `status`. */
export function openInvestigationsQuery(taskQueue: string, status: CaseStatus): string {
  return `ExecutionStatus="Running" AND TaskQueue=${quoted(taskQueue)} AND CaseworkStatus=${quoted(status)}`;
}

/**
 * Counts running investigations by CaseworkStatus with `client.workflow.count`, at most once
 * per `refreshMs`; a scrape during a refresh waits for that refresh instead of starting another.
 */
export function visibilityCounts(client: Client, options: { taskQueue: string; refreshMs: number; timeoutMs?: number }): OpenInvestigationSource {
  let last: { at: number; counts: OpenInvestigationCounts } | undefined;
  let inflight: Promise<OpenInvestigationCounts> | undefined;
  const refresh = async (): Promise<OpenInvestigationCounts> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('visibility count timed out')), options.timeoutMs ?? 3_000);
    });
    try {
      const entries = await Promise.race([
        Promise.all(OPEN_STATUSES.map(async (status) => [status, (await client.workflow.count(openInvestigationsQuery(options.taskQueue, status))).count] as const)),
        timeout,
      ]);
      const counts = Object.fromEntries(entries) as unknown as OpenInvestigationCounts;
      last = { at: Date.now(), counts };
      return counts;
    } finally {
      clearTimeout(timer);
    }
  };
  return async () => {
    if (last && Date.now() - last.at < options.refreshMs) return last.counts;
    inflight ??= refresh().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
}
