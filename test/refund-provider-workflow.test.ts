import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decideRefund, readStatus } from '../src/client/investigations';
import { demoCommerce } from '../src/commerce/demo';
import type { PaymentProvider } from '../src/commerce/payment-provider';
import { createStripeProvider } from '../src/commerce/stripe';
import type { Database } from '../src/db/pool';
import { DEMO } from '../src/dev/demo-data/seed';
import { startStripeStandin, type StripeStandin } from '../src/dev/stripe-standin';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { startServer, type RunningServer } from '../src/server/start';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, scriptedModel, toolUse } from './support/scripted-model';
import { deliver, untilStatus } from './support/scripted-run';
import { openTestDatabase, unique } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// An approved refund is paid through the payment provider, once, on the real dev server and
// real Postgres with a scripted model (the real model cannot run here) and the Stripe stand-in
// (Stripe's API cannot be reached from here): the provider's answer lost on the way fails the
// activity, Temporal retries it with the same key, and Stripe holds one refund; a refund Stripe
// later reports failed (its signed refund.failed event to casework's webhook) hands the case to
// a person and the customer gets the holding reply, never "your refund is on its way"; and the
// same investigation against the demo shop's provider and against Stripe decides alike.

const marco = DEMO.customers.marco;
const model = scriptedModel();
let db: Database;
let standin: StripeStandin;
let stripe: PaymentProvider;
let viaStripe: TestWorker;
let viaDemo: TestWorker;
let server: RunningServer;
const logLines: { status: number; refused?: string; outcome?: string; path: string }[] = [];

before(async () => {
  db = await openTestDatabase({ seed: true });
  standin = await startStripeStandin();
  // The SDK's own retries off: a lost answer fails the attempt, and the activity's retry resends the key.
  stripe = createStripeProvider({ secretKey: standin.secretKey, webhookSecret: standin.webhookSecret, apiBase: standin.url, timeoutMs: 5_000, maxNetworkRetries: 0 });
  viaStripe = await startTestWorker({ pool: db.app, model, commerce: { ...demoCommerce(db.app), payments: stripe } });
  viaDemo = await startTestWorker({ pool: db.app, model });
  server = await startServer(
    { client: viaStripe.client, pool: db.app, config: { ...viaStripe.config, CASEWORK_HTTP_OPEN: 'true' }, log: (entry) => logLines.push(entry), payments: stripe },
    0,
  );
});
after(async () => {
  await server?.close();
  await viaStripe?.stop();
  await viaDemo?.stop();
  await standin?.close();
  await db?.close();
});

/** A new order of Marco's captured twice for its total: in the shop's payment records (demo) or only at Stripe. */
async function doubleCharged(total: number, where: 'demo' | 'stripe'): Promise<{ orderId: string; charges: string[] }> {
  const orderId = unique('8')
    .replace(/[^0-9A-Za-z]/g, '')
    .slice(0, 30);
  await db.admin.query(
    `INSERT INTO orders (order_id, customer_id, placed_at, status_code, currency, total_cents, items, delivery_address, updated_at)
     VALUES ($1, $2, now(), 'DLVD', 'GBP', $3, '[]', '1 Test Street', now())`,
    [orderId, marco, total],
  );
  const charges: string[] = [];
  for (const i of [0, 1]) {
    const id = `ch_${orderId}_${i}`;
    if (where === 'stripe') standin.addCharge({ orderId, amount: total, currency: 'gbp', id });
    else
      await db.admin.query(
        `INSERT INTO payments (payment_id, customer_id, order_id, kind, amount_cents, currency, processor_code, processor_ref, method_code, raw_response, created_at)
         VALUES ($1, $2, $3, 'charge', $4, 'GBP', 'CPT', $5, 'card_visa', '{}', now() + make_interval(secs => $6))`,
        [`pay_${orderId}_${i}`, marco, orderId, total, id, i * 200],
      );
    charges.push(id);
    // Stripe dates charges by the second: the second capture is later, as in the demo's records.
    if (where === 'stripe' && i === 0) await new Promise((r) => setTimeout(r, 1_100));
  }
  return { orderId, charges };
}

