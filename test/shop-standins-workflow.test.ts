import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decideRefund, readStatus } from '../src/client/investigations';
import { selectCommerce } from '../src/commerce/select';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { startCommerceStandins, type CommerceStandins } from '../src/dev/commerce-standins';
import { mirrorDemoPayments, startStandinPayments } from '../src/dev/demo/stand-in-payments';
import type { StripeStandin } from '../src/dev/stripe-standin';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import type { ModelRequest } from '../src/schemas/model';
import { example, send, settingsWith } from './support/investigate';
import { openTestDatabase } from './support/db';
import { recordingModel, startTestWorker, type TestWorker } from './support/temporal';

// The same investigations, once against the demo shop (casework's own tables) and once against
// a shop whose orders are on Shopify, its scans at AfterShip and its charges at Stripe — their
// stand-ins, seeded with data equivalent to the demo shop's and chosen by configuration
// (CASEWORK_SHOP=shopify, CASEWORK_TRACKING=aftership, CASEWORK_PAYMENTS=stripe). The model is
// the offline investigator (the real model cannot run here), which decides from what the tools
// answer: so the same tool results, word for word, must lead to the same refund requested,
// approved and paid, and the same replies. Each shop has a database of its own, so one shop's
// refunds never meet the other's ledger.

const demoModel = recordingModel();
const standinModel = recordingModel();
let demoDb: Database;
let standinDb: Database;
let viaDemo: TestWorker;
let viaStandins: TestWorker;
let standins: CommerceStandins;
let stripe: StripeStandin;

before(async () => {
  [demoDb, standinDb] = await Promise.all([openTestDatabase({ seed: true }), openTestDatabase({ seed: true })]);
  standins = await startCommerceStandins();
  const payments = await startStandinPayments();
  stripe = payments.standin;
  await mirrorDemoPayments(standinDb.admin, stripe);
  const env: Record<string, string> = {
    ...standins.env,
    CASEWORK_SHOP: 'shopify',
    CASEWORK_TRACKING: 'aftership',
    CASEWORK_PAYMENTS: 'stripe',
    CASEWORK_STRIPE_SECRET_KEY: stripe.secretKey,
    CASEWORK_STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    CASEWORK_STRIPE_API_BASE: stripe.url,
  };
  const commerce = selectCommerce(loadConfig({ ...process.env, ...env }), standinDb.app, env);
  assert.deepEqual([commerce.orders.name, commerce.tracking.name, commerce.payments.name], ['shopify', 'aftership', 'stripe']);
  viaDemo = await startTestWorker({ pool: demoDb.app, model: demoModel });
  viaStandins = await startTestWorker({ pool: standinDb.app, model: standinModel, commerce });
});
after(async () => {
  await viaDemo?.stop();
  await viaStandins?.stop();
  await standins?.close();
  await stripe?.close();
  await Promise.all([demoDb?.close(), standinDb?.close()]);
});

/** Every tool the model called in the run, with its input and the result it read, in order. */
function toolsSeen(requests: ModelRequest[]) {
  const seen = new Map<string, { name: string; input: unknown; result: string }>();
  const names = new Map<string, { name: string; input: unknown }>();
  for (const request of requests) {
    for (const message of request.messages) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content) {
        if (block.type === 'tool_use') names.set(block.id, { name: block.name, input: block.input });
        if (block.type === 'tool_result' && !seen.has(block.tool_use_id)) {
          const content = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
          seen.set(block.tool_use_id, { ...names.get(block.tool_use_id)!, result: content });
        }
      }
    }
  }
  return [...seen.values()];
}

/**
 * A tool result as the stand-in shop can carry it: AfterShip has no courier's own note on a
 * scan (docs/commerce-adapters.md), so the demo's notes are left out of its scans before comparing.
 */
function withoutCourierNotes(name: string, result: string): string {
  if (name !== 'get_tracking_events') return result;
  const read = JSON.parse(result) as { events?: Record<string, unknown>[] };
  for (const event of read.events ?? []) delete event.courier_note;
  return JSON.stringify(read);
}

/** Ids each run makes its own (requests, approvals, refunds), as placeholders. */
const anonymous = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/\breq_[0-9a-f]{16}\b/g, '<request>');

async function until(tw: TestWorker, id: string, ok: (s: InvestigationStatus) => boolean): Promise<InvestigationStatus> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = await readStatus(tw.client, id).catch(() => undefined);
    if (status && ok(status)) return status;
    if (Date.now() > deadline) throw new Error(`${id}: last status ${status?.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Runs the example ticket through approval and payment; answers what was decided and what the model read. */
async function investigate(name: string, tw: TestWorker, model: ReturnType<typeof recordingModel>, db: Database) {
  const event = example(name);
  // Tests run one at a time, and each shop's model serves its one worker: this run's requests are the ones from here on.
  const from = model.requests.length;
  const id = investigationId(event.ticketId);
  const asked = await send(tw, event, settingsWith());
  assert.equal(asked.status, 'awaiting_approval', `${name}: the investigation asks for a refund`);
  const pending = asked.pendingApproval!;
  await decideRefund(tw.client, id, { requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
  const done = await until(tw, id, (s) => s.refunds.length === 1 && s.status !== 'awaiting_approval' && s.lastReply !== asked.lastReply);
  const payouts = await db.admin.query(
    `SELECT o.status, o.charge_id, f.amount_cents FROM refund_payouts o JOIN refunds f ON f.refund_id = o.refund_id WHERE f.order_id = $1 ORDER BY f.refund_id`,
    [pending.order_id],
  );
  return {
    tools: toolsSeen(model.requests.slice(from)).map((t) => ({ ...t, result: anonymous(withoutCourierNotes(t.name, t.result)) })),
    requested: { order: pending.order_id, amount: pending.amount_cents, kind: pending.kind },
    paid: done.refunds.map((r) => [r.order_id, r.amount_cents, r.currency]),
    payouts: payouts.rows as { status: string; charge_id: string; amount_cents: number }[],
    status: done.status,
    replies: [asked.lastReply, done.lastReply],
  };
}

describe('the same investigations against the demo shop and against Shopify, AfterShip and Stripe stand-ins', () => {
  for (const name of ['dana-5102', 'double-charge']) {
    test(`${name}: the same tool results, the same refund requested, approved and paid, the same replies`, async () => {
      const demo = await investigate(name, viaDemo, demoModel, demoDb);
      const shop = await investigate(name, viaStandins, standinModel, standinDb);
      assert.ok(demo.tools.length >= 5, `the investigation read the shop (${demo.tools.map((t) => t.name).join(', ')})`);
      for (const [i, call] of demo.tools.entries()) assert.deepEqual(shop.tools[i], call, `tool call ${i + 1} (${call.name}) reads the same`);
      assert.deepEqual(shop, demo);
      assert.deepEqual(
        demo.payouts.map((p) => p.status),
        ['succeeded'],
        'one refund paid, and the provider said it succeeded',
      );
      const atStripe = stripe.refunds().filter((r) => r.charge === shop.payouts[0]!.charge_id);
      assert.deepEqual(
        atStripe.map((r) => [r.amount, r.status]),
        [[shop.payouts[0]!.amount_cents, 'succeeded']],
        'Stripe holds that one refund',
      );
    });
  }
});
