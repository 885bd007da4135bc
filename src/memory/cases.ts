import type { PoolClient } from 'pg';
import { CaseRow, parseRows, type CaseRecord } from './schemas';
import { firstRow } from '../db/rows';

// One function per statement on memory_cases.

const COLUMNS = `case_id, source_run, ticket_id, order_ids, problem, resolution,
  to_char(closed_on, 'YYYY-MM-DD') AS closed_on, recorded_at`;

/**
 * Records the outcome of one investigation run, keyed on its workflow id. A retry with the
 * same outcome changes nothing; a later outcome of the same run replaces the earlier one.
 * Returns the row and whether this call wrote it.
 */
export async function upsertCase(
  client: PoolClient,
  input: {
    customerId: string;
    sourceRun: string;
    ticketId: string;
    orderIds: string[];
    problem: string;
    resolution: string;
    closedOn: string;
    recordedAt: string;
  },
): Promise<{ record: CaseRecord; written: boolean }> {
  const { rows } = await client.query(
    `INSERT INTO memory_cases (customer_id, source_run, ticket_id, order_ids, problem, resolution, closed_on, recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (customer_id, source_run) DO UPDATE
        SET ticket_id = EXCLUDED.ticket_id, order_ids = EXCLUDED.order_ids, problem = EXCLUDED.problem,
            resolution = EXCLUDED.resolution, closed_on = EXCLUDED.closed_on, recorded_at = EXCLUDED.recorded_at
      WHERE (memory_cases.ticket_id, memory_cases.order_ids, memory_cases.problem, memory_cases.resolution, memory_cases.closed_on)
            IS DISTINCT FROM (EXCLUDED.ticket_id, EXCLUDED.order_ids, EXCLUDED.problem, EXCLUDED.resolution, EXCLUDED.closed_on)
     RETURNING ${COLUMNS}`,
    [input.customerId, input.sourceRun, input.ticketId, input.orderIds, input.problem, input.resolution, input.closedOn, input.recordedAt],
  );
  if (rows.length > 0) return { record: firstRow(parseRows(CaseRow, rows, 'memory case'), 'memory case written'), written: true };
  const existing = await getCaseByRun(client, input.customerId, input.sourceRun);
  if (!existing) throw new Error(`case for run ${input.sourceRun} vanished while being recorded`);
  return { record: existing, written: false };
}

/** The case one run recorded, if any. */
export async function getCaseByRun(client: PoolClient, customerId: string, sourceRun: string): Promise<CaseRecord | undefined> {
  const { rows } = await client.query(`SELECT ${COLUMNS} FROM memory_cases WHERE customer_id = $1 AND source_run = $2`, [customerId, sourceRun]);
  return parseRows(CaseRow, rows, 'memory case')[0];
}

/** The customer's most recent cases, newest first. */
export async function listRecentCases(client: PoolClient, customerId: string, limit: number): Promise<CaseRecord[]> {
  const { rows } = await client.query(`SELECT ${COLUMNS} FROM memory_cases WHERE customer_id = $1 ORDER BY closed_on DESC, recorded_at DESC LIMIT $2`, [customerId, limit]);
  return parseRows(CaseRow, rows, 'memory case');
}

/** Deletes every case of the customer; returns how many. */
export async function deleteAllCases(client: PoolClient, customerId: string): Promise<number> {
  const { rowCount } = await client.query('DELETE FROM memory_cases WHERE customer_id = $1', [customerId]);
  return rowCount ?? 0;
}
