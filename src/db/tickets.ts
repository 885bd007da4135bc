import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { ConflictError } from '../errors';
import type { TicketEvent } from '../schemas/event';
import { mapPgError } from './errors';

// The gate in front of every investigation (migrations/013_ticket_gate.sql): a ticket belongs to
// the customer of its first event, and an event id is admitted once, for good. Both live in
// Postgres rather than in the workflow, because a run ends and the next one knows nothing of
// the last one's state; and both are decided before anything reaches Temporal.

/** Why an event was refused at the gate; the label of `casework_events_refused_total`. */
export type RefusalReason = 'ticket_owner' | 'event_reused';

/** An event the gate refused: another customer's ticket, or an event id reused with another body. */
export class EventRefusedError extends ConflictError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What the gate decided: `deliver` (first time seen), `redeliver` (seen, but Temporal never
 * took it: a previous attempt failed), or `duplicate` (already delivered: send nothing).
 */
export type Admission = 'deliver' | 'redeliver' | 'duplicate';

/**
 * The SHA-256 of what identifies an event: its id, kind, ticket, customer and words, in a fixed
 * order. Not its receive time: a desk's retry is the same delivery whenever and wherever it lands,
 * and the time is the receiving server's clock, which a retry on another replica (or after a
 * restart) reads differently. Hex, 64 characters.
 */
export function eventBodyHash(event: TicketEvent): string {
  return sha256(JSON.stringify([event.eventId, event.type, event.ticketId, event.customerId, event.message]));
}

/** The hash events were recorded under before it left the time out; a retry of such an event still matches. */
function legacyEventBodyHash(event: TicketEvent): string {
  return sha256(JSON.stringify([event.eventId, event.type, event.ticketId, event.customerId, event.message, new Date(event.receivedAt).toISOString()]));
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const SeenRow = z.object({ ticket_id: z.string(), body_sha256: z.string(), delivered_at: z.date().nullable() });
const OwnerRow = z.object({ customer_id: z.string() });

async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    throw mapPgError(error);
  });
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw mapPgError(error);
  } finally {
    client.release();
  }
}

/** Refuses the event unless its customer owns the ticket; claims an unowned ticket for it (not on close). */
async function checkOwner(client: PoolClient, event: TicketEvent): Promise<void> {
  let owner: string | undefined;
  if (event.type === 'ticket.closed') {
    // A close claims nothing: it only ever reaches a running investigation, which an opening event claimed.
    const rows = await client.query('SELECT customer_id FROM ticket_owners WHERE ticket_id = $1 FOR SHARE', [event.ticketId]);
    owner = rows.rows[0] ? OwnerRow.parse(rows.rows[0]).customer_id : undefined;
  } else {
    // Insert or lock the existing row in one statement, so two first events racing agree on one owner.
    const rows = await client.query(
      `INSERT INTO ticket_owners (ticket_id, customer_id, first_event_id) VALUES ($1, $2, $3)
       ON CONFLICT (ticket_id) DO UPDATE SET ticket_id = ticket_owners.ticket_id
       RETURNING customer_id`,
      [event.ticketId, event.customerId, event.eventId],
    );
    owner = OwnerRow.parse(rows.rows[0]).customer_id;
  }
  // The owner is not named: telling one customer another's id would leak it.
  if (owner !== undefined && owner !== event.customerId) {
    throw new EventRefusedError(
      'ticket_owner',
      `ticket ${event.ticketId} belongs to another customer: event ${event.eventId} from customer ${event.customerId} was refused and reached no investigation`,
    );
  }
}

/**
 * Admits one validated event, in one transaction: checks (or claims) the ticket's owner, then
 * records the event id with its body hash. Throws EventRefusedError (a ConflictError) for
 * another customer's ticket or an event id already used with a different body or ticket.
 * Call `markDelivered` once Temporal has taken a `deliver` or `redeliver` event.
 */
export async function admitEvent(pool: Pool, event: TicketEvent): Promise<Admission> {
  const hash = eventBodyHash(event);
  // A desk's redelivery of what was delivered is the common case under retries: one read answers
  // it. The hash covers the customer, and a ticket's owner never changes, so an event delivered
  // with this hash passed the owner check when it was admitted.
  const known = await pool.query('SELECT ticket_id, body_sha256, delivered_at FROM ticket_events WHERE event_id = $1', [event.eventId]).catch((error: unknown) => {
    throw mapPgError(error);
  });
  const seenBefore = known.rows[0] ? SeenRow.parse(known.rows[0]) : undefined;
  if (seenBefore?.delivered_at && seenBefore.ticket_id === event.ticketId && seenBefore.body_sha256 === hash) return 'duplicate';
  return inTransaction(pool, async (client) => {
    await checkOwner(client, event);
    const inserted = await client.query('INSERT INTO ticket_events (event_id, ticket_id, body_sha256) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING', [
      event.eventId,
      event.ticketId,
      hash,
    ]);
    if (inserted.rowCount === 1) return 'deliver';
    const seen = SeenRow.parse((await client.query('SELECT ticket_id, body_sha256, delivered_at FROM ticket_events WHERE event_id = $1 FOR UPDATE', [event.eventId])).rows[0]);
    if (seen.ticket_id !== event.ticketId || (seen.body_sha256 !== hash && seen.body_sha256 !== legacyEventBodyHash(event))) {
      throw new EventRefusedError(
        'event_reused',
        `event id ${event.eventId} was already used with a different body${seen.ticket_id !== event.ticketId ? ' (on another ticket)' : ''}; send a new event id for a new event`,
      );
    }
    return seen.delivered_at ? 'duplicate' : 'redeliver';
  });
}

/** Records that Temporal took the event, so a resend of it is answered as a duplicate. */
export async function markDelivered(pool: Pool, eventId: string): Promise<void> {
  try {
    await pool.query('UPDATE ticket_events SET delivered_at = now() WHERE event_id = $1 AND delivered_at IS NULL', [eventId]);
  } catch (error) {
    throw mapPgError(error);
  }
}

/** The customer who owns `ticketId` (the customer of its first admitted event), or undefined for a ticket never seen. */
export async function ticketOwner(pool: Pool, ticketId: string): Promise<string | undefined> {
  try {
    const { rows } = await pool.query('SELECT customer_id FROM ticket_owners WHERE ticket_id = $1', [ticketId]);
    return rows[0] ? OwnerRow.parse(rows[0]).customer_id : undefined;
  } catch (error) {
    throw mapPgError(error);
  }
}
