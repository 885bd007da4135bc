import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createToolActivities } from '../src/activities/tools';
import { COURIER_EVENT_CODES, ORDER_STATUS_CODES, PAYMENT_STATUS_CODES } from '../src/activities/tools/codes';
import { withCustomer, type Database } from '../src/db/pool';
import { DEMO } from '../src/dev/demo-data/seed';
import type { ToolOutcome } from '../src/schemas/tool-call';
import { openTestDatabase, unique, EMBEDDED_SHARED_SESSION } from './support/db';
import { formatMoney } from '../src/context/money';

const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// The investigation tools against the seeded demo data in real Postgres, as the app role.

let db: Database;
let tools: ReturnType<typeof createToolActivities>;
type Obj = Record<string, any>;
type ToolName = Exclude<keyof typeof tools, 'recordRefundDecision'>;

const { dana, priya, marco, leila } = DEMO.customers;

async function run(name: ToolName, input: unknown, customerId: string, context: { workflowId?: string; toolUseId?: string } = {}): Promise<ToolOutcome> {
  const call = tools[name] as (call: unknown) => Promise<ToolOutcome>;
  return call({
    name,
    input,
    context: { customerId, ticketId: 'T-test', workflowId: context.workflowId ?? 'investigation-T-test', toolUseId: context.toolUseId ?? unique('toolu') },
  });
}

async function ok(name: ToolName, input: unknown, customerId: string, context?: { workflowId?: string; toolUseId?: string }): Promise<Obj> {
  const outcome = await run(name, input, customerId, context);
  assert.equal(outcome.is_error, false, `${name} failed: ${outcome.content}`);
  return JSON.parse(outcome.content) as Obj;
}

async function fails(name: ToolName, input: unknown, customerId: string, context?: { workflowId?: string; toolUseId?: string }): Promise<string> {
  const outcome = await run(name, input, customerId, context);
  assert.equal(outcome.is_error, true, `${name} should have failed but returned ${outcome.content}`);
  return outcome.content;
}

const decide = (customerId: string, requestId: string, decision: 'approved' | 'denied', approver = 'support-lead', reason?: string) =>
  tools.recordRefundDecision({ customerId, requestId, decision, approver, reason, decidedAt: new Date().toISOString() });

// Checks read as the owning customer through the app role: in embedded mode (PGlite) every pool
// shares one session, so the admin pool cannot be relied on to bypass row-level security.
async function asCustomer<T = Obj>(customerId: string, sql: string, params: unknown[] = []): Promise<T[]> {
  return withCustomer(db.app, customerId, async (c) => (await c.query(sql, params)).rows as T[]);
}

const OWNER: Record<string, string> = {
  '5102': DEMO.customers.dana,
  '4996': DEMO.customers.dana,
  '4471': DEMO.customers.priya,
  '5230': DEMO.customers.marco,
  '5317': DEMO.customers.leila,
};

async function totalOf(orderId: string): Promise<number> {
  const owner = OWNER[orderId];
  assert.ok(owner, `order ${orderId} has an owner in OWNER`);
  const [order] = await asCustomer<{ total_cents: number }>(owner, 'SELECT total_cents FROM orders WHERE order_id = $1', [orderId]);
  assert.ok(order, `order ${orderId} is visible to its owner`);
  return order.total_cents;
}

const RAW_CODES = new Set([...Object.keys(COURIER_EVENT_CODES), ...Object.keys(ORDER_STATUS_CODES), ...Object.keys(PAYMENT_STATUS_CODES), 'DS', 'RC', 'SG', 'HH', 'NB', 'SP']);

before(async () => {
  db = await openTestDatabase({ seed: true });
  tools = createToolActivities({ pool: db.app });
});
after(async () => db?.close());

describe('createToolActivities', () => {
  it('builds every tool the investigator calls against the shop, plus recordRefundDecision', () => {
    assert.deepEqual(Object.keys(tools).sort(), [
      'get_earlier_tickets',
      'get_order',
      'get_payments',
      'get_tracking_events',
      'issue_refund',
      'list_orders',
      'lookup_policy',
      'recordRefundDecision',
      'request_refund',
    ]);
  });
});

