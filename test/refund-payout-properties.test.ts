import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createToolActivities } from '../src/activities/tools';
import { demoCommerce } from '../src/commerce/demo';
import type { PaymentProvider } from '../src/commerce/payment-provider';
import type { Commerce } from '../src/commerce/shop';
import { createStripeProvider } from '../src/commerce/stripe';
import type { Database } from '../src/db/pool';
import { DEMO } from '../src/dev/demo-data/seed';
import { startStripeStandin, type StripeStandin } from '../src/dev/stripe-standin';
import type { ToolOutcome } from '../src/schemas/tool-call';
import { openTestDatabase, unique } from './support/db';

// Money moves through the payment provider exactly once, whatever fails where. Random histories
// of approvals paid through issue_refund (the activity, retried as Temporal retries it) with a
// fault at a random point of each attempt: the worker dying before it asks the provider, the
// provider's answer lost on the way (the Stripe stand-in's lose_response, the SDK's own retries
// off so the attempt fails), a 500, a 429, or the worker dying after the provider answered and
// before the answer was recorded. Afterwards the provider holds exactly one refund per approval
// that was paid, each under its approval's key, casework's trail records each once with the
// provider's answer, and the order's refunds never exceed what the provider says was captured.
// Against the Stripe stand-in (charges only the provider knows) and against the demo provider.

const marco = DEMO.customers.marco;
let db: Database;
let standin: StripeStandin;

before(async () => {
  db = await openTestDatabase({ seed: true });
  standin = await startStripeStandin();
});
after(async () => {
  await standin?.close();
  await db?.close();
});

type Fault = 'none' | 'crash_before' | 'crash_after' | 'lose_response' | 'server_error' | 'rate_limit';

/** The provider as a worker sees it, with a fault queued per attempt: a crash before or after the call, or one the stand-in makes. */
function faulty(inner: PaymentProvider, faults: Fault[], standinFaults: boolean): PaymentProvider {
  return {
    ...inner,
    name: inner.name,
    paymentsOf: (c, o) => inner.paymentsOf(c, o),
    readEvent: (b, s) => inner.readEvent(b, s),
    async refund(order) {
      const fault = faults.shift() ?? 'none';
      if (fault === 'crash_before') throw new Error('worker died before asking the provider');
      if (standinFaults && (fault === 'lose_response' || fault === 'server_error' || fault === 'rate_limit')) standin.fault({ kind: fault });
      const answer = await inner.refund(order);
      if (fault === 'crash_after') throw new Error('worker died after the provider answered');
      return answer;
    },
  };
}

async function newOrder(total: number): Promise<string> {
  const orderId = unique('P')
    .replace(/[^0-9A-Za-z]/g, '')
    .slice(0, 30);
  await db.admin.query(
    `INSERT INTO orders (order_id, customer_id, placed_at, status_code, currency, total_cents, items, delivery_address, updated_at)
     VALUES ($1, $2, now(), 'DLVD', 'GBP', $3, '[]', '1 Test Street', now())`,
    [orderId, marco, total],
  );
  return orderId;
}

async function demoCharge(orderId: string, amount: number, i: number): Promise<void> {
  await db.admin.query(
    `INSERT INTO payments (payment_id, customer_id, order_id, kind, amount_cents, currency, processor_code, processor_ref, method_code, raw_response, created_at)
     VALUES ($1, $2, $3, 'charge', $4, 'GBP', 'CPT', $5, 'card_visa', '{}', now() + make_interval(secs => $6))`,
    [`pay_${orderId}_${i}`, marco, orderId, amount, `ch_${orderId}_${i}`, i],
  );
}

const faultArb = fc.constantFrom<Fault>('none', 'crash_before', 'crash_after', 'lose_response', 'server_error', 'rate_limit');
const approvalArb = fc.record({
  kind: fc.constantFrom('duplicate_charge' as const, 'goodwill' as const, 'partial' as const),
  share: fc.integer({ min: 1, max: 100 }),
  faults: fc.array(faultArb, { maxLength: 4 }),
});

