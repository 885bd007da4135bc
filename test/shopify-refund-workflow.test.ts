import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DecisionRejectedError, decideRefund } from '../src/client/investigations';
import { demoCommerce } from '../src/commerce/demo';
import type { PaymentProvider } from '../src/commerce/payment-provider';
import type { Commerce } from '../src/commerce/shop';
import { createShopifyOrderSource } from '../src/commerce/shopify/orders';
import { createShopifyPaymentProvider } from '../src/commerce/shopify/payments';
import type { ShopifySettings } from '../src/commerce/shopify/settings';
import { createStripeProvider } from '../src/commerce/stripe';
import type { Database } from '../src/db/pool';
import { DEMO } from '../src/dev/demo-data/seed';
import { startShopifyStandin, type ShopifyStandin } from '../src/dev/shopify-standin';
import { seedDemoShop } from '../src/dev/shopify-standin-demo';
import { startStripeStandin, type StripeStandin } from '../src/dev/stripe-standin';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, scriptedModel, toolUse } from './support/scripted-model';
import { deliver, untilStatus } from './support/scripted-run';
import { openTestDatabase } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// Refunds on orders that live in Shopify, not in casework's demo tables: the shop is the Shopify
// stand-in (a test double of the GraphQL Admin API; Shopify cannot be reached from here) and the
// payments are Shopify's own (refundCreate) or Stripe's (its stand-in), on the real dev server and
// real Postgres with a scripted model (the real model cannot run here). An approved refund makes
// exactly one provider refund on that Shopify order, with the ledger's bounds read from what
// Shopify and the provider report; a second case on the same order cannot reverse the same
// charge again.

const marco = DEMO.customers.marco;
const model = scriptedModel();
let db: Database;
let shopify: ShopifyStandin;
let stripe: StripeStandin;
let settings: ShopifySettings;
let viaShopify: TestWorker;
let viaStripe: TestWorker;
let orderNumber = 880_000 + Math.floor(Math.random() * 10_000);

before(async () => {
  db = await openTestDatabase({ seed: true });
  shopify = await startShopifyStandin();
  stripe = await startStripeStandin();
  settings = {
    storeDomain: shopify.storeDomain,
    accessToken: shopify.accessToken,
    apiVersion: shopify.apiVersion,
    apiBase: shopify.url,
    webhookSecret: shopify.webhookSecret,
    customers: seedDemoShop(shopify),
    orderNamePrefix: '#',
    maxThrottleWaitMs: 3_000,
    timeoutMs: 5_000,
  };
  const demo = demoCommerce(db.app);
  // The shop is Shopify: its orders are read through the Admin API, never from casework's tables.
  const shop = (payments: PaymentProvider): Commerce => ({ ...demo, orders: createShopifyOrderSource(settings), payments });
  const stripeProvider = createStripeProvider({ secretKey: stripe.secretKey, webhookSecret: stripe.webhookSecret, apiBase: stripe.url, timeoutMs: 5_000, maxNetworkRetries: 0 });
  viaShopify = await startTestWorker({ pool: db.app, model, commerce: shop(createShopifyPaymentProvider(settings)) });
  viaStripe = await startTestWorker({ pool: db.app, model, commerce: shop(stripeProvider) });
});
after(async () => {
  await viaShopify?.stop();
  await viaStripe?.stop();
  await shopify?.close();
  await stripe?.close();
  await db?.close();
});

/**
 * A new Shopify order of Marco's captured twice for its total (a retried checkout): two Shopify
 * Payments sales, or, for a shop paid through Stripe, two Stripe charges carrying the order id.
 * The order exists only in Shopify. Returns the order id as the port gives it and the charge ids, oldest first.
 */
function doubleCharged(total: number, payments: 'shopify' | 'stripe'): { orderId: string; charges: string[] } {
  const orderId = String(orderNumber++);
  const placed = Date.now() - 3_600_000;
  const added = shopify.addOrder({
    name: `#${orderId}`,
    customerId: settings.customers.get(marco)!,
    createdAt: new Date(placed).toISOString(),
    currency: 'GBP',
    lines: [{ name: 'Trail running shoes', quantity: 1, unitMinor: total }],
    fulfillments: [{ createdAt: new Date(placed + 60_000).toISOString(), displayStatus: 'DELIVERED', company: 'NorthX', number: `NX${orderId}` }],
    charges:
      payments === 'shopify'
        ? [
            { amountMinor: total, createdAt: new Date(placed).toISOString() },
            { amountMinor: total, createdAt: new Date(placed + 200_000).toISOString() },
          ]
        : [],
  });
  if (payments === 'shopify') return { orderId, charges: shopify.transactions(added.id).map((t) => t.id) };
  const charges = [0, 1].map(
    (i) => stripe.addCharge({ orderId, amount: total, currency: 'gbp', id: `ch_shopify_${orderId}_${i}`, created: Math.floor(placed / 1000) + i * 200 }).id,
  );
  return { orderId, charges };
}

const until = (tw: TestWorker, id: string, what: string, ok: (s: InvestigationStatus) => boolean) => untilStatus(tw, model, id, what, ok);