describe('get_order', () => {
  it('returns the order with its status, items, address and shipment in words, and no internal fields', async () => {
    const order = await ok('get_order', { order_id: '5102' }, dana);
    assert.deepEqual(Object.keys(order), ['order_id', 'status', 'placed_at', 'total_cents', 'currency', 'items', 'delivery_address', 'delivery_instructions', 'shipment']);
    assert.equal(order.status, 'delivered');
    assert.equal(order.placed_at, '2026-10-05T18:05:00.000Z');
    assert.equal(order.total_cents, await totalOf('5102'));
    assert.equal(order.currency, 'GBP');
    assert.deepEqual(order.items[0], { name: 'Trailpeak GTX trail running shoes, UK 6', qty: 1, price_cents: 9499 });
    assert.equal(
      order.items.reduce((n: number, i: Obj) => n + i.qty * i.price_cents, 0),
      order.total_cents,
    );
    assert.match(order.delivery_address, /Orchard Lane, Headingley, Leeds/);
    assert.match(order.delivery_instructions, /neighbour at number 16/);
    assert.deepEqual(order.shipment, { courier: 'NorthX', tracking_number: 'NX4100510200', status: 'delivered' });
  });

  it('translates every status code, e.g. refunded and delivery problem', async () => {
    assert.equal((await ok('get_order', { order_id: '4471' }, priya)).status, 'refunded');
    const leilas = await ok('get_order', { order_id: '5317' }, leila);
    assert.equal(leilas.status, 'delivery problem');
    assert.equal(leilas.shipment.status, 'being returned to the sender');
  });

  it('says an unknown order is not on the account, as an error result the model reads', async () => {
    assert.equal(await fails('get_order', { order_id: '9999' }, dana), "No order 9999 on this customer's account.");
  });

  it("cannot see another customer's order, even when the input names that customer", async () => {
    const message = await fails('get_order', { order_id: '4471', customer_id: priya }, dana);
    assert.equal(message, "No order 4471 on this customer's account.", 'indistinguishable from an unknown order');
  });

  it('refuses invalid input naming the field', async () => {
    assert.match(await fails('get_order', { order_id: '' }, dana), /^Invalid input for get_order: order_id/);
  });
});

describe('row-level security under the tools', () => {
  it('shows a scoped transaction only its own customer, with no WHERE clause at all', async () => {
    const seen = await withCustomer(db.app, dana, async (c) => (await c.query('SELECT DISTINCT customer_id FROM orders')).rows.map((r) => r.customer_id));
    assert.deepEqual(seen, [dana]);
    const payments = await withCustomer(db.app, dana, async (c) => (await c.query("SELECT count(*)::int AS n FROM payments WHERE order_id = '4471'")).rows[0].n);
    assert.equal(payments, 0);
  });

  it('shows an unscoped app connection nothing', { skip: EMBEDDED_SHARED_SESSION }, async () => {
    const { rows } = await db.app.query('SELECT count(*)::int AS n FROM orders');
    assert.equal(rows[0].n, 0);
  });
});

describe('list_orders', () => {
  it("lists the customer's orders newest first and says how many it shows of how many", async () => {
    const result = await ok('list_orders', { limit: 2 }, dana);
    assert.equal(result.showing, 'orders 1-2 of 6, newest first');
    assert.deepEqual(
      result.orders.map((o: Obj) => o.order_id),
      ['5102', '4996'],
    );
    assert.deepEqual(Object.keys(result.orders[0]), ['order_id', 'placed_at', 'status', 'total_cents', 'courier']);
    assert.equal(result.orders[0].courier, 'NorthX');
  });

  it("puts Priya's newest order, 4620, first, so 'same problem as last time' finds it", async () => {
    const result = await ok('list_orders', {}, priya);
    assert.deepEqual(
      result.orders.map((o: Obj) => o.order_id),
      ['4620', '4471', '4315', '4102'],
    );
    assert.deepEqual(
      result.orders.map((o: Obj) => o.status),
      ['delivered', 'refunded', 'delivered', 'delivered'],
    );
    assert.equal(result.showing, 'orders 1-4 of 4, newest first');
  });
});

