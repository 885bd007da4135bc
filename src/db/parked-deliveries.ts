import type { Pool } from 'pg';
import { z } from 'zod';
import { ConflictError, NotFoundError } from '../errors';
import type { BodyCodec } from '../schemas/transcript-log';
import { mapPgError } from './errors';

// Parked desk deliveries and the requesters a person mapped (migrations/023_desk_deliveries.sql).
// One function per statement; every row parsed. The parked event's body goes through the payload
// codec, so what a customer wrote is ciphertext here as in the transcript log.

/** Desks that send webhooks. */
export const PARKING_DESKS = ['zendesk', 'intercom', 'freshdesk'] as const;
/** One of PARKING_DESKS. */
export type ParkingDesk = (typeof PARKING_DESKS)[number];

/** True when `value` names a desk that sends webhooks. */
export function isParkingDesk(value: string): value is ParkingDesk {
  return (PARKING_DESKS as readonly string[]).includes(value);
}

/** Why a delivery waits for a person. */
export type ParkReason = 'unmapped_requester' | 'ticket_owner' | 'event_reused';

/** A parked delivery as a person sees it: ids and times, never the words. */
export interface ParkedDelivery {
  id: number;
  desk: ParkingDesk;
  eventId: string;
  ticketId: string;
  requester: string;
  reason: ParkReason;
  parkedAt: string;
  deliveredAt: string | null;
  discardedAt: string | null;
}

/** A parked delivery with its decoded body, for delivering it. */
export interface ParkedBody<T> extends ParkedDelivery {
  body: T;
}

const Row = z.object({
  id: z.coerce.number().int(),
  desk: z.enum(['zendesk', 'intercom', 'freshdesk']),
  event_id: z.string(),
  ticket_id: z.string(),
  requester: z.string(),
  reason: z.enum(['unmapped_requester', 'ticket_owner', 'event_reused']),
  parked_at: z.date(),
  delivered_at: z.date().nullable(),
  discarded_at: z.date().nullable(),
});
const BodyRow = Row.extend({ body: z.instanceof(Buffer) });
const COLUMNS = 'id, desk, event_id, ticket_id, requester, reason, parked_at, delivered_at, discarded_at';

function fromRow(row: z.infer<typeof Row>): ParkedDelivery {
  return {
    id: row.id,
    desk: row.desk,
    eventId: row.event_id,
    ticketId: row.ticket_id,
    requester: row.requester,
    reason: row.reason,
    parkedAt: row.parked_at.toISOString(),
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    discardedAt: row.discarded_at?.toISOString() ?? null,
  };
}

async function query(pool: Pool, text: string, values: unknown[]) {
  try {
    return await pool.query(text, values);
  } catch (error) {
    throw mapPgError(error);
  }
}

/** A parked delivery that does not exist, or is no longer waiting. */
export class ParkedDeliveryNotFoundError extends NotFoundError {}

/** The key a requester is mapped and parked under: the desk's id for them, else their email, lower-cased. */
export function requesterKey(requester: { id?: string; email?: string }): string | undefined {
  return (requester.id ?? requester.email)?.toLowerCase();
}

/** The customer a person mapped a requester to, if any. */
export async function mappedCustomer(pool: Pool, desk: ParkingDesk, requester: string): Promise<string | undefined> {
  const { rows } = await query(pool, 'SELECT customer_id FROM desk_requesters WHERE desk = $1 AND requester = $2', [desk, requester.toLowerCase()]);
  return rows[0] ? z.object({ customer_id: z.string() }).parse(rows[0]).customer_id : undefined;
}

/**
 * Maps a requester to a customer, with an audit row. Mapping the same requester to the same
 * customer again changes nothing; to another customer is refused: deliveries already sent under
 * the first mapping belong to that customer's tickets.
 */
export async function mapRequester(pool: Pool, input: { desk: ParkingDesk; requester: string; customerId: string; by: string }): Promise<'mapped' | 'already'> {
  const requester = input.requester.toLowerCase();
  const { rows } = await query(
    pool,
    `WITH inserted AS (
       INSERT INTO desk_requesters (desk, requester, customer_id, mapped_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (desk, requester) DO NOTHING RETURNING customer_id
     ), audit AS (
       INSERT INTO desk_delivery_audit (actor, action, desk, requester, customer_id)
       SELECT $4, 'mapped', $1, $2, $3 FROM inserted
     )
     SELECT (SELECT customer_id FROM inserted) AS inserted,
            (SELECT customer_id FROM desk_requesters WHERE desk = $1 AND requester = $2) AS existing`,
    [input.desk, requester, input.customerId, input.by],
  );
  const row = z.object({ inserted: z.string().nullable(), existing: z.string().nullable() }).parse(rows[0]);
  if (row.inserted) return 'mapped';
  if (row.existing === input.customerId) return 'already';
  throw new RequesterMappedElsewhereError(`${input.desk} requester ${requester} is already mapped to another customer; a requester maps to one customer for good`);
}

