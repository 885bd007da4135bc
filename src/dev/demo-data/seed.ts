import type { Pool, PoolClient } from 'pg';
import { DEMO_PARCELS } from './demo-parcels';
import { CUSTOMERS, ORDERS, PAYMENTS, PEOPLE, POLICIES, TICKETS } from './demo-shop';
import { shipmentRow, trackingRows } from './demo-tracking';

/** The demo's customers, orders and people, as the demo, the benches and the tests name them. */
export const DEMO = {
  customers: {
    dana: PEOPLE.dana.id,
    priya: PEOPLE.priya.id,
    marco: PEOPLE.marco.id,
    leila: PEOPLE.leila.id,
  },
  names: {
    dana: PEOPLE.dana.name,
    priya: PEOPLE.priya.name,
    marco: PEOPLE.marco.name,
    leila: PEOPLE.leila.name,
  },
  orders: {
    /** Dana: marked delivered on 12 Oct 2026 with no photo, 2.4 km from her address; never arrived. */
    notDelivered: '5102',
    /** Marco: charged twice for one order, minutes apart. */
    doubleCharge: '5230',
    /** Leila: the courier says the address is incorrect; it matches the order and earlier deliveries. */
    wrongAddress: '5317',
    /** Priya: left at Block A reception instead of Block B on 14 Oct 2026; refunded. */
    priyaWrongBuilding: '4471',
    /** Priya: signed for at the main gate on Friday 27 Nov 2026; not refunded ("same problem as last time"). */
    priyaAgain: '4620',
  },
} as const;

/** Rows inserted by one seedDemoData call, per table (all zero when the data was already there). */
export type SeedSummary = Record<(typeof SEED_TABLES)[number], number>;

/** The tables the demo data fills, in foreign-key order. */
export const SEED_TABLES = ['customers', 'orders', 'shipments', 'tracking_events', 'support_tickets', 'payments', 'policies'] as const;

/** Every demo row, per table. Pure and deterministic: the same rows on every call. */
export function demoRows(): Record<(typeof SEED_TABLES)[number], object[]> {
  return {
    customers: CUSTOMERS,
    orders: ORDERS,
    shipments: DEMO_PARCELS.map(shipmentRow),
    tracking_events: DEMO_PARCELS.flatMap(trackingRows),
    support_tickets: TICKETS,
    payments: PAYMENTS,
    policies: POLICIES,
  };
}

// One statement per table: the rows travel as one JSON array and Postgres builds them with the
// table's own row type, so a column added to the table without a value here fails loudly
// (NOT NULL) instead of drifting. ON CONFLICT DO NOTHING makes a second run a no-op.
async function insertRows(client: PoolClient, table: (typeof SEED_TABLES)[number], rows: object[]): Promise<number> {
  const result = await client.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json) ON CONFLICT DO NOTHING`, [JSON.stringify(rows)]);
  return result.rowCount ?? 0;
}

/**
 * Loads the Cartwise demo data through the admin pool (row-level security does not bind it),
 * in one transaction. Idempotent: rows already present are left as they are.
 */
export async function seedDemoData(admin: Pool): Promise<SeedSummary> {
  const rows = demoRows();
  const client = await admin.connect();
  try {
    await client.query('BEGIN');
    const summary = {} as SeedSummary;
    for (const table of SEED_TABLES) summary[table] = await insertRows(client, table, rows[table]);
    await client.query('COMMIT');
    return summary;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
