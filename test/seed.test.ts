import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { COURIER_EVENT_CODES } from '../src/activities/tools/codes';
import { distanceMetres } from '../src/activities/tools/shape';
import type { Database } from '../src/db/pool';
import { DEMO, SEED_TABLES, seedDemoData } from '../src/dev/demo-data/seed';
import { EXAMPLES_DIR } from '../src/dev/demo/run';
import { parseTicketEvent } from '../src/schemas/event';
import { openTestDatabase } from './support/db';

// The demo data the walkthrough, the benches and the tool tests stand on.

let db: Database;
const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => (await db.admin.query(sql, params)).rows as T[];

/** The one row `sql` must return; the test fails naming the query when there is none. */
async function one<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T> {
  const [row] = await q<T>(sql, params);
  assert.ok(row, `no row for: ${sql}`);
  return row;
}

/** The last of `items`, which the seed must have produced. */
function lastOf<T>(items: readonly T[], what: string): T {
  const item = items.at(-1);
  assert.ok(item !== undefined, `no ${what}`);
  return item;
}

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of SEED_TABLES) out[table] = (await one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).n;
  return out;
}

async function eventsOf(orderId: string) {
  return q<{ code: string; occurred_at: Date; pod_photo_url: string | null; pod_signature: string | null; location_name: string; gps_lat: number; gps_lon: number }>(
    'SELECT code, occurred_at, pod_photo_url, pod_signature, location_name, gps_lat, gps_lon FROM tracking_events WHERE order_id = $1 ORDER BY occurred_at',
    [orderId],
  );
}

async function paymentsOf(orderId: string) {
  return q<{ kind: string; processor_code: string; amount_cents: number; created_at: Date }>(
    'SELECT kind, processor_code, amount_cents, created_at FROM payments WHERE order_id = $1 ORDER BY created_at',
    [orderId],
  );
}

async function orderOf(orderId: string) {
  return one<{ customer_id: string; total_cents: number; delivery_address: string; address_lat: number; address_lon: number; placed_at: Date; status_code: string }>(
    'SELECT customer_id, total_cents, delivery_address, address_lat, address_lon, placed_at, status_code FROM orders WHERE order_id = $1',
    [orderId],
  );
}

before(async () => {
  db = await openTestDatabase();
});
after(async () => db?.close());

