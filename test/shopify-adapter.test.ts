import assert from 'node:assert/strict';
import { Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../src/config';
import { decimalToMinor, minorToDecimal } from '../src/context/money';
import { IdempotencyMismatchError, ProviderEventError, RefundRefusedError, type PaymentProvider } from '../src/commerce/payment-provider';
import { createShopifyGraphql, ShopifyRefusedError, ShopifyUnavailableError, throttleWaitMs } from '../src/commerce/shopify/graphql';
import { createShopifyOrderSource, type ShopifyOrderSource } from '../src/commerce/shopify/orders';
import { createShopifyPaymentProvider } from '../src/commerce/shopify/payments';
import { shopifySettingsFromEnv, type ShopifySettings } from '../src/commerce/shopify/settings';
import * as operations from '../src/commerce/shopify/operations';
import { metadataOfNote, refundNote } from '../src/commerce/shopify/translate';
import { DEMO_PARCELS } from '../src/dev/demo-data/demo-parcels';
import { ORDERS, PAYMENTS } from '../src/dev/demo-data/demo-shop';
import { shipmentRow } from '../src/dev/demo-data/demo-tracking';
import { DEMO } from '../src/dev/demo-data/seed';
import { startShopifyStandin, type ShopifyStandin } from '../src/dev/shopify-standin';
import { MAX_QUERY_COST, requestedCost, STANDIN_SCHEMA } from '../src/dev/shopify-standin-schema';
import { seedDemoShop } from '../src/dev/shopify-standin-demo';

// The Shopify adapters through the official @shopify/admin-api-client against the Shopify
// stand-in (a test double of the GraphQL Admin API as strict as its documentation), seeded with
// the demo shop: orders and shipments read in casework's neutral codes exactly as the demo's,
// another customer's order reading as none, Shopify's cost throttling waited out or handed on,
// and refundCreate made once under its idempotency key whatever is lost or retried.

let standin: ShopifyStandin;
let settings: ShopifySettings;
let orders: ShopifyOrderSource;
let payments: PaymentProvider;

function settingsFor(s: ShopifyStandin, customers: Map<string, string>, overrides: Partial<ShopifySettings> = {}): ShopifySettings {
  return {
    storeDomain: s.storeDomain,
    accessToken: s.accessToken,
    apiVersion: s.apiVersion,
    apiBase: s.url,
    webhookSecret: s.webhookSecret,
    customers,
    orderNamePrefix: '#',
    maxThrottleWaitMs: 3_000,
    timeoutMs: 2_000,
    ...overrides,
  };
}

before(async () => {
  standin = await startShopifyStandin();
  settings = settingsFor(standin, seedDemoShop(standin));
  orders = createShopifyOrderSource(settings);
  payments = createShopifyPaymentProvider(settings);
});
after(async () => {
  await standin?.close();
});

describe('Shopify orders through the commerce port', () => {
  it('reads every demo order as the demo does: status, currency, totals and lines in minor units, address, instructions, position', async () => {
    for (const row of ORDERS) {
      const order = await orders.order(row.customer_id, row.order_id);
      assert.ok(order, `order ${row.order_id}`);
      assert.deepEqual(
        order,
        {
          orderId: row.order_id,
          // The demo adapter reads timestamptz back as an ISO instant with milliseconds; Shopify's reads the same.
          placedAt: new Date(row.placed_at).toISOString(),
          status: row.status_code,
          currency: row.currency,
          totalCents: row.total_cents,
          lines: row.items.map((i) => ({ name: i.name, qty: i.qty, unitPriceCents: i.unit_price_cents })),
          deliveryAddress: row.delivery_address,
          addressPosition: { lat: row.address_lat, lon: row.address_lon },
          deliveryInstructions: row.delivery_instructions,
        },
        `order ${row.order_id}`,
      );
    }
  });

  it("reads each order's latest shipment (courier, tracking number, status) as the demo's", async () => {
    for (const parcel of DEMO_PARCELS) {
      const demo = shipmentRow(parcel);
      const shipment = await orders.latestShipment(parcel.customer_id, parcel.order_id);
      // Shopify has no returning-to-sender status: the carrier's "not delivered" reads as a delivery exception.
      assert.deepEqual(shipment, { courier: 'NorthX', trackingNumber: demo.tracking_number, status: demo.status_code === 'RTS' ? 'EXC' : demo.status_code }, parcel.order_id);
    }
    assert.deepEqual(await orders.trackingNumbers(DEMO.customers.dana, DEMO.orders.notDelivered), ['NX4100510200']);
  });

  it("another customer's order, or a customer the shop does not know, reads as no order at all", async () => {
    assert.equal(await orders.order(DEMO.customers.marco, DEMO.orders.notDelivered), undefined);
    assert.equal(await orders.latestShipment(DEMO.customers.marco, DEMO.orders.notDelivered), null);
    assert.deepEqual(await orders.trackingNumbers(DEMO.customers.marco, DEMO.orders.notDelivered), []);
    assert.equal(await orders.order('cust_unknown', DEMO.orders.notDelivered), undefined);
    const danaGid = settings.customers.get(DEMO.customers.dana)!;
    // A Shopify customer id used directly as the casework id reads that customer's orders, and only theirs.
    assert.equal((await orders.order(danaGid, DEMO.orders.notDelivered))?.orderId, DEMO.orders.notDelivered);
    assert.equal(await orders.order(danaGid, DEMO.orders.doubleCharge), undefined);
    assert.equal(await orders.order(DEMO.customers.dana, '999999'), undefined);
  });

  it("lists a customer's orders newest first, paged, with the total and each order's courier", async () => {
    const dana = ORDERS.filter((o) => o.customer_id === DEMO.customers.dana).sort((a, b) => b.placed_at.localeCompare(a.placed_at));
    const first = await orders.orders(DEMO.customers.dana, { offset: 0, limit: 2 });
    assert.equal(first.total, dana.length);
    assert.deepEqual(
      first.items.map((o) => [o.orderId, o.status, o.totalCents, o.courier]),
      dana.slice(0, 2).map((o) => [o.order_id, o.status_code, o.total_cents, 'NorthX']),
    );
    const rest = await orders.orders(DEMO.customers.dana, { offset: 2, limit: 10 });
    assert.deepEqual(
      rest.items.map((o) => o.orderId),
      dana.slice(2).map((o) => o.order_id),
    );
    assert.deepEqual(await orders.orders('cust_unknown', { offset: 0, limit: 5 }), { total: 0, items: [] });
  });
});

describe("Shopify's cost throttling", () => {
  it('a throttled query is waited out inside the call for as long as the throttle status says, then answered', async () => {
    const waits: number[] = [];
    const graphql = createShopifyGraphql(settings, { sleep: (ms) => (waits.push(ms), new Promise((r) => setTimeout(r, ms))) });
    const source = createShopifyOrderSource(settings, graphql);
    // An empty bucket restored at the standard plan's 100 points a second: the read waits about 2 s.
    standin.setBucket(0, 100);
    const before = standin.requests().length;
    const order = await source.order(DEMO.customers.dana, DEMO.orders.notDelivered);
    assert.equal(order?.status, 'DLVD');
    const seen = standin.requests().slice(before);
    assert.equal(seen[0]?.throttled, true, 'the first try was throttled');
    assert.equal(seen.at(-1)?.throttled, false);
    assert.ok(waits.length >= 1 && waits.every((ms) => ms > 0 && ms <= settings.maxThrottleWaitMs), `waits ${waits.join(',')}`);
    standin.setBucket(2_000, 100);
  });

  it('a throttle longer than casework waits inside a call fails it as unavailable, with the wait as its retry-after', async () => {
    const waits: number[] = [];
    const graphql = createShopifyGraphql(settings, { sleep: async (ms) => void waits.push(ms) });
    standin.setBucket(0, 1);
    await assert.rejects(
      createShopifyOrderSource(settings, graphql).order(DEMO.customers.dana, DEMO.orders.notDelivered),
      (e: unknown) => e instanceof ShopifyUnavailableError && e.kind === 'unavailable' && (e.retryAfterSeconds ?? 0) > 60 && !/shpat_/.test(e.message),
    );
    assert.deepEqual(waits, [], 'nothing was waited inside the call');
    standin.setBucket(2_000, 100);
  });

  it('computes the wait from the cost figures Shopify returns', () => {
    const status = (currentlyAvailable: number, restoreRate = 100, maximumAvailable = 2_000) => ({ maximumAvailable, currentlyAvailable, restoreRate });
    assert.equal(throttleWaitMs({ requestedQueryCost: 352, actualQueryCost: null, throttleStatus: status(52) }), 3_000);
    assert.equal(throttleWaitMs({ requestedQueryCost: 10, actualQueryCost: null, throttleStatus: status(10) }), 0);
    assert.equal(throttleWaitMs({ requestedQueryCost: 2_500, actualQueryCost: null, throttleStatus: status(2_000) }), Infinity);
  });
});

describe('the stand-in is as strict as the Admin API', () => {
  it("every operation casework sends is valid against Shopify's schema and costs less than a single query may", () => {
    const sent: [string, string][] = Object.entries(operations as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
    assert.ok(sent.length >= 7);
    for (const [name, text] of sent) {
      const document = parse(text);
      assert.deepEqual(validate(STANDIN_SCHEMA, document), [], name);
      const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
      assert.ok(requestedCost(STANDIN_SCHEMA, operation, new Map(), { first: 50 }) < MAX_QUERY_COST, name);
    }
  });

  it('refuses a wrong access token, an unknown field and a refundCreate without @idempotent, in words a person reads', async () => {
    const wrong = createShopifyGraphql({ ...settings, accessToken: 'shpat_wrong' });
    await assert.rejects(wrong(`query { order(id: "gid://shopify/Order/1") { id } }`, {}), (e: unknown) => e instanceof ShopifyRefusedError && e.code === 'http_401');
    const graphql = createShopifyGraphql(settings);
    await assert.rejects(
      graphql(
        `
          query {
            order(id: "gid://shopify/Order/1") {
              id
              totalPrice
            }
          }
        `,
        {},
      ),
      (e: unknown) => e instanceof ShopifyRefusedError && e.code === 'undefinedField' && /Field 'totalPrice' doesn't exist on type 'Order'/.test(e.message),
    );
    await assert.rejects(
      graphql(
        `
          mutation {
            refundCreate(input: { orderId: "gid://shopify/Order/1" }) {
              userErrors {
                message
              }
            }
          }
        `,
        {},
      ),
      (e: unknown) => e instanceof ShopifyRefusedError && /@idempotent/.test(e.message),
    );
  });
});

describe('Shopify Payments as the payment provider', () => {
  it("reads an order's charges (Marco's double charge) and the refunds already made (Priya's 4471)", async () => {
    const marco = await payments.paymentsOf('c-test', DEMO.orders.doubleCharge);
    const charged = PAYMENTS.filter((p) => p.order_id === DEMO.orders.doubleCharge && p.kind === 'charge');
    assert.deepEqual(
      marco.charges.map((c) => [c.amountCents, c.currency, c.status, c.refundedCents]),
      charged.map((c) => [c.amount_cents, 'GBP', 'captured', 0]),
    );
    const priya = await payments.paymentsOf('c-test', DEMO.orders.priyaWrongBuilding);
    assert.deepEqual(
      priya.refunds.map((r) => [r.amountCents, r.status, r.chargeId]),
      [[6499, 'succeeded', priya.charges[0]!.id]],
    );
    assert.equal(priya.charges[0]!.refundedCents, 6499);
    assert.deepEqual(await payments.paymentsOf('c-test', '999999'), { charges: [], refunds: [] });
  });

  function newOrder(amountMinor: number) {
    const customer = standin.addCustomer(`buyer${Math.random()}@example.com`);
    const order = standin.addOrder({
      name: `#T${Date.now()}${Math.floor(Math.random() * 1e6)}`,
      customerId: customer,
      createdAt: new Date().toISOString(),
      currency: 'GBP',
      lines: [{ name: 'Kettle', quantity: 1, unitMinor: amountMinor }],
    });
    return { order, charge: standin.transactions(order.id)[0]! };
  }

  it('a response lost after Shopify made the refund is sent again with the same key: one refund, the metadata traced back', async () => {
    const { order, charge } = newOrder(4_599);
    standin.fault({ kind: 'lose_response' });
    const refund = await payments.refund({
      customerId: 'c-test',
      chargeId: charge.id,
      amountCents: 4_599,
      reason: 'requested_by_customer',
      idempotencyKey: `cw-${order.id}-lost`,
      metadata: { casework_refund_id: 'r-77' },
    });
    assert.deepEqual([refund.status, refund.amountCents, refund.currency, refund.chargeId, refund.metadata.casework_refund_id], ['succeeded', 4_599, 'GBP', charge.id, 'r-77']);
    assert.equal(standin.refunds(order.id).length, 1);
    const again = await payments.refund({
      customerId: 'c-test',
      chargeId: charge.id,
      amountCents: 4_599,
      reason: 'requested_by_customer',
      idempotencyKey: `cw-${order.id}-lost`,
      metadata: { casework_refund_id: 'r-77' },
    });
    assert.equal(again.id, refund.id, 'a retried activity gets the same refund');
    assert.equal(standin.refunds(order.id).length, 1);
    const read = await payments.paymentsOf('c-test', order.name.replace('#', ''));
    assert.deepEqual(
      read.refunds.map((r) => [r.id, r.metadata.casework_refund_id]),
      [[refund.id, 'r-77']],
    );
  });

  it('refusals come back in plain words and are not retried: more than is left, a key reused for another amount, no such charge', async () => {
    const { order, charge } = newOrder(2_000);
    await assert.rejects(
      payments.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 2_500, reason: 'duplicate', idempotencyKey: `cw-${order.id}-big`, metadata: {} }),
      (e: unknown) => e instanceof RefundRefusedError && /greater than the refundable amount 20\.0/.test(e.message),
    );
    await payments.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 700, reason: 'duplicate', idempotencyKey: `cw-${order.id}-a`, metadata: {} });
    await assert.rejects(
      payments.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 800, reason: 'duplicate', idempotencyKey: `cw-${order.id}-a`, metadata: {} }),
      (e: unknown) => e instanceof IdempotencyMismatchError,
    );
    await assert.rejects(
      payments.refund({ customerId: 'c-test', chargeId: 'gid://shopify/OrderTransaction/1', amountCents: 100, reason: 'duplicate', idempotencyKey: 'cw-none', metadata: {} }),
      (e: unknown) => e instanceof RefundRefusedError && e.code === 'charge_not_found',
    );
    assert.equal(standin.refunds(order.id).length, 1);
  });

  it('a refund failing later reaches casework as a verified refund.failed; a forged one is refused', async () => {
    const { order, charge } = newOrder(3_000);
    const refund = await payments.refund({
      customerId: 'c-test',
      chargeId: charge.id,
      amountCents: 3_000,
      reason: 'requested_by_customer',
      idempotencyKey: `cw-${order.id}-f`,
      metadata: { casework_refund_id: 'r9' },
    });
    const { body, hmac } = standin.failRefund(refund.id);
    const event = payments.readEvent(Buffer.from(body), hmac);
    assert.deepEqual([event?.type, event?.refund.id, event?.refund.status, event?.refund.metadata.casework_refund_id], ['refund.failed', refund.id, 'failed', 'r9']);
    assert.throws(() => payments.readEvent(Buffer.from(body.replace('r9', 'r8')), hmac), ProviderEventError);
    assert.throws(() => payments.readEvent(Buffer.from(body), undefined), ProviderEventError);
  });

  it('whatever is lost, throttled or unavailable on the way, one approval is one refund (random fault sequences)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('lose_response' as const, 'unavailable' as const, 'throttle' as const), { maxLength: 2 }),
        fc.integer({ min: 1, max: 3 }),
        async (faults, retries) => {
          const { order, charge } = newOrder(1_200);
          const refund = () =>
            payments.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 1_200, reason: 'duplicate', idempotencyKey: `cw-${order.id}-approval`, metadata: {} });
          for (const kind of faults) {
            if (kind === 'throttle') standin.setBucket(0, 2_000);
            else standin.fault({ kind });
          }
          // The activity may be retried (a killed worker, a timeout): each attempt sends the approval's key.
          for (let attempt = 0; attempt < retries; attempt++) await refund().catch(() => undefined);
          const made = await refund();
          assert.equal(made.amountCents, 1_200);
          assert.equal(standin.refunds(order.id).length, 1);
          assert.equal(standin.transactions(order.id).filter((t) => t.kind === 'REFUND').length, 1);
        },
      ),
      { numRuns: 12 },
    );
    standin.setBucket(2_000, 100);
  });
});

