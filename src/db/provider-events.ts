import type { Pool } from 'pg';
import { z } from 'zod';

// A payment provider's webhook events, acted on once per event id (provider_events,
// migrations/030_payment_provider.sql), and whose refund a provider refund is: the webhook names
// no customer, so a definer function answers with the refund's customer and case and nothing else.

/** True when the provider's event was already acted on. */
export async function eventSeen(pool: Pool, provider: string, eventId: string): Promise<boolean> {
  const { rows } = await pool.query('SELECT 1 FROM provider_events WHERE provider = $1 AND event_id = $2', [provider, eventId]);
  return rows.length > 0;
}

/** Records that the provider's event was acted on (after acting: a failure on the way is retried by the provider). */
export async function markEventSeen(pool: Pool, event: { provider: string; eventId: string; type: string; providerRefundId: string }): Promise<void> {
  await pool.query('INSERT INTO provider_events (provider, event_id, type, provider_refund_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
    event.provider,
    event.eventId,
    event.type,
    event.providerRefundId,
  ]);
}

const OwnerRow = z.object({ refund_id: z.string(), customer_id: z.string(), workflow_id: z.string(), request_id: z.string(), order_id: z.string() });
/** Whose refund a provider refund is. */
export type PayoutOwner = z.infer<typeof OwnerRow>;

/** The casework refund a provider refund pays (by the provider's id, or the casework id it carries), or undefined for one casework did not make. */
export async function payoutOwner(pool: Pool, provider: string, providerRefundId: string, caseworkRefundId: string | undefined): Promise<PayoutOwner | undefined> {
  const { rows } = await pool.query('SELECT refund_id, customer_id, workflow_id, request_id, order_id FROM casework_payout_of($1, $2, $3)', [
    provider,
    providerRefundId,
    caseworkRefundId ?? null,
  ]);
  return rows.length ? OwnerRow.parse(rows[0]) : undefined;
}