/** A requester already mapped to a different customer. */
export class RequesterMappedElsewhereError extends ConflictError {}

/**
 * Parks a delivery (idempotent by event id): true when this call parked it, false when it was
 * parked before (a redelivery).
 */
export async function parkDelivery(
  pool: Pool,
  codec: BodyCodec,
  input: { desk: ParkingDesk; eventId: string; ticketId: string; requester: string; reason: ParkReason; body: unknown },
): Promise<boolean> {
  const body = await codec.encode(input.body);
  const { rowCount } = await query(
    pool,
    `INSERT INTO parked_deliveries (desk, event_id, ticket_id, requester, reason, body) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (event_id) DO NOTHING`,
    [input.desk, input.eventId, input.ticketId, input.requester.toLowerCase(), input.reason, body],
  );
  return rowCount === 1;
}

/** Parked deliveries, newest first; `waiting` leaves out the delivered and discarded. */
export async function listParked(pool: Pool, options: { waiting?: boolean; limit?: number } = {}): Promise<ParkedDelivery[]> {
  const where = options.waiting ? 'WHERE delivered_at IS NULL AND discarded_at IS NULL' : '';
  const { rows } = await query(pool, `SELECT ${COLUMNS} FROM parked_deliveries ${where} ORDER BY id DESC LIMIT $1`, [options.limit ?? 200]);
  return rows.map((row) => fromRow(Row.parse(row)));
}

/** How many deliveries wait for a person, for the gauge. */
export async function countWaiting(pool: Pool): Promise<number> {
  const { rows } = await query(pool, 'SELECT count(*)::int AS n FROM parked_deliveries WHERE delivered_at IS NULL AND discarded_at IS NULL', []);
  return z.object({ n: z.number().int() }).parse(rows[0]).n;
}

/** The waiting unmapped-requester deliveries of one requester, oldest first, with their bodies decoded. */
export async function waitingFor<T>(pool: Pool, codec: BodyCodec, desk: ParkingDesk, requester: string): Promise<ParkedBody<T>[]> {
  const { rows } = await query(
    pool,
    `SELECT ${COLUMNS}, body FROM parked_deliveries
     WHERE desk = $1 AND requester = $2 AND reason = 'unmapped_requester' AND delivered_at IS NULL AND discarded_at IS NULL ORDER BY id`,
    [desk, requester.toLowerCase()],
  );
  return Promise.all(
    rows.map(async (raw) => {
      const row = BodyRow.parse(raw);
      return { ...fromRow(row), body: (await codec.decode(row.body)) as T };
    }),
  );
}

/** Records that a parked delivery reached its investigation, with an audit row. Idempotent. */
export async function markParkedDelivered(pool: Pool, input: { id: number; by: string; customerId: string }): Promise<void> {
  await query(
    pool,
    `WITH done AS (
       UPDATE parked_deliveries SET delivered_at = now() WHERE id = $1 AND delivered_at IS NULL AND discarded_at IS NULL
       RETURNING desk, requester, event_id
     )
     INSERT INTO desk_delivery_audit (actor, action, desk, requester, customer_id, event_id)
     SELECT $2, 'delivered', desk, requester, $3, event_id FROM done`,
    [input.id, input.by, input.customerId],
  );
}

/** Discards a waiting parked delivery, with an audit row naming who and why. Throws when it is not waiting. */
export async function discardParked(pool: Pool, input: { id: number; by: string; reason: string }): Promise<ParkedDelivery> {
  const { rows } = await query(
    pool,
    `WITH done AS (
       UPDATE parked_deliveries SET discarded_at = now() WHERE id = $1 AND delivered_at IS NULL AND discarded_at IS NULL
       RETURNING ${COLUMNS}
     ), audit AS (
       INSERT INTO desk_delivery_audit (actor, action, desk, requester, event_id, reason)
       SELECT $2, 'discarded', desk, requester, event_id, $3 FROM done
     )
     SELECT * FROM done`,
    [input.id, input.by, input.reason.slice(0, 500)],
  );
  if (!rows[0]) throw new ParkedDeliveryNotFoundError(`parked delivery ${input.id} does not exist or was already delivered or discarded`);
  return fromRow(Row.parse(rows[0]));
}