for (const provider of ['stripe', 'demo'] as const) {
  describe(`refunds through the ${provider} provider`, () => {
    test('provider refunds equal the approvals paid, whatever fails at whichever point of each attempt', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(approvalArb, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1_000, max: 20_000 }), async (asks, total) => {
          const orderId = await newOrder(total);
          const chargeIds: string[] = [];
          // A double charge: the total taken twice.
          for (const i of [0, 1]) {
            if (provider === 'stripe') chargeIds.push(standin.addCharge({ orderId, amount: total, currency: 'gbp', id: `ch_${orderId}_${i}` }).id);
            else {
              await demoCharge(orderId, total, i);
              chargeIds.push(`ch_${orderId}_${i}`);
            }
          }
          const faults: Fault[] = [];
          const base = demoCommerce(db.app);
          const inner =
            provider === 'stripe'
              ? createStripeProvider({ secretKey: standin.secretKey, webhookSecret: standin.webhookSecret, apiBase: standin.url, timeoutMs: 2_000, maxNetworkRetries: 0 })
              : base.payments;
          const commerce: Commerce = { ...base, payments: faulty(inner, faults, provider === 'stripe') };
          const tools = createToolActivities({ pool: db.app, commerce });
          const workflowId = unique('wf-prop');
          const context = (toolUseId: string) => ({ customerId: marco, ticketId: workflowId, workflowId, toolUseId });

          let paid = 0;
          for (const [n, ask] of asks.entries()) {
            const amount = Math.max(1, Math.floor((total * ask.share) / 100));
            const filed = await tools.request_refund({
              name: 'request_refund',
              input: { order_id: orderId, amount_cents: amount, reason: 'Charged twice.', kind: ask.kind },
              context: context(`toolu_${n}`),
            });
            if (filed.is_error) continue; // more than can be requested now: nothing to approve
            const requestId = (filed.result as { request_id: string }).request_id;
            await tools.recordRefundDecision({ customerId: marco, requestId, decision: 'approved', approver: 'lead', decidedAt: new Date().toISOString() });
            faults.push(...ask.faults);
            // The activity, retried as Temporal retries it, until it answers.
            let outcome: ToolOutcome | undefined;
            for (let attempt = 0; attempt < 12 && !outcome; attempt++) {
              outcome = await tools.issue_refund({ name: 'issue_refund', input: { request_id: requestId }, context: context(`approval-${requestId}`) }).catch(() => undefined);
            }
            assert.ok(outcome, 'the activity answered within its retries');
            if (!outcome.is_error) paid++;
          }
          faults.length = 0;

          const provided =
            provider === 'stripe'
              ? standin.refunds().filter((r) => chargeIds.includes(r.charge))
              : (await db.admin.query('SELECT refund_id, idempotency_key, amount_cents FROM demo_provider_refunds WHERE order_id = $1', [orderId])).rows;
          assert.equal(provided.length, paid, 'one provider refund per approval paid');
          const trail = (
            await db.admin.query(
              `SELECT f.refund_id, f.approval_id, f.amount_cents, o.status, o.idempotency_key, o.provider_refund_id
                 FROM refunds f LEFT JOIN refund_payouts o ON o.refund_id = f.refund_id WHERE f.order_id = $1`,
              [orderId],
            )
          ).rows as { approval_id: string; status: string; idempotency_key: string; provider_refund_id: string; amount_cents: number }[];
          const succeeded = trail.filter((t) => t.status === 'succeeded');
          assert.equal(succeeded.length, paid, 'the trail records each paid refund once, with the answer');
          for (const t of succeeded) {
            assert.equal(t.idempotency_key, `casework-${t.approval_id}`, 'the key is derived from the approval');
            assert.ok(
              provided.some((p: { id?: string; refund_id?: string }) => (p.id ?? p.refund_id) === t.provider_refund_id),
              'the provider refund recorded is one the provider holds',
            );
          }
          const refunded = succeeded.reduce((n, t) => n + t.amount_cents, 0);
          assert.ok(refunded <= 2 * total, 'never more than the provider captured');
        }),
        { numRuns: 12 },
      );
    });
  });
}
