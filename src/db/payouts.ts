import type { PoolClient } from 'pg';
import { z } from 'zod';
import type { ProviderRefund } from '../commerce/payment-provider';
import { isoTimestampOrNull } from './rows';

// What the payment provider answered for each refund casework paid (refund_payouts,
// migrations/030_payment_provider.sql). Written with the refund's reservation as 'sending', with
// the charge, reason and idempotency key chosen then, so every retry sends the very same
// request; moved along once by the provider's answer, and by its webhook events after.

/** Payout states: sending (asked, no answer recorded yet), the provider's own, or refused (nothing was made). */
export const PAYOUT_STATUSES = ['sending', 'pending', 'succeeded', 'failed', 'canceled', 'requires_action', 'refused'] as const;
/** States in which no money went back to the customer: the refund does not count in the ledger. */
export const UNPAID_PAYOUT_STATUSES: readonly string[] = ['refused', 'failed', 'canceled'];

const PayoutRow = z.object({
  refund_id: z.string(),
  provider: z.string(),
  idempotency_key: z.string(),
  charge_id: z.string(),
  reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer']),
  status: z.enum(PAYOUT_STATUSES),
  provider_refund_id: z.string().nullable(),
  failure_reason: z.string().nullable(),
  answered_at: isoTimestampOrNull,
});
/** One casework refund's payout. */
export type PayoutRow = z.infer<typeof PayoutRow>;

const COLUMNS = 'refund_id, provider, idempotency_key, charge_id, reason, status, provider_refund_id, failure_reason, answered_at';

/** The payout of a casework refund, or undefined when it was paid before payouts were recorded. */
export async function payoutOf(client: PoolClient, refundId: string): Promise<PayoutRow | undefined> {
  const { rows } = await client.query(`SELECT ${COLUMNS} FROM refund_payouts WHERE refund_id = $1`, [refundId]);
  return rows.length ? PayoutRow.parse(rows[0]) : undefined;
}

/** Every payout of the order's casework refunds. */
export async function payoutsOfOrder(client: PoolClient, customerId: string, orderId: string): Promise<PayoutRow[]> {
  const { rows } = await client.query(
    `SELECT ${COLUMNS.split(', ')
      .map((c) => `o.${c}`)
      .join(', ')} FROM refund_payouts o JOIN refunds f ON f.refund_id = o.refund_id WHERE f.customer_id = $1 AND f.order_id = $2`,
    [customerId, orderId],
  );
  return rows.map((row) => PayoutRow.parse(row));
}

/** Records the payout about to be asked for, with the reservation; a retry finds the first one. */
export async function startPayout(
  client: PoolClient,
  customerId: string,
  payout: Pick<PayoutRow, 'refund_id' | 'provider' | 'idempotency_key' | 'charge_id' | 'reason'>,
): Promise<PayoutRow> {
  await client.query(
    `INSERT INTO refund_payouts (refund_id, customer_id, provider, idempotency_key, charge_id, reason, status)
     VALUES ($1, $2, $3, $4, $5, $6, 'sending') ON CONFLICT (refund_id) DO NOTHING`,
    [payout.refund_id, customerId, payout.provider, payout.idempotency_key, payout.charge_id, payout.reason],
  );
  return (await payoutOf(client, payout.refund_id))!;
}

/**
 * Records the provider's answer to the payout's request, once: only a payout still 'sending'
 * takes it, so a webhook event recorded first (a failure that overtook the answer) stands.
 */
export async function recordPayoutAnswer(client: PoolClient, refundId: string, answer: ProviderRefund): Promise<void> {
  await client.query(
    `UPDATE refund_payouts SET status = $2, provider_refund_id = $3, failure_reason = $4, answered_at = now()
      WHERE refund_id = $1 AND status = 'sending'`,
    [refundId, answer.status, answer.id, answer.failureReason ?? null],
  );
}

/** Records that the provider refused the payout (nothing was made): the refund stops counting in the ledger. */
export async function recordPayoutRefusal(client: PoolClient, refundId: string, words: string): Promise<void> {
  await client.query(`UPDATE refund_payouts SET status = 'refused', failure_reason = $2, answered_at = now() WHERE refund_id = $1 AND status = 'sending'`, [refundId, words]);
}

/**
 * Records a later state the provider's webhook reported (a refund failed, canceled or settled).
 * Returns true when it changed the payout, false when the payout already said so.
 */
export async function recordPayoutEvent(client: PoolClient, refundId: string, refund: ProviderRefund): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE refund_payouts SET status = $2, provider_refund_id = coalesce(provider_refund_id, $3), failure_reason = coalesce($4, failure_reason), answered_at = coalesce(answered_at, now())
      WHERE refund_id = $1 AND status IS DISTINCT FROM $2`,
    [refundId, refund.status, refund.id, refund.failureReason ?? null],
  );
  return (rowCount ?? 0) > 0;
}
