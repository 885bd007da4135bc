import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Pool } from 'pg';
import { selectCommerce, selectPayments } from '../src/commerce/select';
import { ConfigError, loadConfig } from '../src/config';
import { exitCodeOf } from '../src/errors';
import { startCommerceStandins, type CommerceStandins } from '../src/dev/commerce-standins';

// Which adapter serves each part of the commerce port is chosen by configuration in one place;
// an unknown name, or a provider chosen without its keys, stops the start naming the variable
// (exit 2, as every settings error). Nothing here connects anywhere: adapters connect on first use.

const pool = {} as Pool;
const config = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/none', ...env });

function refused(env: Record<string, string>, words: RegExp): void {
  assert.throws(
    () => selectCommerce(config(env), pool, env),
    (error: unknown) => error instanceof ConfigError && words.test(error.message) && exitCodeOf(error) === 2,
  );
}

describe('choosing the shop, the payment provider and the tracking', () => {
  test('unset, everything is the demo shop', () => {
    const commerce = selectCommerce(config({}), pool);
    assert.deepEqual(
      [commerce.orders.name, commerce.tickets.name, commerce.policies.name, commerce.tracking.name, commerce.payments.name],
      ['demo', 'demo', 'demo', 'demo', 'demo'],
    );
  });

  test('stripe needs its secret key and its webhook signing secret, each named when missing', () => {
    refused({ CASEWORK_PAYMENTS: 'stripe' }, /^CASEWORK_STRIPE_SECRET_KEY is required when CASEWORK_PAYMENTS is stripe/);
    refused({ CASEWORK_PAYMENTS: 'stripe', CASEWORK_STRIPE_SECRET_KEY: 'rk_test_1' }, /^CASEWORK_STRIPE_WEBHOOK_SECRET is required when CASEWORK_PAYMENTS is stripe/);
    const payments = selectPayments(config({ CASEWORK_PAYMENTS: 'stripe', CASEWORK_STRIPE_SECRET_KEY: 'rk_test_1', CASEWORK_STRIPE_WEBHOOK_SECRET: 'whsec_1' }), pool);
    assert.equal(payments.name, 'stripe');
  });

  test('an unknown adapter is refused with the names that exist', () => {
    refused({ CASEWORK_SHOP: 'shopfiy' }, /^CASEWORK_SHOP: "shopfiy" is not one of demo, shopify$/);
    refused({ CASEWORK_PAYMENTS: 'paypal' }, /^CASEWORK_PAYMENTS: "paypal" is not one of demo, stripe, shopify$/);
    refused({ CASEWORK_TRACKING: 'ups' }, /^CASEWORK_TRACKING: "ups" is not one of shop, aftership$/);
  });

  test('shopify and aftership each name what they lack', () => {
    refused({ CASEWORK_SHOP: 'shopify' }, /^CASEWORK_SHOPIFY_STORE_DOMAIN and CASEWORK_SHOPIFY_ACCESS_TOKEN are required when CASEWORK_SHOP or CASEWORK_PAYMENTS is shopify/);
    refused({ CASEWORK_SHOP: 'shopify', CASEWORK_SHOPIFY_STORE_DOMAIN: 'cartwise.myshopify.com' }, /^CASEWORK_SHOPIFY_ACCESS_TOKEN is required/);
    const shop = { CASEWORK_SHOP: 'shopify', CASEWORK_SHOPIFY_STORE_DOMAIN: 'cartwise.myshopify.com', CASEWORK_SHOPIFY_ACCESS_TOKEN: 'shpat_1' };
    refused(shop, /^CASEWORK_TRACKING: the shopify shop keeps no courier scans; set CASEWORK_TRACKING=aftership$/);
    refused({ ...shop, CASEWORK_TRACKING: 'aftership' }, /^CASEWORK_AFTERSHIP_API_KEY is required when CASEWORK_TRACKING is aftership$/);
  });
});

describe('a shop on Shopify with AfterShip tracking, against their stand-ins', () => {
  let standins: CommerceStandins;
  before(async () => {
    standins = await startCommerceStandins();
  });
  after(() => standins.close());

  test("reads the demo's order, its scans and its charges through the adapters configuration chose", async () => {
    const env = { ...standins.env, CASEWORK_SHOP: 'shopify', CASEWORK_PAYMENTS: 'shopify', CASEWORK_TRACKING: 'aftership' };
    const commerce = selectCommerce(config(env), pool, env);
    assert.deepEqual([commerce.orders.name, commerce.tracking.name, commerce.payments.name], ['shopify', 'aftership', 'shopify']);
    const order = await commerce.orders.order('cust_dana', '5102');
    assert.equal(order?.orderId, '5102');
    assert.equal(await commerce.orders.order('cust_marco', '5102'), undefined, "another customer's order reads as none");
    const scans = await commerce.tracking.events('cust_dana', order, { offset: 0, limit: 5 });
    assert.ok(scans.total > 0 && scans.items[0]?.code === 'DLV', 'the newest scan of the parcel marked delivered is a delivery');
    const payments = await commerce.payments.paymentsOf('cust_dana', '5102');
    assert.ok(payments.charges.length > 0);
  });
});
