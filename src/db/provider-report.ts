import type { PoolClient } from 'pg';
import type { ProviderPayments } from '../commerce/payment-provider';

// The payment provider's report of an order (its charges and refunds), kept beside the shop's
// payment records so the ledger's bounds, the database's own check among them, hold against what
// the provider says was captured and refunded (migrations/030_payment_provider.sql). Written
// every time a tool reads the provider; each charge and refund by the provider's id, the newest
// report winning.

/** Records what the provider just reported for the order, inside the caller's customer transaction. */
export async function recordProviderReport(client: PoolClient, customerId: string, orderId: string, provider: string, report: ProviderPayments): Promise<void> {
  for (const c of report.charges) {
    await client.query(
      `INSERT INTO provider_charges (charge_id, customer_id, order_id, provider, amount_cents, currency, status, refunded_cents, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (charge_id) DO UPDATE SET amount_cents = EXCLUDED.amount_cents, status = EXCLUDED.status,
         refunded_cents = EXCLUDED.refunded_cents, reported_at = now()`,
      [c.id, customerId, orderId, provider, c.amountCents, c.currency, c.status, c.refundedCents, c.createdAt],
    );
  }
  for (const r of report.refunds) {
    await client.query(
      `INSERT INTO provider_refunds (refund_id, customer_id, order_id, provider, charge_id, amount_cents, currency, status, failure_reason, casework_refund_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (refund_id) DO UPDATE SET status = EXCLUDED.status, failure_reason = EXCLUDED.failure_reason, reported_at = now()`,
      [r.id, customerId, orderId, provider, r.chargeId, r.amountCents, r.currency, r.status, r.failureReason ?? null, r.metadata.casework_refund_id ?? null, r.createdAt],
    );
  }
}