describe('get_tracking_events', () => {
  it('returns five events a page, newest first, with the delivery scan in words: how left, photo, GPS distance', async () => {
    const page = await ok('get_tracking_events', { order_id: '5102', page: 1 }, dana);
    assert.equal(page.order_id, '5102');
    assert.equal(page.events.length, 5);
    assert.equal(page.showing, 'events 1-5 of 14, newest first');
    assert.equal(page.next_page, 2);
    const times = page.events.map((e: Obj) => e.at);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    const delivered = page.events[0];
    assert.equal(delivered.status, 'delivered');
    assert.equal(delivered.at, '2026-10-12T14:37:00.000Z');
    assert.match(delivered.detail, /left at the doorstep, no signature/);
    assert.match(delivered.detail, /photo: no/);
    assert.match(delivered.detail, /GPS scan 2\.4 km from the delivery address/);
  });

  it('never shows a raw courier code, and explains the mis-sort in words', async () => {
    const all: Obj[] = [];
    for (const page of [1, 2, 3]) all.push(...(await ok('get_tracking_events', { order_id: '5102', page }, dana)).events);
    assert.equal(all.length, 14);
    for (const e of all) assert.ok(!RAW_CODES.has(e.status), `status "${e.status}" is a word, not a code`);
    const misSort = all.find((e) => e.status === 'mis-sorted: scanned at the wrong hub');
    assert.ok(misSort);
    assert.match(misSort.location, /Glasgow/);
    assert.match(misSort.courier_note, /Chute 14/);
  });

  it('ends on the last page and refuses a page past the end, saying how many there are', async () => {
    const last = await ok('get_tracking_events', { order_id: '5102', page: 3 }, dana);
    assert.equal(last.events.length, 4);
    assert.equal(last.showing, 'events 11-14 of 14, newest first');
    assert.equal(last.next_page, null);
    assert.equal(last.events[3].status, 'shipping label created');
    assert.equal(await fails('get_tracking_events', { order_id: '5102', page: 4 }, dana), 'Page 4 is past the end: there are 14 events on 3 pages.');
  });

  it('shows who signed where for Priya, and the ADX "address incorrect" scans 430 m away for Leila', async () => {
    const priyas = (await ok('get_tracking_events', { order_id: '4471', page: 1 }, priya)).events[0];
    assert.match(priyas.location, /Block A reception/);
    assert.match(priyas.detail, /left with a reception desk, signed by K\. OSEI; photo: yes/);
    const leilas = (await ok('get_tracking_events', { order_id: '5317', page: 1 }, leila)).events;
    const adx = leilas.filter((e: Obj) => e.status === 'exception: courier says the address is incorrect');
    assert.equal(adx.length, 2);
    for (const e of adx) assert.match(e.detail, /address incorrect.*GPS scan 430 m from the delivery address/);
  });

  it("refuses an unknown order and another customer's order alike", async () => {
    assert.equal(await fails('get_tracking_events', { order_id: '9999', page: 1 }, dana), "No order 9999 on this customer's account.");
    assert.equal(await fails('get_tracking_events', { order_id: '5102', page: 1 }, priya), "No order 5102 on this customer's account.");
  });
});

describe('get_earlier_tickets', () => {
  it("pages Dana's thirteen tickets five at a time, newest first, each with a short excerpt of her own words", async () => {
    const first = await ok('get_earlier_tickets', { page: 1 }, dana);
    assert.equal(first.showing, 'tickets 1-5 of 13, newest first');
    assert.equal(first.next_page, 2);
    assert.equal(first.tickets.length, 5);
    const top = first.tickets[0];
    assert.deepEqual(Object.keys(top), ['ticket_id', 'opened_at', 'status', 'order_id', 'subject', 'excerpt']);
    assert.deepEqual([top.ticket_id, top.order_id, top.status], ['T-13390', '5102', 'closed']);
    assert.equal(top.excerpt, 'Tracking for order 5102 says it was scanned in Glasgow this morning. I live in Leeds! Is it lost?');
    for (const t of first.tickets) {
      assert.ok(t.excerpt.length <= 201, 'at most about 200 characters');
      assert.doesNotMatch(t.excerpt, /^Hi\b|Sent from my phone|Reply from Cartwise/, 'no greeting, signature or quoted thread');
    }
    const [body] = await asCustomer<{ n: number }>(dana, 'SELECT length(body) AS n FROM support_tickets WHERE ticket_id = $1', [top.ticket_id]);
    assert.ok(body && body.n > top.excerpt.length * 3, 'the excerpt is a fraction of the body');
  });

  it('ends on page 3 and refuses page 4', async () => {
    const last = await ok('get_earlier_tickets', { page: 3 }, dana);
    assert.equal(last.showing, 'tickets 11-13 of 13, newest first');
    assert.equal(last.next_page, null);
    assert.equal(await fails('get_earlier_tickets', { page: 4 }, dana), 'Page 4 is past the end: there are 13 tickets on 3 pages.');
  });

  it("shows only the caller's own tickets", async () => {
    const result = await ok('get_earlier_tickets', { page: 1 }, priya);
    assert.ok(
      result.tickets.every((t: Obj) => t.ticket_id.startsWith('T-2')),
      "Priya's ticket ids",
    );
    assert.match(result.showing, /of 6,/);
  });
});