const until = (tw: TestWorker, id: string, what: string, ok: (s: InvestigationStatus) => boolean) => untilStatus(tw, model, id, what, ok);

/** Opens Marco's ticket about the double charge: the model reads the payments, asks for the duplicate back, and waits for the decision. */
async function openCase(tw: TestWorker, orderId: string, total: number) {
  const event = ticket(marco, `I was charged twice for order ${orderId}.`);
  const id = investigationId(event.ticketId);
  const read = toolUse('get_payments', { order_id: orderId });
  const ask = toolUse('request_refund', { order_id: orderId, amount_cents: total, reason: 'Charged twice; refunding the duplicate charge.', kind: 'duplicate_charge' });
  model.script(id, [calls(read), calls(ask), answer('A colleague is reviewing the refund of the duplicate charge.'), answer('Your duplicate charge has been refunded.')]);
  const status = await deliver(tw, model, event, settingsWith());
  assert.equal(status.status, 'awaiting_approval');
  const requests = model.requests(id, 'investigate');
  const payments = JSON.parse(lastToolResults(requests[1]!).find((r) => r.tool_use_id === read.id)!.content);
  const filed = JSON.parse(lastToolResults(requests[2]!).find((r) => r.tool_use_id === ask.id)!.content);
  return { id, payments, filed, requestId: status.pendingApproval!.request_id };
}

const payout = async (orderId: string) =>
  (
    await db.admin.query(
      `SELECT o.status, o.provider_refund_id, o.idempotency_key, o.charge_id, f.approval_id FROM refund_payouts o JOIN refunds f ON f.refund_id = o.refund_id WHERE f.order_id = $1`,
      [orderId],
    )
  ).rows as { status: string; provider_refund_id: string; idempotency_key: string; charge_id: string; approval_id: string }[];

