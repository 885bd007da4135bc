import type { Pool } from 'pg';
import { z } from 'zod';
import { mapPgError } from './errors';

// What an erasure does to parked desk deliveries (migrations/023): a delivery parked under the
// deployment key (its customer was not known when it arrived) is emptied, not re-encrypted:
// the body of every delivery on a ticket the customer owns, or from a requester mapped to them,
// is overwritten, and one still waiting is discarded with an audit row, so nothing can deliver
// an erased customer's words later.

/** Empties the bodies of the customer's parked deliveries and discards the waiting ones; returns how many were emptied. */
export async function scrubParkedDeliveries(pool: Pool, customerId: string, by: string): Promise<number> {
  try {
    const { rows } = await pool.query(
      `WITH theirs AS (
         SELECT p.id FROM parked_deliveries p
          WHERE p.ticket_id IN (SELECT ticket_id FROM ticket_owners WHERE customer_id = $1)
             OR EXISTS (SELECT 1 FROM desk_requesters r WHERE r.desk = p.desk AND r.requester = p.requester AND r.customer_id = $1)
       ), scrubbed AS (
         UPDATE parked_deliveries p SET body = '\\x'::bytea,
                discarded_at = CASE WHEN p.delivered_at IS NULL AND p.discarded_at IS NULL THEN now() ELSE p.discarded_at END
          WHERE p.id IN (SELECT id FROM theirs) AND octet_length(p.body) > 0
          RETURNING p.desk, p.requester, p.event_id, (p.delivered_at IS NULL) AS was_waiting
       ), audit AS (
         INSERT INTO desk_delivery_audit (actor, action, desk, requester, customer_id, event_id, reason)
         SELECT left($2, 100), 'discarded', desk, requester, $1, event_id, 'customer erased' FROM scrubbed WHERE was_waiting
       )
       SELECT count(*)::int AS n FROM scrubbed`,
      [customerId, by],
    );
    return z.object({ n: z.number().int() }).parse(rows[0]).n;
  } catch (error) {
    throw mapPgError(error);
  }
}
