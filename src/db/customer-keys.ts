import type { Pool } from 'pg';
import { z } from 'zod';
import { mapPgError } from './errors';

// Customers' wrapped data keys and the erasure record (migrations/029_customer_keys.sql).
// One function per statement; every row parsed. Only wrapped keys are stored here: what
// unwraps them is the deployment's master keyring, which never reaches the database.

/** One version of a customer's data key as stored: wrapped, or destroyed (wrapped key gone). */
export interface StoredCustomerKey {
  customerId: string;
  version: number;
  wrappedKey: Buffer | null;
  wrappingKeyId: string | null;
  destroyedAt: string | null;
}

const Row = z.object({
  customer_id: z.string(),
  version: z.number().int(),
  wrapped_key: z.instanceof(Buffer).nullable(),
  wrapping_key_id: z.string().nullable(),
  destroyed_at: z.date().nullable(),
});
const COLUMNS = 'customer_id, version, wrapped_key, wrapping_key_id, destroyed_at';

function fromRow(raw: unknown): StoredCustomerKey {
  const row = Row.parse(raw);
  return {
    customerId: row.customer_id,
    version: row.version,
    wrappedKey: row.wrapped_key,
    wrappingKeyId: row.wrapping_key_id,
    destroyedAt: row.destroyed_at?.toISOString() ?? null,
  };
}

async function query(pool: Pool, text: string, values: unknown[]) {
  try {
    return await pool.query(text, values);
  } catch (error) {
    throw mapPgError(error);
  }
}

/** The newest version of the customer's key, destroyed or not; undefined when they have none. */
export async function latestCustomerKey(pool: Pool, customerId: string): Promise<StoredCustomerKey | undefined> {
  const { rows } = await query(pool, `SELECT ${COLUMNS} FROM customer_keys WHERE customer_id = $1 ORDER BY version DESC LIMIT 1`, [customerId]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** One version of the customer's key; undefined when it was never created. */
export async function customerKeyVersion(pool: Pool, customerId: string, version: number): Promise<StoredCustomerKey | undefined> {
  const { rows } = await query(pool, `SELECT ${COLUMNS} FROM customer_keys WHERE customer_id = $1 AND version = $2`, [customerId, version]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/**
 * Inserts a version of the customer's key unless one is there, and returns the stored one:
 * of two processes creating the same version at once, both get the winner's.
 */
export async function insertCustomerKey(pool: Pool, input: { customerId: string; version: number; wrappedKey: Buffer; wrappingKeyId: string }): Promise<StoredCustomerKey> {
  await query(pool, 'INSERT INTO customer_keys (customer_id, version, wrapped_key, wrapping_key_id) VALUES ($1, $2, $3, $4) ON CONFLICT (customer_id, version) DO NOTHING', [
    input.customerId,
    input.version,
    input.wrappedKey,
    input.wrappingKeyId,
  ]);
  const stored = await customerKeyVersion(pool, input.customerId, input.version);
  if (!stored) throw new Error(`customer key ${input.customerId}:${input.version} was neither inserted nor found`);
  return stored;
}

/** Destroys every live version of the customer's key (the wrapped key overwritten with NULL); returns the versions destroyed. */
export async function destroyCustomerKeys(pool: Pool, customerId: string): Promise<number[]> {
  const { rows } = await query(
    pool,
    `UPDATE customer_keys SET wrapped_key = NULL, wrapping_key_id = NULL, destroyed_at = now()
      WHERE customer_id = $1 AND destroyed_at IS NULL RETURNING version`,
    [customerId],
  );
  return rows.map((r) => z.object({ version: z.number().int() }).parse(r).version).sort((a, b) => a - b);
}

/** Live keys wrapped under a master key other than `currentMasterId`, at most `limit`. */
export async function keysToRewrap(pool: Pool, currentMasterId: string, limit: number): Promise<StoredCustomerKey[]> {
  const { rows } = await query(pool, `SELECT ${COLUMNS} FROM customer_keys WHERE destroyed_at IS NULL AND wrapping_key_id <> $1 ORDER BY customer_id, version LIMIT $2`, [
    currentMasterId,
    limit,
  ]);
  return rows.map(fromRow);
}

/** Replaces one key's wrapping, only if it is still wrapped as read (another re-wrap or an erasure wins). True when replaced. */
export async function replaceWrapping(pool: Pool, input: { customerId: string; version: number; fromKeyId: string; wrappedKey: Buffer; wrappingKeyId: string }): Promise<boolean> {
  const { rowCount } = await query(
    pool,
    `UPDATE customer_keys SET wrapped_key = $4, wrapping_key_id = $5, rewrapped_at = now()
      WHERE customer_id = $1 AND version = $2 AND wrapping_key_id = $3 AND destroyed_at IS NULL`,
    [input.customerId, input.version, input.fromKeyId, input.wrappedKey, input.wrappingKeyId],
  );
  return rowCount === 1;
}

/** The customer who owns a ticket (the investigation gate's first-event-wins record), if any. */
export async function ticketOwner(pool: Pool, ticketId: string): Promise<string | undefined> {
  const { rows } = await query(pool, 'SELECT customer_id FROM ticket_owners WHERE ticket_id = $1', [ticketId]);
  return rows[0] ? z.object({ customer_id: z.string() }).parse(rows[0]).customer_id : undefined;
}

/** Every ticket the customer owns, oldest first. */
export async function ticketsOf(pool: Pool, customerId: string): Promise<string[]> {
  const { rows } = await query(pool, 'SELECT ticket_id FROM ticket_owners WHERE customer_id = $1 ORDER BY first_seen_at, ticket_id', [customerId]);
  return rows.map((r) => z.object({ ticket_id: z.string() }).parse(r).ticket_id);
}

/** One erasure as recorded: who, whom, when, counts. */
export interface ErasureRecord {
  id: number;
  customerId: string;
  erasedBy: string;
  erasedAt: string;
  detail: Record<string, unknown>;
}

const ErasureRow = z.object({
  id: z.coerce.number().int(),
  customer_id: z.string(),
  erased_by: z.string(),
  erased_at: z.date(),
  detail: z.record(z.string(), z.unknown()),
});

function erasureOf(raw: unknown): ErasureRecord {
  const row = ErasureRow.parse(raw);
  return { id: row.id, customerId: row.customer_id, erasedBy: row.erased_by, erasedAt: row.erased_at.toISOString(), detail: row.detail };
}

/** Appends the audit row of an erasure (counts only, never content). */
export async function recordErasure(pool: Pool, input: { customerId: string; erasedBy: string; detail: Record<string, unknown> }): Promise<ErasureRecord> {
  const { rows } = await query(pool, 'INSERT INTO customer_erasures (customer_id, erased_by, detail) VALUES ($1, $2, $3) RETURNING *', [
    input.customerId,
    input.erasedBy,
    JSON.stringify(input.detail),
  ]);
  return erasureOf(rows[0]);
}

/** The customer's erasures, oldest first. */
export async function erasuresOf(pool: Pool, customerId: string): Promise<ErasureRecord[]> {
  const { rows } = await query(pool, 'SELECT * FROM customer_erasures WHERE customer_id = $1 ORDER BY erased_at, id', [customerId]);
  return rows.map(erasureOf);
}