describe('refunds paid through the payment provider', () => {
  test("Stripe's answer lost after it made the refund: the activity is retried with the same key and Stripe holds one refund", async () => {
    const total = 4_599;
    const { orderId, charges } = await doubleCharged(total, 'stripe');
    const opened = await openCase(viaStripe, orderId, total);
    assert.equal(opened.payments.charged_cents, 2 * total, 'the charges Stripe reports are what the model reads');
    assert.equal(opened.payments.possible_duplicate_charge, true);
    assert.equal(opened.filed.charge_id, charges[1], 'the later capture is the duplicate');

    standin.fault({ kind: 'lose_response' });
    await decideRefund(viaStripe.client, opened.id, { requestId: opened.requestId, decision: 'approved', approver: 'support-lead' });
    const done = await until(viaStripe, opened.id, 'the refund', (s) => s.refunds.length === 1 && s.status === 'waiting_for_customer');
    assert.equal(done.lastReply, 'Your duplicate charge has been refunded.');

    const made = standin.refunds().filter((r) => charges.includes(r.charge));
    assert.equal(made.length, 1, 'one refund at Stripe');
    assert.equal(made[0]!.charge, charges[1]);
    const [row] = await payout(orderId);
    assert.equal(row!.status, 'succeeded', "the trail records Stripe's answer");
    assert.equal(row!.provider_refund_id, made[0]!.id);
    const posts = standin.requests().filter((r) => r.method === 'POST' && r.idempotencyKey === row!.idempotency_key);
    assert.ok(posts.length >= 2, `the retried activity sent the approval's key again (${posts.length} posts)`);
    assert.equal(row!.idempotency_key, `casework-${row!.approval_id}`);
  });

  test('a refund Stripe later reports failed reaches a person through its signed webhook; the customer is told nothing untrue', async () => {
    const total = 2_500;
    const { orderId, charges } = await doubleCharged(total, 'stripe');
    const opened = await openCase(viaStripe, orderId, total);
    await decideRefund(viaStripe.client, opened.id, { requestId: opened.requestId, decision: 'approved', approver: 'support-lead' });
    await until(viaStripe, opened.id, 'the refund', (s) => s.refunds.length === 1 && s.status === 'waiting_for_customer');
    const made = standin.refunds().find((r) => r.charge === charges[1])!;

    const url = `${server.url}/webhooks/payments/stripe`;
    const { body, signature } = standin.failRefund(made.id, 'expired_or_canceled_card');
    const unsigned = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    assert.equal(unsigned.status, 400);
    assert.match(((await unsigned.json()) as { error: string }).error, /Stripe-Signature/);
    assert.ok(
      logLines.some((l) => l.path === '/webhooks/payments/stripe' && l.status === 400 && /Stripe-Signature/.test(l.refused ?? '')),
      'the refusal is logged',
    );
    const forged = await fetch(url, { method: 'POST', body: body.replace('expired_or_canceled_card', 'unknown'), headers: { 'stripe-signature': signature } });
    assert.equal(forged.status, 400);

    const delivered = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } });
    assert.equal(delivered.status, 200);
    const handed = await until(viaStripe, opened.id, 'the hand-over', (s) => s.status === 'needs_human');
    assert.equal(handed.lastReply, HOLDING_REPLY, 'the customer gets the holding reply, not a refund promise');
    assert.match(handed.handOff?.reason ?? '', new RegExp(`refund \\S+ of £25\\.00 on order ${orderId} .*failed \\(expired_or_canceled_card\\)`));
    assert.deepEqual(
      handed.failedRefunds?.map((f) => [f.provider_refund_id, f.status]),
      [[made.id, 'failed']],
    );
    assert.equal((await payout(orderId))[0]!.status, 'failed', 'the trail records the failure');
    const counted = await db.admin.query('SELECT count(*)::int AS n FROM ledger_refunds WHERE order_id = $1', [orderId]);
    assert.equal(counted.rows[0].n, 0, 'a failed refund returned nothing and no longer counts in the ledger');

    const again = await fetch(url, { method: 'POST', body, headers: { 'stripe-signature': signature } });
    assert.deepEqual(await again.json(), { received: true, duplicate: true }, 'each event is acted on once');
    const after = await readStatus(viaStripe.client, opened.id);
    assert.equal(after.failedRefunds?.length, 1);
    assert.equal(model.requests(opened.id, 'investigate').length, 4, 'the model is not asked to say anything after the failure');
  });

  test('the same investigation decides alike against the demo provider and against Stripe', async () => {
    const total = 7_250;
    const decide = async (where: 'demo' | 'stripe') => {
      const tw = where === 'demo' ? viaDemo : viaStripe;
      const { orderId, charges } = await doubleCharged(total, where);
      const opened = await openCase(tw, orderId, total);
      await decideRefund(tw.client, opened.id, { requestId: opened.requestId, decision: 'approved', approver: 'support-lead' });
      const done = await until(tw, opened.id, 'the refund', (s) => s.refunds.length === 1 && s.status === 'waiting_for_customer');
      const p = opened.payments;
      return {
        read: {
          charges: p.charges.map((c: { amount_cents: number; status: string }) => [c.amount_cents, c.status]),
          charged: p.charged_cents,
          refunded: p.refunded_cents,
          refundable: p.refundable_cents,
          duplicate: p.possible_duplicate_charge,
          currency: p.currency,
        },
        request: { amount: opened.filed.amount_cents, kind: opened.filed.kind, charge: charges.indexOf(opened.filed.charge_id) },
        refunds: done.refunds.map((r) => [r.amount_cents, r.currency]),
        reply: done.lastReply,
        payout: (await payout(orderId)).map((o) => [o.status, charges.indexOf(o.charge_id)]),
      };
    };
    const demo = await decide('demo');
    const viaStand = await decide('stripe');
    assert.deepEqual(viaStand, demo);
    assert.deepEqual(demo.payout, [['succeeded', 1]]);
  });
});
