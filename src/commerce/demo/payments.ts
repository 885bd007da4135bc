import { createHash, randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { withCustomer } from '../../db/pool';
import { isoTimestamp } from '../../db/rows';
import {
  IdempotencyMismatchError,
  ProviderEventError,
  RefundRefusedError,
  type PaymentProvider,
  type ProviderCharge,
  type ProviderRefund,
  type RefundOrder,
} from '../payment-provider';

// The demo shop's payment provider. Its charges are the shop's payment records (the `payments`
// table, processor codes as the processor sent them); its refunds are kept as a provider keeps
// them (demo_provider_refunds, migrations/030_payment_provider.sql): one per idempotency key, the
// same answer to the same key, a key reused with other parameters refused, and a charge never
// refunded past what was captured on it. Refunds settle at once; it sends no webhooks.

const ChargeRow = z.object({
  processor_ref: z.string(),
  amount_cents: z.number().int(),
  currency: z.string(),
  processor_code: z.string(),
  method_code: z.string(),
  created_at: isoTimestamp,
  refunded_cents: z.number().int(),
});

const RecordRefundRow = z.object({ processor_ref: z.string(), amount_cents: z.number().int(), currency: z.string(), processor_code: z.string(), created_at: isoTimestamp });

const RefundRow = z.object({
  refund_id: z.string(),
  params_hash: z.string(),
  charge_id: z.string(),
  amount_cents: z.number().int(),
  currency: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed', 'canceled']),
  metadata: z.record(z.string(), z.string()),
  created_at: isoTimestamp,
});

/** A processor charge code as the port's status. */
function chargeStatus(code: string): ProviderCharge['status'] {
  return code === 'CPT' ? 'captured' : code === 'ATH' ? 'pending' : 'failed';
}

/** A processor refund code as the port's status. */
function refundStatus(code: string): ProviderRefund['status'] {
  return code === 'RFS' ? 'succeeded' : code === 'RFP' ? 'pending' : 'failed';
}

function refundOf(row: z.infer<typeof RefundRow>): ProviderRefund {
  return {
    id: row.refund_id,
    chargeId: row.charge_id,
    amountCents: row.amount_cents,
    currency: row.currency,
    status: row.status,
    createdAt: row.created_at,
    metadata: row.metadata,
  };
}

/** What a request's parameters are, for the idempotency check: the same refund asked again has the same hash. */
function paramsHash(order: RefundOrder): string {
  const metadata = Object.fromEntries(Object.entries(order.metadata).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256')
    .update(JSON.stringify([order.chargeId, order.amountCents, order.reason, metadata]))
    .digest('hex');
}

const REFUND_COLUMNS = 'refund_id, params_hash, charge_id, amount_cents, currency, status, metadata, created_at';
/** Refund states that hold money (made, or on their way). */
const HELD = `status IN ('pending', 'succeeded')`;

async function makeRefund(client: PoolClient, order: RefundOrder): Promise<ProviderRefund> {
  // One refund of a charge at a time, as a provider serialises them: the bound below reads the charge's refunds.
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`demo-charge:${order.chargeId}`]);
  const hash = paramsHash(order);
  const earlier = await client.query(`SELECT ${REFUND_COLUMNS} FROM demo_provider_refunds WHERE idempotency_key = $1`, [order.idempotencyKey]);
  if (earlier.rows.length) {
    const row = RefundRow.parse(earlier.rows[0]);
    if (row.params_hash !== hash) {
      throw new IdempotencyMismatchError(`the demo payment provider refused idempotency key ${order.idempotencyKey}: it was first used with other parameters`);
    }
    return refundOf(row);
  }
  const charges = await client.query(
    `SELECT p.order_id, p.amount_cents, p.currency,
            (SELECT coalesce(sum(r.amount_cents), 0)::int FROM demo_provider_refunds r WHERE r.charge_id = p.processor_ref AND r.${HELD}) AS refunded_cents
       FROM payments p WHERE p.customer_id = $1 AND p.kind = 'charge' AND p.processor_code = 'CPT' AND p.processor_ref = $2`,
    [order.customerId, order.chargeId],
  );
  const charge = charges.rows[0] as { order_id: string; amount_cents: number; currency: string; refunded_cents: number } | undefined;
  if (!charge) throw new RefundRefusedError(`the demo payment provider refused the refund: ${order.chargeId} is not a captured charge`, 'resource_missing');
  const left = charge.amount_cents - charge.refunded_cents;
  if (left <= 0) throw new RefundRefusedError('the demo payment provider refused the refund: the charge is already refunded in full', 'charge_already_refunded');
  if (order.amountCents > left) {
    throw new RefundRefusedError('the demo payment provider refused the refund: the refund is more than is left unrefunded on the charge', 'amount_too_large');
  }
  const { rows } = await client.query(
    `INSERT INTO demo_provider_refunds (refund_id, customer_id, idempotency_key, params_hash, order_id, charge_id, amount_cents, currency, reason, status, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'succeeded', $10) RETURNING ${REFUND_COLUMNS}`,
    [
      `dre_${randomBytes(12).toString('hex')}`,
      order.customerId,
      order.idempotencyKey,
      hash,
      charge.order_id,
      order.chargeId,
      order.amountCents,
      charge.currency,
      order.reason,
      JSON.stringify(order.metadata),
    ],
  );
  return refundOf(RefundRow.parse(rows[0]));
}

