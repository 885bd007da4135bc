import type { PoolClient } from 'pg';
import { z } from 'zod';
import { REFUND_KINDS, type LedgerCharge, type LedgerPending, type LedgerRefund, type OrderLedger } from '../context/ledger';
import { isoTimestamp } from './rows';

// The order money ledger's statements (migrations/024_order_ledger.sql, 030_payment_provider.sql,
// 033_shop_orders.sql), one function each, every row parsed. An order's currency and total are
// what the shop last reported (ledger_orders), whichever adapter holds it. Captures and processor refunds come from the shop's
// payment records and the payment provider's last report (the views ledger_charges and
// ledger_refunds, which the database's own check reads too); casework's own refunds and
// requests from its refund trail. Every function runs inside withCustomer: an order belongs to one customer, so the
// customer scope never hides part of an order's ledger.

const OrderRow = z.object({ order_id: z.string(), currency: z.string().min(1), total_cents: z.number().int() });

/**
 * Takes the order's ledger lock for the rest of the transaction (creating its ledger row on
 * first use): every refund of the order, and every request filed on it, checks the ledger
 * behind this lock, so two workers cannot both pass the same check. The refunds trigger takes
 * the same lock. Returns the order's currency and total, or undefined when there is no such order.
 */
export async function lockOrderLedger(client: PoolClient, customerId: string, orderId: string): Promise<z.infer<typeof OrderRow> | undefined> {
  const { rows } = await client.query(
    `WITH o AS (SELECT order_id, customer_id, currency, total_cents FROM ledger_orders WHERE customer_id = $1 AND order_id = $2),
          opened AS (INSERT INTO order_ledgers (order_id, customer_id, currency) SELECT order_id, customer_id, currency FROM o ON CONFLICT DO NOTHING)
     SELECT order_id, currency, total_cents FROM o`,
    [customerId, orderId],
  );
  if (!rows.length) return undefined;
  await client.query('SELECT 1 FROM order_ledgers WHERE customer_id = $1 AND order_id = $2 FOR UPDATE', [customerId, orderId]);
  return OrderRow.parse(rows[0]);
}

/** The order's currency and total as the ledger knows them (the shop's last report, else the demo's record), without a lock. */
export async function orderTotals(client: PoolClient, customerId: string, orderId: string): Promise<z.infer<typeof OrderRow> | undefined> {
  const { rows } = await client.query('SELECT order_id, currency, total_cents FROM ledger_orders WHERE customer_id = $1 AND order_id = $2', [customerId, orderId]);
  return rows.length ? OrderRow.parse(rows[0]) : undefined;
}

const ChargeRow = z.object({ charge_id: z.string(), amount_cents: z.number().int(), at: isoTimestamp });

/** The order's captured charges, oldest first: the shop's payment records and the payment provider's last report (migrations/030_payment_provider.sql). */
export async function capturedCharges(client: PoolClient, customerId: string, orderId: string): Promise<LedgerCharge[]> {
  const { rows } = await client.query(`SELECT charge_id, amount_cents, at FROM ledger_charges WHERE customer_id = $1 AND order_id = $2 ORDER BY at, seq`, [customerId, orderId]);
  return rows.map((row) => ChargeRow.parse(row));
}

const RefundRow = z.object({
  refund_id: z.string(),
  amount_cents: z.number().int(),
  kind: z.enum(REFUND_KINDS as [LedgerRefund['kind'], ...LedgerRefund['kind'][]]),
  charge_id: z.string().nullable(),
  at: isoTimestamp,
  request_id: z.string().nullable(),
});

/**
 * Every refund of the order that counts, oldest first: casework's (with kind and charge) unless
 * the provider refused or failed it, and the processor's or provider's made outside casework
 * (a refund carrying a casework refund id is that same refund, counted once), which name only the order.
 */
export async function orderRefunds(client: PoolClient, customerId: string, orderId: string): Promise<LedgerRefund[]> {
  const { rows } = await client.query(
    `SELECT refund_id, amount_cents, kind, charge_id, at, request_id FROM ledger_refunds WHERE customer_id = $1 AND order_id = $2 ORDER BY at, refund_id`,
    [customerId, orderId],
  );
  return rows.map((row) => RefundRow.parse(row));
}

const PendingRow = z.object({
  request_id: z.string(),
  workflow_id: z.string(),
  amount_cents: z.number().int(),
  kind: RefundRow.shape.kind,
  charge_id: z.string().nullable(),
  status: z.enum(['awaiting_approval', 'approved']),
});

/**
 * Requests on the order still waiting for a decision or their payment, in every case, oldest
 * first. Requests left undecided past their expiry (their investigation ended without deciding)
 * are not pending any more (request_refund marks them expired).
 */
export async function pendingRequests(client: PoolClient, customerId: string, orderId: string): Promise<LedgerPending[]> {
  const { rows } = await client.query(
    `SELECT request_id, workflow_id, amount_cents, kind, charge_id, status FROM refund_requests
      WHERE customer_id = $1 AND order_id = $2
        AND (status = 'approved' OR (status = 'awaiting_approval' AND expires_at > now()))
      ORDER BY requested_at, request_id`,
    [customerId, orderId],
  );
  return rows.map((row) => {
    const p = PendingRow.parse(row);
    return {
      request_id: p.request_id,
      ticket_id: p.workflow_id.replace(/^investigation-/, ''),
      amount_cents: p.amount_cents,
      kind: p.kind,
      charge_id: p.charge_id,
      status: p.status,
    };
  });
}

/** The order's whole ledger now, or undefined when the customer has no such order. */
export async function readOrderLedger(client: PoolClient, customerId: string, orderId: string): Promise<OrderLedger | undefined> {
  const order = await orderTotals(client, customerId, orderId);
  if (!order) return undefined;
  const charges = await capturedCharges(client, customerId, orderId);
  const refunds = await orderRefunds(client, customerId, orderId);
  const pending = await pendingRequests(client, customerId, orderId);
  return { order_id: order.order_id, currency: order.currency, total_cents: order.total_cents, charges, refunds, pending };
}

/** True when a database error is the ledger trigger refusing a refund (migrations/024_order_ledger.sql). */
export function isLedgerRefusal(error: unknown): error is Error & { constraint: string } {
  const e = error as { code?: unknown; constraint?: unknown };
  return e?.code === '23514' && typeof e.constraint === 'string' && e.constraint.startsWith('order_ledger_');
}