describe('Shopify settings and translations', () => {
  it('reads the environment, and names the variable missing when half configured', () => {
    assert.equal(shopifySettingsFromEnv({}), undefined);
    assert.throws(
      () => shopifySettingsFromEnv({ CASEWORK_SHOPIFY_ACCESS_TOKEN: 'shpat_x' }),
      (e: unknown) => e instanceof ConfigError && /CASEWORK_SHOPIFY_STORE_DOMAIN is required/.test(e.message),
    );
    assert.throws(
      () => shopifySettingsFromEnv({ CASEWORK_SHOPIFY_STORE_DOMAIN: 'shop.myshopify.com' }),
      (e: unknown) => e instanceof ConfigError && /CASEWORK_SHOPIFY_ACCESS_TOKEN is required/.test(e.message),
    );
    assert.throws(
      () =>
        shopifySettingsFromEnv({ CASEWORK_SHOPIFY_STORE_DOMAIN: 'shop.myshopify.com', CASEWORK_SHOPIFY_ACCESS_TOKEN: 'x', CASEWORK_SHOPIFY_CUSTOMERS: 'C-1=alice@example.com' }),
      (e: unknown) => e instanceof ConfigError && /CASEWORK_SHOPIFY_CUSTOMERS: "C-1=alice@example.com"/.test(e.message),
    );
    const read = shopifySettingsFromEnv({
      CASEWORK_SHOPIFY_STORE_DOMAIN: 'shop.myshopify.com',
      CASEWORK_SHOPIFY_ACCESS_TOKEN: 'shpat_x',
      CASEWORK_SHOPIFY_CUSTOMERS: 'C-1=42, C-2=gid://shopify/Customer/7',
    });
    assert.equal(read?.apiVersion, '2026-10');
    assert.deepEqual(
      [...(read?.customers ?? [])],
      [
        ['C-1', 'gid://shopify/Customer/42'],
        ['C-2', 'gid://shopify/Customer/7'],
      ],
    );
  });

  it('money moves between Shopify decimals and minor units exactly, and metadata survives the refund note', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.constantFrom('GBP', 'JPY', 'KWD', 'EUR'), (minor, currency) => {
        assert.equal(decimalToMinor(minorToDecimal(minor, currency), currency), minor);
      }),
    );
    assert.equal(decimalToMinor('45.0', 'GBP'), 4_500);
    assert.throws(() => decimalToMinor('1.005', 'GBP'), /more decimals/);
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => k !== 'reason'),
          fc.string(),
          { noNullPrototype: true },
        ),
        (metadata) => {
          assert.deepEqual(metadataOfNote(refundNote('duplicate', metadata)), metadata);
        },
      ),
    );
  });
});
