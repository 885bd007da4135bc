import type { Pool } from 'pg';
import { ticketsOf } from '../db/customer-keys';
import { investigationId } from '../schemas/event';
import {
  deleteInvestigationContent,
  deleteOldCaseMemory,
  deleteStalePayloads,
  idleInvestigations,
  RETENTION_STORES,
  staleCustomerPayloadOwners,
  type RetentionSettings,
  type RetentionStore,
} from '../db/retention';
import type { RetentionReport } from '../schemas/retention';
import { failuresForTemporal } from './failures';
import { withHeartbeat } from './heartbeat';

// The retention run the schedule starts (src/workflows/retention.ts): each store emptied of
// rows past their retention, batch by batch, as the retention role (src/db/retention.ts).
// Idempotent: a retry deletes what is still there and reports only what it removed itself.

/** What retention needs: the pool (the connecting user may act as casework_retention), its settings, whether an investigation still runs, and where its figures go. */
export interface RetentionDeps {
  pool: Pool;
  settings: RetentionSettings;
  /** True while `workflowId` runs: its transcript must stay, however idle (a case waiting on a person). */
  isRunning(workflowId: string): Promise<boolean>;
  /** Told once per store: rows removed and seconds taken (the worker's metrics). */
  onStore?(store: RetentionStore, rows: number, seconds: number): void;
}

const DAY_MS = 86_400_000;

/** Deletes batches until one comes back short; returns the rows removed. */
async function drain(batch: () => Promise<number>, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await batch();
    total += removed;
    if (removed < batchSize) return total;
  }
}

/** Builds the retention activity. */
export function createRetentionActivities(deps: RetentionDeps) {
  const { pool, settings } = deps;
  const cutoff = (now: string, days: number) => new Date(Date.parse(now) - days * DAY_MS);

  /** Transcript entries and kept replies of investigations idle past their retention and no longer running. */
  async function investigationContent(now: string): Promise<{ transcript_log: number; model_replies: number }> {
    const removed = { transcript_log: 0, model_replies: 0 };
    const skipped = new Set<string>();
    for (;;) {
      const idle = (await idleInvestigations(pool, cutoff(now, settings.transcriptDays), settings.batchSize + skipped.size)).filter((id) => !skipped.has(id));
      if (idle.length === 0) return removed;
      const closed: string[] = [];
      for (const workflowId of idle) {
        if (await deps.isRunning(workflowId)) skipped.add(workflowId);
        else closed.push(workflowId);
      }
      if (closed.length === 0) return removed;
      for (;;) {
        const batch = await deleteInvestigationContent(pool, closed, settings.batchSize);
        removed.transcript_log += batch.transcript_log;
        removed.model_replies += batch.model_replies;
        if (batch.transcript_log < settings.batchSize && batch.model_replies < settings.batchSize) break;
      }
    }
  }

  /**
   * The owners of stale customer payloads that must keep them: a customer with an investigation
   * running (its history may be replayed and reads them, and equal payloads of one customer are
   * shared), and an investigation without an owner that is running.
   */
  async function runningOwners(before: Date): Promise<{ customers: string[]; workflows: string[] }> {
    const stale = await staleCustomerPayloadOwners(pool, before);
    const customers: string[] = [];
    for (const customerId of stale.customers) {
      for (const ticketId of await ticketsOf(pool, customerId)) {
        if (await deps.isRunning(investigationId(ticketId))) {
          customers.push(customerId);
          break;
        }
      }
    }
    const workflows: string[] = [];
    for (const workflowId of stale.workflows) if (await deps.isRunning(workflowId)) workflows.push(workflowId);
    return { customers, workflows };
  }

  return failuresForTemporal({
    /** One retention run at `now` (the workflow's time): every store emptied of what is past its retention; the rows removed and the time taken per store. */
    async applyRetention(input: { now: string }): Promise<RetentionReport> {
      return withHeartbeat(async () => {
        const report = { stores: {} as RetentionReport['stores'] };
        const timed = async (stores: RetentionStore[], run: () => Promise<Partial<Record<RetentionStore, number>>>) => {
          const started = performance.now();
          const rows = await run();
          const seconds = (performance.now() - started) / 1000;
          for (const store of stores) {
            report.stores[store] = { rows: rows[store] ?? 0, seconds };
            deps.onStore?.(store, rows[store] ?? 0, seconds);
          }
        };
        await timed(['transcript_log', 'model_replies'], () => investigationContent(input.now));
        const payloadCutoff = cutoff(input.now, settings.payloadDays);
        await timed(['customer_payloads'], async () => {
          const keep = await runningOwners(payloadCutoff);
          return { customer_payloads: await drain(() => deleteStalePayloads(pool, 'customer_payloads', payloadCutoff, settings.batchSize, keep), settings.batchSize) };
        });
        await timed(['payload_blobs'], async () => ({
          payload_blobs: await drain(() => deleteStalePayloads(pool, 'payload_blobs', payloadCutoff, settings.batchSize), settings.batchSize),
        }));
        await timed(['memory_cases'], async () => ({
          memory_cases: await drain(() => deleteOldCaseMemory(pool, cutoff(input.now, settings.caseMemoryDays), settings.batchSize), settings.batchSize),
        }));
        for (const store of RETENTION_STORES) report.stores[store] ??= { rows: 0, seconds: 0 };
        return report;
      });
    },
  });
}
