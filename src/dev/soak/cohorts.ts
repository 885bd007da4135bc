import type { Pool } from 'pg';
import { demoRows, SEED_TABLES } from '../demo-data/seed';

// The soak runs many investigations of the demo's few stories at once. Sharing the demo's
// customers would make them trip over each other (an order can be refunded once, so the
// second investigation of Dana's parcel finds nothing left to refund, and one customer's cases
// fill another's memory). So each investigation gets a cohort of its own: a copy of the demo's
// customers, orders, parcels, tickets and payments under fresh ids, and its event's order
// number rewritten to match.

/** Cohorts one database can hold: order numbers stay 6 digits, which the investigator reads. */
export const MAX_COHORTS = 90;

type Row = Record<string, unknown>;

/** Columns that identify a row (primary or unique keys, and the keys pointing at them; a payment's processor reference is the charge a refund pays back, at most once). */
const ID_COLUMNS = ['customer_id', 'order_id', 'shipment_id', 'tracking_number', 'event_id', 'ticket_id', 'payment_id', 'processor_ref'] as const;

/** Cohort `k`'s name for an order: the demo's 4-digit number behind a 2-digit cohort prefix. */
export function cohortOrderId(k: number, orderId: string): string {
  if (!Number.isInteger(k) || k < 0 || k >= MAX_COHORTS) throw new RangeError(`cohort ${k} is outside 0..${MAX_COHORTS - 1}`);
  return `${10 + k}${orderId}`;
}

/** Cohort `k`'s name for any other id. */
function cohortId(k: number, column: (typeof ID_COLUMNS)[number], value: string): string {
  if (column === 'order_id') return cohortOrderId(k, value);
  if (column === 'customer_id') return `${value}_s${k}`;
  return `${value}-s${k}`;
}

/** A demo row with its ids moved into cohort `k`. */
export function cohortRow(k: number, row: Row): Row {
  const copy: Row = { ...row };
  for (const column of ID_COLUMNS) {
    const value = copy[column];
    if (typeof value === 'string') copy[column] = cohortId(k, column, value);
  }
  return copy;
}

/** The demo's order numbers, so event text can be rewritten. */
const ORDER_IDS = new Set(demoRows().orders.map((o) => String((o as Row).order_id)));

/** An event message with every demo order number moved into cohort `k`. */
export function cohortMessage(k: number, message: string): string {
  return message.replace(/\b\d{3,6}\b/g, (n) => (ORDER_IDS.has(n) ? cohortOrderId(k, n) : n));
}

/** Cohort `k`'s name for a demo customer. */
export function cohortCustomer(k: number, customerId: string): string {
  return cohortId(k, 'customer_id', customerId);
}

/** Inserts cohorts 0..count-1 (policies are shared, so they are not copied). Idempotent. */
export async function seedCohorts(admin: Pool, count: number): Promise<number> {
  const rows = demoRows();
  let inserted = 0;
  const client = await admin.connect();
  try {
    await client.query('BEGIN');
    for (const table of SEED_TABLES) {
      if (table === 'policies') continue;
      const copies = Array.from({ length: count }, (_, k) => rows[table].map((r) => cohortRow(k, r as Row))).flat();
      const result = await client.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json) ON CONFLICT DO NOTHING`, [JSON.stringify(copies)]);
      inserted += result.rowCount ?? 0;
    }
    await client.query('COMMIT');
    return inserted;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
