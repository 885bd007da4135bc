import type { Pool } from 'pg';
import { z } from 'zod';
import { mapPgError } from './errors';

// The runs an erasure asked to close (migrations/035_erasure_closures.sql): recorded before the
// close is sent, marked told once the run has ended and the customer and the team were told, so
// a retried erasure finishes exactly the runs an earlier attempt closed. One function per statement.

/** One run an erasure closed, not yet told. */
export interface ErasureClosure {
  workflowId: string;
  runId: string;
  requestedBy: string;
}

const Row = z.object({ workflow_id: z.string(), run_id: z.string(), requested_by: z.string() });

async function query(pool: Pool, text: string, values: unknown[]) {
  try {
    return await pool.query(text, values);
  } catch (error) {
    throw mapPgError(error);
  }
}

/** Records that an erasure closes this run (again: nothing changes). */
export async function recordClosure(pool: Pool, input: { workflowId: string; runId: string; customerId: string; by: string }): Promise<void> {
  await query(
    pool,
    `INSERT INTO erasure_closures (workflow_id, run_id, customer_id, requested_by) VALUES ($1, $2, $3, left($4, 200))
     ON CONFLICT (workflow_id, run_id) DO NOTHING`,
    [input.workflowId, input.runId, input.customerId, input.by],
  );
}

/** The customer's runs an erasure closed whose customer and team are not told yet, oldest first. */
export async function untoldClosures(pool: Pool, customerId: string): Promise<ErasureClosure[]> {
  const { rows } = await query(
    pool,
    'SELECT workflow_id, run_id, requested_by FROM erasure_closures WHERE customer_id = $1 AND told_at IS NULL ORDER BY requested_at, workflow_id',
    [customerId],
  );
  return rows.map((raw) => {
    const row = Row.parse(raw);
    return { workflowId: row.workflow_id, runId: row.run_id, requestedBy: row.requested_by };
  });
}

/** Marks the run told: a later erasure of the customer leaves it alone. */
export async function markTold(pool: Pool, closure: Pick<ErasureClosure, 'workflowId' | 'runId'>): Promise<void> {
  await query(pool, 'UPDATE erasure_closures SET told_at = now() WHERE workflow_id = $1 AND run_id = $2 AND told_at IS NULL', [closure.workflowId, closure.runId]);
}