/** Marco's ticket about the double charge: the model reads the payments, asks for the duplicate back, and waits for the decision. */
async function openCase(tw: TestWorker, orderId: string, total: number) {
  const event = ticket(marco, `I was charged twice for order #${orderId}.`);
  const id = investigationId(event.ticketId);
  const read = toolUse('get_payments', { order_id: orderId });
  const ask = toolUse('request_refund', { order_id: orderId, amount_cents: total, reason: 'Charged twice; refunding the duplicate charge.', kind: 'duplicate_charge' });
  model.script(id, [calls(read), calls(ask), answer('A colleague is reviewing the refund of the duplicate charge.'), answer('Your duplicate charge has been refunded.')]);
  const status = await deliver(tw, model, event, settingsWith());
  assert.equal(status.status, 'awaiting_approval', `the case waits for approval (last reply: ${status.lastReply})`);
  const requests = model.requests(id, 'investigate');
  const payments = JSON.parse(lastToolResults(requests[1]!).find((r) => r.tool_use_id === read.id)!.content);
  const filed = JSON.parse(lastToolResults(requests[2]!).find((r) => r.tool_use_id === ask.id)!.content);
  return { id, payments, filed, requestId: status.pendingApproval!.request_id };
}

/** The provider refunds made on the order's charges, by charge. */
function providerRefunds(payments: 'shopify' | 'stripe', charges: string[]): string[] {
  if (payments === 'stripe')
    return stripe
      .refunds()
      .filter((r) => charges.includes(r.charge))
      .map((r) => r.charge);
  return shopify
    .transactions()
    .filter((t) => t.kind === 'REFUND' && t.status === 'SUCCESS' && charges.includes(t.parentId ?? ''))
    .map((t) => t.parentId!);
}

for (const payments of ['shopify', 'stripe'] as const) {
  describe(`a Shopify order paid through ${payments === 'shopify' ? 'Shopify Payments (refundCreate)' : 'Stripe'}`, () => {
    const worker = () => (payments === 'shopify' ? viaShopify : viaStripe);

    test('approved, the duplicate charge is refunded once at the provider, and a second case on the order cannot refund that charge again', async () => {
      const total = 8_999;
      const { orderId, charges } = doubleCharged(total, payments);
      const { rows: before } = await db.admin.query('SELECT 1 FROM orders WHERE order_id = $1', [orderId]);
      assert.equal(before.length, 0, "the order is not in casework's demo tables");

      const first = await openCase(worker(), orderId, total);
      assert.equal(first.payments.charged_cents, 2 * total, 'the charges the provider reports are what the model reads');
      assert.equal(first.payments.possible_duplicate_charge, true);
      assert.equal(first.filed.charge_id, charges[1], 'the later capture is the duplicate');
      const second = await openCase(worker(), orderId, total);
      assert.deepEqual(second.filed.overlaps, [first.requestId], 'the second request is flagged as asking for the same money');

      await decideRefund(worker().client, first.id, { requestId: first.requestId, decision: 'approved', approver: 'support-lead' });
      const done = await until(worker(), first.id, 'the refund', (s) => s.refunds.length === 1 && s.status === 'waiting_for_customer');
      assert.equal(done.lastReply, 'Your duplicate charge has been refunded.');
      assert.deepEqual(providerRefunds(payments, charges), [charges[1]], 'one provider refund, of the duplicate charge');
      const { rows: payouts } = await db.admin.query(
        'SELECT o.status, o.provider, o.charge_id FROM refund_payouts o JOIN refunds f ON f.refund_id = o.refund_id WHERE f.order_id = $1',
        [orderId],
      );
      assert.deepEqual(payouts, [{ status: 'succeeded', provider: payments, charge_id: charges[1] }], "the trail records the provider's answer");
      const { rows: reported } = await db.admin.query('SELECT shop, currency, total_cents FROM shop_orders WHERE order_id = $1', [orderId]);
      assert.deepEqual(reported, [{ shop: 'shopify', currency: 'GBP', total_cents: total }], 'the ledger reads the order as Shopify reports it');

      await assert.rejects(decideRefund(worker().client, second.id, { requestId: second.requestId, decision: 'approved', approver: 'support-lead' }), (error: Error) => {
        assert.ok(error instanceof DecisionRejectedError, error.message);
        assert.match(error.message, new RegExp(`already refunded for charge ${charges[1]}; this request would refund that charge again`));
        return true;
      });
      assert.deepEqual(providerRefunds(payments, charges), [charges[1]], 'still one provider refund');

      // Past the workflow's own check, the database refuses a second reversal of the charge (the trigger's bound).
      const { rows: ledger } = await db.admin.query('SELECT count(*)::int AS n FROM refunds WHERE order_id = $1 AND charge_id = $2', [orderId, charges[1]]);
      assert.equal(ledger[0].n, 1);
      await assert.rejects(
        db.admin.query(
          `WITH d AS (INSERT INTO refund_decisions (request_id, customer_id, decision, approver, decided_at, approval_id)
                      VALUES ($1, $2, 'approved', 'someone', now(), $3) RETURNING approval_id)
           INSERT INTO refunds (refund_id, customer_id, approval_id, request_id, order_id, amount_cents) SELECT $4, $2, approval_id, $1, $5, $6 FROM d`,
          [second.requestId, marco, `apr_direct_${orderId}`, `rfd_direct_${orderId}`, orderId, total],
        ),
        /already refunded|reversed at most once|would exceed/,
      );
    });
  });
}