describe('get_payments', () => {
  it('shows one captured charge for 5102 in words, nothing refunded, the total refundable', async () => {
    const total = await totalOf('5102');
    const p = await ok('get_payments', { order_id: '5102' }, dana);
    assert.deepEqual(p.charges, [{ amount_cents: total, at: '2026-10-05T18:05:52.000Z', status: 'captured (money taken)', method: 'Visa card' }]);
    assert.deepEqual(p.refunds, []);
    assert.deepEqual([p.charged_cents, p.refunded_cents, p.refundable_cents, p.possible_duplicate_charge], [total, 0, total, false]);
  });

  it('flags two captured charges of the same amount as a possible duplicate', async () => {
    const total = await totalOf('5230');
    const p = await ok('get_payments', { order_id: '5230' }, marco);
    assert.equal(p.charges.length, 2);
    assert.deepEqual(
      p.charges.map((c: Obj) => c.amount_cents),
      [total, total],
    );
    assert.equal(p.possible_duplicate_charge, true);
    assert.equal(p.charged_cents, 2 * total);
    assert.equal(p.refundable_cents, 2 * total);
  });

  it("counts Priya's settled refund on 4471, leaving nothing refundable", async () => {
    const total = await totalOf('4471');
    const p = await ok('get_payments', { order_id: '4471' }, priya);
    assert.deepEqual(p.refunds, [{ amount_cents: total, at: '2026-10-16T10:12:00.000Z', status: 'refund settled (money returned)' }]);
    assert.deepEqual([p.refunded_cents, p.refundable_cents], [total, 0]);
  });

  it("refuses another customer's order", async () => {
    assert.equal(await fails('get_payments', { order_id: '5230' }, dana), "No order 5230 on this customer's account.");
  });
});

describe('lookup_policy', () => {
  const cases: [string, string][] = [
    ['parcel marked delivered but not received', 'delivered_not_received'],
    ['customer charged twice for one order', 'duplicate_charge'],
    ['parcel delivered to the wrong building or address', 'wrong_building'],
    ['courier says the address was wrong', 'courier_address_dispute'],
    ['refund policy', 'refund_general'],
    ['the parcel never arrived', 'delivered_not_received'],
    ['double charge on my card', 'duplicate_charge'],
  ];
  for (const [query, topic] of cases) {
    it(`finds "${topic}" for "${query}"`, async () => {
      const policy = await ok('lookup_policy', { topic: query }, dana);
      assert.deepEqual(Object.keys(policy), ['topic', 'title', 'text']);
      assert.equal(policy.topic, topic);
      assert.ok(policy.text.length > 50);
    });
  }

  it('refuses a topic no policy covers, listing the policies there are', async () => {
    const message = await fails('lookup_policy', { topic: 'opening hours of the shop' }, dana);
    assert.match(message, /^No policy matches "opening hours of the shop"\. Policies exist for: /);
    assert.match(message, /"Parcel marked delivered but not received"/);
    assert.match(message, /"General refund policy"/);
  });
});

