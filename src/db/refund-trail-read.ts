import type { Pool } from 'pg';
import { z } from 'zod';
import { withCustomer } from './pool';

// The customer's refund trail as one list, for a subject-access export (migrations/003): each
// request with its decision and the refund issued, read under the customer's row-level scope.

/** One refund request with what became of it. */
export interface RefundTrailEntry {
  request_id: string;
  order_id: string;
  amount_cents: number;
  reason: string;
  workflow_id: string;
  requested_at: string;
  status: string;
  decision: { decision: string; approver: string; reason: string | null; decided_at: string } | null;
  refund: { refund_id: string; amount_cents: number; issued_at: string } | null;
}

const Row = z.object({
  request_id: z.string(),
  order_id: z.string(),
  amount_cents: z.number().int(),
  reason: z.string(),
  workflow_id: z.string(),
  requested_at: z.date(),
  status: z.string(),
  decision: z.string().nullable(),
  approver: z.string().nullable(),
  decision_reason: z.string().nullable(),
  decided_at: z.date().nullable(),
  refund_id: z.string().nullable(),
  refund_cents: z.number().int().nullable(),
  issued_at: z.date().nullable(),
});

/** Every refund request of the customer, oldest first, with its decision and refund. */
export async function refundTrailOf(pool: Pool, customerId: string): Promise<RefundTrailEntry[]> {
  return withCustomer(pool, customerId, async (client) => {
    const { rows } = await client.query(
      `SELECT q.request_id, q.order_id, q.amount_cents, q.reason, q.workflow_id, q.requested_at, q.status,
              d.decision, d.approver, d.reason AS decision_reason, d.decided_at,
              r.refund_id, r.amount_cents AS refund_cents, r.issued_at
         FROM refund_requests q
         LEFT JOIN refund_decisions d ON d.request_id = q.request_id
         LEFT JOIN refunds r ON r.request_id = q.request_id
        WHERE q.customer_id = $1 ORDER BY q.requested_at, q.request_id`,
      [customerId],
    );
    return rows.map((raw) => {
      const row = Row.parse(raw);
      return {
        request_id: row.request_id,
        order_id: row.order_id,
        amount_cents: row.amount_cents,
        reason: row.reason,
        workflow_id: row.workflow_id,
        requested_at: row.requested_at.toISOString(),
        status: row.status,
        decision: row.decision ? { decision: row.decision, approver: row.approver ?? '', reason: row.decision_reason, decided_at: row.decided_at!.toISOString() } : null,
        refund: row.refund_id ? { refund_id: row.refund_id, amount_cents: row.refund_cents!, issued_at: row.issued_at!.toISOString() } : null,
      };
    });
  });
}
