import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { CAPTURED_CHARGE, COUNTED_REFUND_CODES, PAYMENT_METHOD_CODES, PAYMENT_STATUS_CODES, describeCode } from './codes';
import { defineTool } from './define';
import { requireOrder } from './orders';
import { withCustomer } from '../../db/pool';
import { isoTimestamp } from '../../db/rows';
import { pendingRequests } from '../../db/ledger';

/** Most charges (and, separately, refunds) listed; totals always count every one. */
export const MAX_PAYMENTS_SHOWN = 10;

/** How a refund casework issued reads until the processor reports it settled. */
export const ISSUED_REFUND_STATUS = 'issued by casework after a recorded approval (settling with the processor)';

const PaymentRow = z.object({
  kind: z.enum(['charge', 'refund']),
  amount_cents: z.number().int(),
  processor_code: z.string(),
  processor_ref: z.string(),
  method_code: z.string(),
  created_at: isoTimestamp,
});

const IssuedRefundRow = z.object({ refund_id: z.string(), amount_cents: z.number().int(), issued_at: isoTimestamp, charge_id: z.string().nullable() });

/** get_payments' result. */
export interface PaymentsResult {
  order_id: string;
  /** The order's currency: every amount is in its minor unit. */
  currency: string;
  charges: { charge_id: string; amount_cents: number; at: string; status: string; method: string }[];
  /** charge_id: the charge a casework refund reversed (absent: the order). */
  refunds: { amount_cents: number; at: string; status: string; charge_id?: string }[];
  showing?: string;
  charged_cents: number;
  refunded_cents: number;
  refundable_cents: number;
  possible_duplicate_charge: boolean;
  /** Refund requests on the order still waiting for a decision or payment, in any case (only when there are some). */
  pending_requests?: { request_id: string; ticket_id: string; amount_cents: number; kind: string; charge_id: string | null }[];
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** True when two captured charges have the same amount: the signature of a retried checkout. */
export function hasDuplicateCharge(capturedAmounts: number[]): boolean {
  return new Set(capturedAmounts).size < capturedAmounts.length;
}

/**
 * An order's charges and refunds with what can still be refunded. Refunds come from the
 * processor's records and from the refunds casework issued (the app may not write payments);
 * a processor refund carrying a casework refund id as its reference is that same refund, counted once.
 */
export async function readPayments(client: PoolClient, customerId: string, orderId: string): Promise<PaymentsResult> {
  const order = await requireOrder(client, customerId, orderId);
  const payments = (
    await client.query(
      `SELECT kind, amount_cents, processor_code, processor_ref, method_code, created_at FROM payments
        WHERE customer_id = $1 AND order_id = $2 ORDER BY created_at, payment_id`,
      [customerId, orderId],
    )
  ).rows.map((row) => PaymentRow.parse(row));
  const issued = (
    await client.query('SELECT refund_id, amount_cents, issued_at, charge_id FROM refunds WHERE customer_id = $1 AND order_id = $2 ORDER BY issued_at, refund_id', [
      customerId,
      orderId,
    ])
  ).rows.map((row) => IssuedRefundRow.parse(row));

  const charges = payments.filter((p) => p.kind === 'charge');
  const issuedIds = new Set(issued.map((r) => r.refund_id));
  const processorRefunds = payments.filter((p) => p.kind === 'refund' && !issuedIds.has(p.processor_ref));
  const captured = charges.filter((c) => c.processor_code === CAPTURED_CHARGE).map((c) => c.amount_cents);
  const counted = processorRefunds.filter((r) => COUNTED_REFUND_CODES.includes(r.processor_code)).map((r) => r.amount_cents);

  const charged = sum(captured);
  const refunded = sum(counted) + sum(issued.map((r) => r.amount_cents));
  const refunds = [
    ...processorRefunds.map((r) => ({ amount_cents: r.amount_cents, at: r.created_at, status: describeCode(PAYMENT_STATUS_CODES, r.processor_code) })),
    ...issued.map((r) => ({ amount_cents: r.amount_cents, at: r.issued_at, status: ISSUED_REFUND_STATUS, ...(r.charge_id ? { charge_id: r.charge_id } : {}) })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const cut = charges.length > MAX_PAYMENTS_SHOWN || refunds.length > MAX_PAYMENTS_SHOWN;
  const pending = await pendingRequests(client, customerId, orderId);

  return {
    order_id: order.order_id,
    currency: order.currency,
    charges: charges.slice(0, MAX_PAYMENTS_SHOWN).map((c) => ({
      charge_id: c.processor_ref,
      amount_cents: c.amount_cents,
      at: c.created_at,
      status: describeCode(PAYMENT_STATUS_CODES, c.processor_code),
      method: describeCode(PAYMENT_METHOD_CODES, c.method_code),
    })),
    refunds: refunds.slice(0, MAX_PAYMENTS_SHOWN),
    ...(cut ? { showing: `the first ${MAX_PAYMENTS_SHOWN} of ${charges.length} charges and ${refunds.length} refunds, oldest first; the totals count them all` } : {}),
    charged_cents: charged,
    refunded_cents: refunded,
    refundable_cents: Math.max(0, charged - refunded),
    possible_duplicate_charge: hasDuplicateCharge(captured),
    ...(pending.length
      ? {
          pending_requests: pending
            .slice(0, MAX_PAYMENTS_SHOWN)
            .map((p) => ({ request_id: p.request_id, ticket_id: p.ticket_id, amount_cents: p.amount_cents, kind: p.kind, charge_id: p.charge_id })),
        }
      : {}),
  };
}

/** get_payments over one pool. */
export function createPaymentTools(deps: { pool: Pool }) {
  return {
    get_payments: defineTool('get_payments', ({ order_id }, context) =>
      withCustomer(deps.pool, context.customerId, (client) => readPayments(client, context.customerId, order_id)),
    ),
  };
}