describe('request_refund', () => {
  it('records a request awaiting approval and returns the same request when the call is retried', async () => {
    const total = await totalOf('5102');
    const context = { workflowId: unique('investigation'), toolUseId: 'toolu_refund_1' };
    const input = { order_id: '5102', amount_cents: total, reason: 'Marked delivered 2.4 km away, no photo; never received.' };
    const first = await ok('request_refund', input, dana, context);
    assert.deepEqual(Object.keys(first), ['request_id', 'order_id', 'amount_cents', 'currency', 'reason', 'status']);
    assert.deepEqual([first.order_id, first.amount_cents, first.currency, first.status], ['5102', total, 'GBP', 'awaiting_approval']);
    const retried = await ok('request_refund', input, dana, context);
    assert.deepEqual(retried, first);
    const [count] = await asCustomer<{ n: number }>(dana, 'SELECT count(*)::int AS n FROM refund_requests WHERE order_id = $1 AND workflow_id = $2', ['5102', context.workflowId]);
    assert.equal(count?.n, 1, 'one row for one model call');

    // While it waits, the same money cannot be asked for again in another call.
    const again = await fails('request_refund', { ...input, amount_cents: 1 }, dana, { workflowId: context.workflowId, toolUseId: 'toolu_refund_2' });
    assert.match(again, new RegExp(`${esc(formatMoney(total, 'GBP'))} is already asked for in a request awaiting a decision, so at most £0\\.00 can be requested`));
    assert.doesNotMatch(again, /cents|req_/, 'the refusal speaks money, as the model may repeat it to the customer');
    await decide(dana, first.request_id, 'denied', 'support-lead', 'test cleanup');
  });

  it("lets a request its investigation never decided expire, so it stops holding the order's amount", async () => {
    const total = await totalOf('5102');
    const input = { order_id: '5102', amount_cents: total, reason: 'Never received; its investigation was terminated.' };
    const abandoned = await ok('request_refund', input, dana, { workflowId: unique('investigation'), toolUseId: unique('toolu') });
    // Its investigation ended without a decision, and the expiry has passed.
    await db.admin.query("UPDATE refund_requests SET expires_at = now() - interval '1 minute' WHERE request_id = $1", [abandoned.request_id]);
    const fresh = await ok('request_refund', input, dana, { workflowId: unique('investigation'), toolUseId: unique('toolu') });
    assert.equal(fresh.amount_cents, total, 'the full amount can be requested again');
    const [row] = await asCustomer<{ status: string }>(dana, 'SELECT status FROM refund_requests WHERE request_id = $1', [abandoned.request_id]);
    assert.equal(row?.status, 'expired');
    await decide(dana, fresh.request_id, 'denied', 'support-lead', 'test cleanup');
  });

  it('treats the same tool_use id in another workflow as a different request', async () => {
    const input = { order_id: '4996', amount_cents: 500, reason: 'Goodwill for a late delivery.' };
    const a = await ok('request_refund', input, dana, { workflowId: unique('investigation'), toolUseId: 'toolu_shared' });
    const b = await ok('request_refund', input, dana, { workflowId: unique('investigation'), toolUseId: 'toolu_shared' });
    assert.notEqual(a.request_id, b.request_id);
    await decide(dana, a.request_id, 'denied');
    await decide(dana, b.request_id, 'denied');
  });

  it('refuses more than can still be refunded, saying how much can', async () => {
    const total = await totalOf('5102');
    const message = await fails('request_refund', { order_id: '5102', amount_cents: total + 1, reason: 'More than was charged.' }, dana);
    assert.match(
      message,
      new RegExp(
        `Refund of ${esc(formatMoney(total + 1, 'GBP'))} refused: order 5102 was charged ${esc(formatMoney(total, 'GBP'))}, £0\\.00 is already refunded, so at most ${esc(formatMoney(total, 'GBP'))} can be requested\\.`,
      ),
    );
    const refunded = await fails('request_refund', { order_id: '4471', amount_cents: 100, reason: 'Already refunded in October.' }, priya);
    assert.match(refunded, /at most \D?0\.00( [A-Z]{3})? can be requested/);
  });

  it("refuses an order that is not on the customer's account", async () => {
    assert.equal(await fails('request_refund', { order_id: '5230', amount_cents: 100, reason: 'Not her order.' }, dana), "No order 5230 on this customer's account.");
    const [count] = await asCustomer<{ n: number }>(dana, "SELECT count(*)::int AS n FROM refund_requests WHERE order_id = '5230'");
    assert.equal(count?.n, 0);
  });
});

