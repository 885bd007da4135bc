import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { inTransaction } from './pool';

// Retention (docs/operations.md, "Retention"): what casework keeps about closed investigations
// is deleted once it is older than its retention, in batches, as the role `casework_retention`
// (migrations/032), which may delete these rows and nothing else; casework_app may not delete
// content at all. Each batch is its own short transaction, so a large backlog never holds locks
// for long and a run cut short resumes where it stopped.

/** The role retention deletes as. */
export const RETENTION_ROLE = 'casework_retention';

/** The stores retention empties, as metrics and reports name them. */
export const RETENTION_STORES = ['transcript_log', 'model_replies', 'customer_payloads', 'payload_blobs', 'memory_cases'] as const;

/** One store retention empties. */
export type RetentionStore = (typeof RETENTION_STORES)[number];

/** How old each kind of row may get, in days, and how many rows one batch deletes. */
export interface RetentionSettings {
  /** Transcript entries and kept model replies of an investigation idle this long. */
  transcriptDays: number;
  /** Stored payloads (payload_blobs, customer_payloads) not stored again for this long: the namespace's retention plus the longest run. */
  payloadDays: number;
  /** Memory of closed cases closed this long ago. */
  caseMemoryDays: number;
  batchSize: number;
}

const Count = z.object({ n: z.number().int() });
const Ids = z.array(z.object({ workflow_id: z.string() }));

/** Runs `fn` in one transaction as the retention role; Postgres errors mapped to casework's. */
export function asRetentionRole<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, () => `BEGIN; SET LOCAL ROLE ${RETENTION_ROLE}`, fn);
}

/** Investigations whose newest transcript entry and kept reply are both older than `cutoff`, at most `limit`. */
export async function idleInvestigations(pool: Pool, cutoff: Date, limit: number): Promise<string[]> {
  const rows: unknown = await asRetentionRole(pool, async (client) => {
    const { rows } = await client.query<{ workflow_id: string }>(
      `SELECT workflow_id FROM (
         SELECT workflow_id, max(created_at) AS newest FROM transcript_log GROUP BY workflow_id
         UNION ALL
         SELECT workflow_id, max(created_at) FROM model_replies GROUP BY workflow_id
       ) t GROUP BY workflow_id HAVING max(newest) < $1 ORDER BY workflow_id LIMIT $2`,
      [cutoff.toISOString(), limit],
    );
    return rows;
  });
  return Ids.parse(rows).map((r) => r.workflow_id);
}

/** Deletes up to `batchSize` transcript entries and kept replies of these investigations; returns rows removed per store. */
export async function deleteInvestigationContent(pool: Pool, workflowIds: readonly string[], batchSize: number): Promise<{ transcript_log: number; model_replies: number }> {
  return asRetentionRole(pool, async (client) => {
    const log = await client.query(
      `WITH gone AS (DELETE FROM transcript_log WHERE (workflow_id, seq) IN (
         SELECT workflow_id, seq FROM transcript_log WHERE workflow_id = ANY($1::text[]) LIMIT $2) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [workflowIds, batchSize],
    );
    const replies = await client.query(
      `WITH gone AS (DELETE FROM model_replies WHERE (workflow_id, run_id, activity_id) IN (
         SELECT workflow_id, run_id, activity_id FROM model_replies WHERE workflow_id = ANY($1::text[]) LIMIT $2) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [workflowIds, batchSize],
    );
    return { transcript_log: Count.parse(log.rows[0]).n, model_replies: Count.parse(replies.rows[0]).n };
  });
}

/** The customers (and, for payloads stored without one, the investigations) whose customer payloads are older than `cutoff`. */
export async function staleCustomerPayloadOwners(pool: Pool, cutoff: Date): Promise<{ customers: string[]; workflows: string[] }> {
  const rows: unknown = await asRetentionRole(pool, async (client) => {
    const { rows } = await client.query<{ customer_id: string | null; workflow_id: string | null }>(
      `SELECT DISTINCT customer_id, CASE WHEN customer_id IS NULL THEN workflow_id END AS workflow_id FROM customer_payloads WHERE last_stored_at < $1`,
      [cutoff.toISOString()],
    );
    return rows;
  });
  const parsed = z.array(z.object({ customer_id: z.string().nullable(), workflow_id: z.string().nullable() })).parse(rows);
  return {
    customers: parsed.flatMap((r) => (r.customer_id ? [r.customer_id] : [])),
    workflows: parsed.flatMap((r) => (r.workflow_id ? [r.workflow_id] : [])),
  };
}

/**
 * Deletes up to `batchSize` stored payloads of `table` not stored again since `cutoff`, except
 * those of the customers (customer_payloads) or investigations in `keep`: a payload is shared by
 * equal payloads of one customer's investigations, so a running one keeps all of its customer's.
 */
export async function deleteStalePayloads(
  pool: Pool,
  table: 'customer_payloads' | 'payload_blobs',
  cutoff: Date,
  batchSize: number,
  keep: { customers: readonly string[]; workflows: readonly string[] } = { customers: [], workflows: [] },
): Promise<number> {
  const spare =
    table === 'customer_payloads'
      ? 'AND (customer_id IS NULL OR customer_id <> ALL($3::text[])) AND (customer_id IS NOT NULL OR workflow_id IS NULL OR workflow_id <> ALL($4::text[]))'
      : 'AND cardinality($3::text[]) >= 0 AND cardinality($4::text[]) >= 0';
  return asRetentionRole(pool, async (client) => {
    const { rows } = await client.query(
      `WITH gone AS (DELETE FROM ${table} WHERE sha256 IN (SELECT sha256 FROM ${table} WHERE last_stored_at < $1 ${spare} LIMIT $2) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [cutoff.toISOString(), batchSize, [...keep.customers], [...keep.workflows]],
    );
    return Count.parse(rows[0]).n;
  });
}

/** Deletes up to `batchSize` memory rows of cases closed before `cutoff` (a date), any customer's. */
export async function deleteOldCaseMemory(pool: Pool, cutoff: Date, batchSize: number): Promise<number> {
  return asRetentionRole(pool, async (client) => {
    const { rows } = await client.query(
      `WITH gone AS (DELETE FROM memory_cases WHERE case_id IN (SELECT case_id FROM memory_cases WHERE closed_on < $1::date LIMIT $2) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [cutoff.toISOString().slice(0, 10), batchSize],
    );
    return Count.parse(rows[0]).n;
  });
}