/** The demo shop's payment provider over casework's Postgres, under row-level security. */
export function demoPayments(pool: Pool): PaymentProvider {
  return {
    name: 'demo',
    paymentsOf: (customerId, orderId) =>
      withCustomer(pool, customerId, async (client) => {
        const charged = await client.query(
          `SELECT p.processor_ref, p.amount_cents, p.currency, p.processor_code, p.method_code, p.created_at,
                  (SELECT coalesce(sum(r.amount_cents), 0)::int FROM demo_provider_refunds r WHERE r.charge_id = p.processor_ref AND r.${HELD}) AS refunded_cents
             FROM payments p WHERE p.customer_id = $1 AND p.order_id = $2 AND p.kind = 'charge' ORDER BY p.created_at, p.payment_id`,
          [customerId, orderId],
        );
        const recorded = await client.query(
          `SELECT processor_ref, amount_cents, currency, processor_code, created_at FROM payments
            WHERE customer_id = $1 AND order_id = $2 AND kind = 'refund' ORDER BY created_at, payment_id`,
          [customerId, orderId],
        );
        const made = await client.query(`SELECT ${REFUND_COLUMNS} FROM demo_provider_refunds WHERE customer_id = $1 AND order_id = $2 ORDER BY created_at, refund_id`, [
          customerId,
          orderId,
        ]);
        const charges = charged.rows.map((raw): ProviderCharge => {
          const c = ChargeRow.parse(raw);
          return {
            id: c.processor_ref,
            orderId,
            amountCents: c.amount_cents,
            currency: c.currency,
            status: chargeStatus(c.processor_code),
            refundedCents: c.refunded_cents,
            createdAt: c.created_at,
            statusCode: c.processor_code,
            methodCode: c.method_code,
          };
        });
        const refunds = [
          ...recorded.rows.map((raw): ProviderRefund => {
            const r = RecordRefundRow.parse(raw);
            const status = refundStatus(r.processor_code);
            return {
              id: r.processor_ref,
              chargeId: null,
              amountCents: r.amount_cents,
              currency: r.currency,
              status,
              createdAt: r.created_at,
              metadata: {},
              statusCode: r.processor_code,
            };
          }),
          ...made.rows.map((raw) => refundOf(RefundRow.parse(raw))),
        ].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
        return { charges, refunds };
      }),
    refund: (order) => withCustomer(pool, order.customerId, (client) => makeRefund(client, order)),
    readEvent() {
      throw new ProviderEventError('the demo payment provider sends no webhooks');
    },
  };
}