describe('recordRefundDecision and issue_refund', () => {
  const ask = async (customerId: string, orderId: string, amount: number) =>
    ok('request_refund', { order_id: orderId, amount_cents: amount, reason: 'Test refund request.' }, customerId, {
      workflowId: unique('investigation'),
      toolUseId: unique('toolu'),
    });
  const refundRows = (customerId: string, requestId: string) => asCustomer(customerId, 'SELECT refund_id FROM refunds WHERE request_id = $1', [requestId]);
  const statusOf = async (customerId: string, requestId: string) =>
    (await asCustomer(customerId, 'SELECT status FROM refund_requests WHERE request_id = $1', [requestId]))[0]?.status;

  it('refuses to issue before a human decision, then issues exactly once after an approval', async () => {
    const total = await totalOf('5230');
    const request = await ask(marco, '5230', total);
    const early = await fails('issue_refund', { request_id: request.request_id }, marco);
    assert.match(early, new RegExp(`Refund request ${request.request_id} has no recorded approval: it is still awaiting a human decision`));
    assert.deepEqual(await refundRows(marco, request.request_id), []);

    const decision = await decide(marco, request.request_id, 'approved');
    assert.equal(decision.decision, 'approved');
    assert.match(decision.approvalId ?? '', /^apr_/);
    assert.equal(await statusOf(marco, request.request_id), 'approved');

    const issued = await ok('issue_refund', { request_id: request.request_id }, marco);
    assert.deepEqual(Object.keys(issued), ['refund_id', 'request_id', 'order_id', 'amount_cents', 'status']);
    assert.deepEqual([issued.request_id, issued.order_id, issued.amount_cents, issued.status], [request.request_id, '5230', total, 'issued']);
    const twice = await ok('issue_refund', { request_id: request.request_id }, marco);
    assert.deepEqual(twice, issued, 'a retry returns the same refund');
    assert.equal((await refundRows(marco, request.request_id)).length, 1, 'one refund per approval');
    assert.equal(await statusOf(marco, request.request_id), 'refunded');

    const payments = await ok('get_payments', { order_id: '5230' }, marco);
    assert.equal(payments.refunded_cents, total);
    assert.equal(payments.refundable_cents, total, 'the original charge stays');
    assert.deepEqual(
      payments.refunds.map((r: Obj) => r.amount_cents),
      [total],
    );
    assert.match(payments.refunds[0].status, /issued by casework/);
  });

  it('never issues a denied request, and says so', async () => {
    const request = await ask(dana, '5102', 1000);
    const decision = await decide(dana, request.request_id, 'denied', 'support-lead', 'proof of delivery checks out');
    assert.deepEqual([decision.decision, decision.approvalId], ['denied', null]);
    assert.equal(await statusOf(dana, request.request_id), 'denied');
    const message = await fails('issue_refund', { request_id: request.request_id }, dana);
    assert.match(message, new RegExp(`Refund request ${request.request_id} was denied by support-lead \\(proof of delivery checks out\\), so it cannot be issued`));
    assert.deepEqual(await refundRows(dana, request.request_id), []);
  });

  it('keeps the first decision: a retry or a later, different decision returns the recorded one', async () => {
    const request = await ask(leila, '5317', 2000);
    const first = await decide(leila, request.request_id, 'approved', 'support-lead');
    const retry = await decide(leila, request.request_id, 'approved', 'support-lead');
    const overruled = await decide(leila, request.request_id, 'denied', 'duty-manager', 'changed my mind');
    assert.deepEqual(retry, first);
    assert.deepEqual(overruled, first, 'the denial after the approval changes nothing');
    assert.equal(await statusOf(leila, request.request_id), 'approved');
    const rows = await asCustomer(leila, 'SELECT decision, approver FROM refund_decisions WHERE request_id = $1', [request.request_id]);
    assert.deepEqual(rows, [{ decision: 'approved', approver: 'support-lead' }]);
  });

  it("cannot decide or issue another customer's request", async () => {
    const request = await ask(leila, '5317', 500);
    await assert.rejects(decide(dana, request.request_id, 'approved'), (error: Error) => {
      assert.equal(error.name, 'ApplicationFailure');
      assert.match(error.message, new RegExp(`No refund request ${request.request_id} for customer ${dana}`));
      return true;
    });
    await decide(leila, request.request_id, 'approved');
    assert.equal(await fails('issue_refund', { request_id: request.request_id }, dana), `No refund request ${request.request_id} on this customer's account.`);
    assert.deepEqual(await refundRows(leila, request.request_id), []);
  });

  it('refuses an invalid decision for good, naming the field', async () => {
    await assert.rejects(
      tools.recordRefundDecision({ customerId: dana, requestId: 'req_x', decision: 'maybe' as 'approved', approver: 'a', decidedAt: 'yesterday' }),
      (error: Error & { nonRetryable?: boolean }) => {
        assert.match(error.message, /invalid refund decision: decision: .*decidedAt/);
        assert.equal(error.nonRetryable, true);
        return true;
      },
    );
  });

  it('has the database refuse a refund row that names no approval', async () => {
    const request = await ask(leila, '4733', 300);
    await decide(leila, request.request_id, 'denied');
    await assert.rejects(
      withCustomer(db.app, leila, (c) =>
        c.query("INSERT INTO refunds (refund_id, customer_id, approval_id, request_id, order_id, amount_cents) VALUES ('rfd_forged', $1, 'apr_forged', $2, '4733', 300)", [
          leila,
          request.request_id,
        ]),
      ),
      /foreign key/,
    );
  });
});