describe('seedDemoData', () => {
  it('loads every table on a fresh database and changes nothing when run again', async () => {
    const first = await seedDemoData(db.admin);
    for (const table of SEED_TABLES) assert.ok(first[table] > 0, `${table} got rows`);
    const loaded = await counts();
    assert.deepEqual(loaded, first, 'the summary counts what was inserted');

    const second = await seedDemoData(db.admin);
    assert.deepEqual(
      Object.values(second),
      SEED_TABLES.map(() => 0),
      'a second run inserts nothing',
    );
    assert.deepEqual(await counts(), loaded);
  });

  it('gives every disputed order at least a dozen tracking events, all with known courier codes', async () => {
    for (const orderId of [DEMO.orders.notDelivered, DEMO.orders.wrongAddress, DEMO.orders.doubleCharge, DEMO.orders.priyaWrongBuilding, DEMO.orders.priyaAgain]) {
      const events = await eventsOf(orderId);
      assert.ok(events.length >= 12, `order ${orderId} has ${events.length} events`);
      for (const e of events) assert.ok(e.code in COURIER_EVENT_CODES, `order ${orderId}: code ${e.code} is explained in codes.ts`);
    }
  });

  it("has Dana's 5102 marked delivered on 12 October with no photo, 2.4 km from her address, charged once and not refunded", async () => {
    const order = await orderOf(DEMO.orders.notDelivered);
    assert.equal(order.customer_id, DEMO.customers.dana);
    const events = await eventsOf(DEMO.orders.notDelivered);
    const delivered = lastOf(events, 'scan');
    assert.equal(delivered.code, 'DLV', 'the last scan is the delivery');
    assert.equal(delivered.occurred_at.toISOString().slice(0, 10), '2026-10-12');
    assert.equal(delivered.pod_photo_url, null);
    assert.equal(delivered.pod_signature, null);
    const km = distanceMetres({ lat: delivered.gps_lat, lon: delivered.gps_lon }, { lat: order.address_lat, lon: order.address_lon }) / 1000;
    assert.equal(km.toFixed(1), '2.4');
    assert.ok(
      events.some((e) => e.code === 'MSC'),
      'the mis-sort at the wrong hub is in the story',
    );

    const payments = await paymentsOf(DEMO.orders.notDelivered);
    assert.deepEqual(
      payments.map((p) => [p.kind, p.processor_code, p.amount_cents]),
      [['charge', 'CPT', order.total_cents]],
    );
  });

  it('has one order charged twice: two captured charges of the same amount minutes apart, no refund', async () => {
    const order = await orderOf(DEMO.orders.doubleCharge);
    const payments = await paymentsOf(DEMO.orders.doubleCharge);
    const [firstCharge, secondCharge] = payments;
    assert.ok(firstCharge && secondCharge && payments.length === 2, `two payments, not ${payments.length}`);
    for (const p of payments) assert.deepEqual([p.kind, p.processor_code, p.amount_cents], ['charge', 'CPT', order.total_cents]);
    const minutesApart = (secondCharge.created_at.getTime() - firstCharge.created_at.getTime()) / 60_000;
    assert.ok(minutesApart > 0 && minutesApart < 10, `${minutesApart} minutes apart`);
  });

  it('has a courier claiming "address incorrect" on an address that matches the order and earlier deliveries', async () => {
    const order = await orderOf(DEMO.orders.wrongAddress);
    const customer = await one<{ default_address: string }>('SELECT default_address FROM customers WHERE customer_id = $1', [order.customer_id]);
    assert.equal(order.delivery_address, customer.default_address);
    const events = await eventsOf(DEMO.orders.wrongAddress);
    assert.ok(events.filter((e) => e.code === 'ADX').length >= 2);
    const earlier = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders o JOIN tracking_events t ON t.order_id = o.order_id AND t.code = 'DLV'
        WHERE o.customer_id = $1 AND o.order_id <> $2 AND o.delivery_address = $3`,
      [order.customer_id, DEMO.orders.wrongAddress, order.delivery_address],
    );
    assert.ok(earlier.n >= 1, 'an earlier order was delivered to the same address');
    assert.equal((await paymentsOf(DEMO.orders.wrongAddress)).filter((p) => p.kind === 'refund').length, 0);
  });

  it("has Priya's 4471 left at Block A on 14 October, refunded two days later, with a closed ticket about it", async () => {
    const order = await orderOf(DEMO.orders.priyaWrongBuilding);
    assert.equal(order.customer_id, DEMO.customers.priya);
    assert.match(order.delivery_address, /Block B, Kingsmead Court/);
    const events = await eventsOf(DEMO.orders.priyaWrongBuilding);
    const delivered = lastOf(events, 'scan');
    assert.equal(delivered.code, 'DLV');
    assert.equal(delivered.occurred_at.toISOString().slice(0, 10), '2026-10-14');
    assert.match(delivered.location_name, /Block A/);

    const payments = await paymentsOf(DEMO.orders.priyaWrongBuilding);
    const refund = payments.find((p) => p.kind === 'refund');
    assert.ok(refund, 'a refund payment exists');
    assert.equal(refund.processor_code, 'RFS', 'settled');
    assert.equal(refund.amount_cents, order.total_cents);
    const days = (refund.created_at.getTime() - delivered.occurred_at.getTime()) / 86_400_000;
    assert.ok(days > 1 && days < 3, `refunded ${days.toFixed(1)} days after the delivery`);

    const tickets = await q<{ status: string; opened_at: Date; closed_at: Date | null }>('SELECT status, opened_at, closed_at FROM support_tickets WHERE order_id = $1', [
      DEMO.orders.priyaWrongBuilding,
    ]);
    assert.ok(tickets.some((t) => t.status === 'closed' && t.closed_at !== null && t.opened_at.toISOString().startsWith('2026-10-14')));
  });

  it("has Priya's newer 4620 delivered on Friday 27 November to the main gate, not Block B, and not refunded", async () => {
    const order = await orderOf(DEMO.orders.priyaAgain);
    const earlier = await orderOf(DEMO.orders.priyaWrongBuilding);
    assert.equal(order.customer_id, DEMO.customers.priya);
    assert.ok(order.placed_at > earlier.placed_at, '4620 is her newest order');
    const newest = await one<{ order_id: string }>('SELECT order_id FROM orders WHERE customer_id = $1 ORDER BY placed_at DESC LIMIT 1', [DEMO.customers.priya]);
    assert.equal(newest.order_id, DEMO.orders.priyaAgain);
    const events = await eventsOf(DEMO.orders.priyaAgain);
    const delivered = lastOf(events, 'scan');
    assert.equal(delivered.code, 'DLV');
    assert.equal(delivered.occurred_at.toISOString().slice(0, 10), '2026-11-27');
    assert.equal(delivered.occurred_at.getUTCDay(), 5, 'a Friday');
    assert.match(delivered.location_name, /main gate/);
    assert.doesNotMatch(delivered.location_name, /Block B/);
    assert.equal((await paymentsOf(DEMO.orders.priyaAgain)).filter((p) => p.kind === 'refund').length, 0);
  });

  it('gives every order a captured charge and a shipment, and every customer earlier tickets and older orders', async () => {
    const uncharged = await q(
      "SELECT order_id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.order_id AND p.kind = 'charge' AND p.processor_code = 'CPT')",
    );
    assert.deepEqual(uncharged, []);
    const unshipped = await q('SELECT order_id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.order_id)');
    assert.deepEqual(unshipped, []);
    for (const customerId of Object.values(DEMO.customers)) {
      const { tickets, orders } = await one<{ tickets: number; orders: number }>(
        `SELECT (SELECT count(*)::int FROM support_tickets WHERE customer_id = $1) AS tickets,
                (SELECT count(*)::int FROM orders WHERE customer_id = $1) AS orders`,
        [customerId],
      );
      assert.ok(tickets >= 3, `${customerId} has ${tickets} earlier tickets`);
      assert.ok(orders >= 3, `${customerId} has ${orders} orders`);
    }
    const dana = await one<{ n: number }>('SELECT count(*)::int AS n FROM support_tickets WHERE customer_id = $1', [DEMO.customers.dana]);
    assert.ok(dana.n >= 12, "enough of Dana's tickets that get_earlier_tickets pages");
  });

  it('has policies for each kind of dispute and the general refund rule', async () => {
    const topics = (await q<{ topic: string }>('SELECT topic FROM policies')).map((r) => r.topic);
    for (const topic of ['delivered_not_received', 'duplicate_charge', 'wrong_building', 'courier_address_dispute', 'refund_general']) {
      assert.ok(topics.includes(topic), topic);
    }
  });
});

describe('example ticket events', () => {
  const examples = Object.fromEntries(
    readdirSync(EXAMPLES_DIR)
      .filter((f) => f.endsWith('.json'))
      .map((f) => [f.replace(/\.json$/, ''), parseTicketEvent(JSON.parse(readFileSync(join(EXAMPLES_DIR, f), 'utf8')))]),
  );
  /** The example event in examples/events/`name`.json, which must exist. */
  const example = (name: string) => {
    const event = examples[name];
    assert.ok(event, `examples/events/${name}.json exists`);
    return event;
  };

  it('are valid ticket events for seeded customers, each naming an order the customer has', async () => {
    for (const name of ['dana-5102', 'double-charge', 'wrong-address', 'priya-1']) {
      const event = examples[name];
      assert.ok(event, `${name}.json exists`);
      const orderId = /order (\d{4})/i.exec(event.message)?.[1];
      assert.ok(orderId, `${name} names an order`);
      assert.equal((await orderOf(orderId)).customer_id, event.customerId, `${name}: order ${orderId} is the customer's own`);
    }
  });

  it("ties each event to its case: Dana's 5102, the double charge, the courier's address claim", () => {
    assert.equal(example('dana-5102').customerId, DEMO.customers.dana);
    assert.match(example('dana-5102').message, /order 5102.*delivered.*never arrived/is);
    assert.match(example('double-charge').message, new RegExp(`charged twice for order ${DEMO.orders.doubleCharge}`));
    assert.match(example('wrong-address').message, new RegExp(`Order ${DEMO.orders.wrongAddress}[\\s\\S]*address is incorrect`));
  });

  it("has Priya's first conversation ask to remember Block B, and her second, on a Monday, name no order", () => {
    assert.match(example('priya-1').message, /Please remember: deliveries must go to Block B, not the main gate\./);
    const second = example('priya-2');
    assert.equal(second.customerId, DEMO.customers.priya);
    assert.equal(second.message, 'Same problem as last time, the courier left it at the wrong building again.');
    assert.equal(second.receivedAt.slice(0, 10), '2026-11-30');
    assert.equal(new Date(second.receivedAt).getUTCDay(), 1, 'a Monday');
    assert.doesNotMatch(second.message, /\d{4}/);
  });
});
