import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { IdempotencyMismatchError, ProviderEventError, RefundRefusedError, type PaymentProvider } from '../src/commerce/payment-provider';
import { createStripeProvider } from '../src/commerce/stripe';
import { startStripeStandin, type StripeStandin } from '../src/dev/stripe-standin';

// The Stripe adapter through the official `stripe` package against the Stripe stand-in (a test
// double of Stripe's API, as strict as its documentation): an order's charges found by metadata,
// a refund made exactly once under its idempotency key whatever is lost or retried, Stripe's
// refusals in words a person reads, and refund events verified by their Stripe-Signature.

let standin: StripeStandin;
let stripe: PaymentProvider;
let seq = 0;
const orderId = () => `T${process.pid}${++seq}`;

before(async () => {
  standin = await startStripeStandin();
  stripe = createStripeProvider({ secretKey: standin.secretKey, webhookSecret: standin.webhookSecret, apiBase: standin.url, timeoutMs: 2_000, maxNetworkRetries: 2 });
});
after(async () => {
  await standin?.close();
});

describe('Stripe as the payment provider', () => {
  it("reads an order's charges (Marco's double charge) and the refunds on them, in the order's currency", async () => {
    const order = orderId();
    const first = standin.addCharge({ orderId: order, amount: 10_998, currency: 'gbp' });
    standin.addCharge({ orderId: order, amount: 10_998, currency: 'gbp' });
    standin.addCharge({ orderId: orderId(), amount: 500, currency: 'gbp' });
    await stripe.refund({
      customerId: 'c-test',
      chargeId: first.id,
      amountCents: 10_998,
      reason: 'duplicate',
      idempotencyKey: `cw-${order}-1`,
      metadata: { casework_refund: 'r1' },
    });
    const payments = await stripe.paymentsOf('c-test', order);
    assert.deepEqual(
      payments.charges.map((c) => [c.amountCents, c.currency, c.status]),
      [
        [10_998, 'GBP', 'captured'],
        [10_998, 'GBP', 'captured'],
      ],
    );
    assert.deepEqual(
      payments.refunds.map((r) => [r.chargeId, r.amountCents, r.status, r.metadata.casework_refund]),
      [[first.id, 10_998, 'succeeded', 'r1']],
    );
  });

  it('a response lost after Stripe made the refund is retried with the same key: one refund', async () => {
    const order = orderId();
    const charge = standin.addCharge({ orderId: order, amount: 4_599, currency: 'gbp' });
    standin.fault({ kind: 'lose_response' });
    const refund = await stripe.refund({
      customerId: 'c-test',
      chargeId: charge.id,
      amountCents: 4_599,
      reason: 'requested_by_customer',
      idempotencyKey: `cw-${order}-lost`,
      metadata: {},
    });
    assert.equal(refund.status, 'succeeded');
    assert.equal(standin.refunds().filter((r) => r.charge === charge.id).length, 1);
    const posts = standin.requests().filter((r) => r.method === 'POST' && r.idempotencyKey === `cw-${order}-lost`);
    assert.ok(posts.length >= 2, 'the SDK sent the request again, with the same key');
  });

  it("Stripe's 429 (no Retry-After) is waited out inside the call", async () => {
    const order = orderId();
    const charge = standin.addCharge({ orderId: order, amount: 1_000, currency: 'eur' });
    standin.fault({ kind: 'rate_limit' });
    const refund = await stripe.refund({
      customerId: 'c-test',
      chargeId: charge.id,
      amountCents: 1_000,
      reason: 'requested_by_customer',
      idempotencyKey: `cw-${order}-429`,
      metadata: {},
    });
    assert.equal(refund.currency, 'EUR');
  });

  it('refusals come back in plain words, never retried: already refunded, more than is left, a key reused for another amount', async () => {
    const order = orderId();
    const charge = standin.addCharge({ orderId: order, amount: 2_000, currency: 'gbp' });
    await stripe.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 2_000, reason: 'duplicate', idempotencyKey: `cw-${order}-a`, metadata: {} });
    await assert.rejects(
      stripe.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 500, reason: 'duplicate', idempotencyKey: `cw-${order}-b`, metadata: {} }),
      (e: unknown) => e instanceof RefundRefusedError && e.code === 'charge_already_refunded' && /already refunded in full/.test(e.message),
    );
    const other = standin.addCharge({ orderId: order, amount: 2_000, currency: 'gbp' });
    await assert.rejects(
      stripe.refund({ customerId: 'c-test', chargeId: other.id, amountCents: 2_500, reason: 'duplicate', idempotencyKey: `cw-${order}-c`, metadata: {} }),
      (e: unknown) => e instanceof RefundRefusedError && e.code === 'amount_too_large',
    );
    await assert.rejects(
      stripe.refund({ customerId: 'c-test', chargeId: other.id, amountCents: 700, reason: 'duplicate', idempotencyKey: `cw-${order}-a`, metadata: {} }),
      (e: unknown) => e instanceof IdempotencyMismatchError,
    );
  });

  it('a refund failing later reaches casework as a verified refund.failed event; a forged one is refused', () => {
    const charge = standin.addCharge({ orderId: orderId(), amount: 3_000, currency: 'gbp' });
    return stripe
      .refund({
        customerId: 'c-test',
        chargeId: charge.id,
        amountCents: 3_000,
        reason: 'requested_by_customer',
        idempotencyKey: `cw-fail-${charge.id}`,
        metadata: { casework_refund: 'r9' },
      })
      .then((refund) => {
        const { body, signature } = standin.failRefund(refund.id);
        const event = stripe.readEvent(Buffer.from(body), signature);
        assert.deepEqual([event?.type, event?.refund.status, event?.refund.metadata.casework_refund], ['refund.failed', 'failed', 'r9']);
        assert.throws(() => stripe.readEvent(Buffer.from(body.replace('r9', 'r8')), signature), ProviderEventError);
        assert.throws(
          () => stripe.readEvent(Buffer.from(body), standin.sign(body, Math.floor(Date.now() / 1000) - 3_600)),
          ProviderEventError,
          'an hour-old signature is a replay',
        );
      });
  });

  it('whatever is lost or rate limited on the way, one approval is one refund (random fault sequences)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('lose_response' as const, 'rate_limit' as const, 'server_error' as const), { maxLength: 2 }),
        fc.integer({ min: 1, max: 3 }),
        async (faults, retries) => {
          const order = orderId();
          const charge = standin.addCharge({ orderId: order, amount: 1_200, currency: 'gbp' });
          for (const kind of faults) standin.fault({ kind });
          // The activity may be retried (a killed worker, a timeout): each attempt sends the approval's key.
          for (let attempt = 0; attempt < retries; attempt++) {
            await stripe
              .refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 1_200, reason: 'duplicate', idempotencyKey: `cw-${order}-approval`, metadata: {} })
              .catch(() => undefined);
          }
          await stripe.refund({ customerId: 'c-test', chargeId: charge.id, amountCents: 1_200, reason: 'duplicate', idempotencyKey: `cw-${order}-approval`, metadata: {} });
          assert.equal(standin.refunds().filter((r) => r.charge === charge.id).length, 1);
        },
      ),
      { numRuns: 25 },
    );
  });
});
