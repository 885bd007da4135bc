import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pool } from 'pg';
import { selectCommerce, selectPayments } from '../src/commerce/select';
import { ConfigError, loadConfig } from '../src/config';
import { exitCodeOf } from '../src/errors';

// Which adapter serves each part of the commerce port is chosen by configuration in one place;
// an unknown name, or a provider chosen without its keys, stops the start naming the variable
// (exit 2, as every settings error). Nothing here connects anywhere: adapters connect on first use.

const pool = {} as Pool;
const config = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/none', ...env });

function refused(env: Record<string, string>, words: RegExp): void {
  assert.throws(
    () => selectCommerce(config(env), pool),
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
    refused({ CASEWORK_SHOP: 'shopfiy' }, /^CASEWORK_SHOP: "shopfiy" is not one of demo$/);
    refused({ CASEWORK_PAYMENTS: 'paypal' }, /^CASEWORK_PAYMENTS: "paypal" is not one of demo, stripe$/);
    refused({ CASEWORK_TRACKING: 'aftership' }, /^CASEWORK_TRACKING: "aftership" is not one of shop$/);
  });
});
