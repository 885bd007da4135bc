import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decideRefund, deliverEvent, readStatus } from '../src/client/investigations';
import { demoCommerce } from '../src/commerce/demo';
import { createStripeProvider } from '../src/commerce/stripe';
import type { PaymentProvider } from '../src/commerce/payment-provider';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import type { Database } from '../src/db/pool';
import { startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import { startStripeStandin, type StripeStandin } from '../src/dev/stripe-standin';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import type { RequestLog } from '../src/server/app';
import { startServer, type RunningServer } from '../src/server/start';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { consoleAgent, visibleText } from './support/console-agent';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, json, scriptedModel, toolUse } from './support/scripted-model';
import { settle, untilStatus } from './support/scripted-run';
import { openTestDatabase, unique } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';
import { firstTicketIdOfFile, zendeskEnv } from './support/desk-stack';

// A refund Stripe accepted can fail days later, after casework has answered and the case has
// closed. Its signed refund.failed event still reaches a person: the closed case is reopened by a
// run of its own, the Zendesk ticket gets casework's internal note and moves to the state a
// person's case takes (On-hold), the case reads needs_human where people look, and the customer
// is told only that a colleague will pick it up. Real dev server, real Postgres, the real HTTP
// server; Zendesk's and Stripe's stand-ins (neither can be reached from here) and a scripted
// model (the real one cannot run here).

const CUSTOMER = 'cust_dana';
const REQUESTER = 8447388090494;
const model = scriptedModel();
let db: Database;
let zendesk: DeskStandin;
let stripe: StripeStandin;
let payments: PaymentProvider;
let tw: TestWorker;
let server: RunningServer;
const logs: RequestLog[] = [];
// A short follow-up window: the answered case closes by itself soon after the refund.
const settings = settingsWith({ CASEWORK_FOLLOW_UP_WINDOW_SECONDS: '2' });

before(async () => {
  zendesk = await startDeskStandin({ firstTicketId: firstTicketIdOfFile() });
  stripe = await startStripeStandin();
  db = await openTestDatabase({ seed: true });
  payments = createStripeProvider({ secretKey: stripe.secretKey, webhookSecret: stripe.webhookSecret, apiBase: stripe.url, timeoutMs: 5_000, maxNetworkRetries: 0 });
  tw = await startTestWorker({
    pool: db.app,
    model,
    commerce: { ...demoCommerce(db.app), payments },
    env: {
      CASEWORK_DESKS: 'zendesk',
      CASEWORK_DESK_TIMEOUT_MS: '2000',
      ...zendeskEnv(zendesk),
    },
  });
  server = await startServer({ client: tw.client, pool: db.app, config: { ...tw.config, CASEWORK_HTTP_OPEN: 'true' }, log: (entry) => logs.push(entry), payments }, 0);
});
after(async () => {
  await server?.close(0);
  await tw?.stop();
  await db?.close();
  await stripe?.close();
  await zendesk?.close();
});

/** A new order of Dana's captured twice at Stripe for its total. */
async function doubleCharged(total: number): Promise<{ orderId: string; charges: string[] }> {
  const orderId = unique('7')
    .replace(/[^0-9A-Za-z]/g, '')
    .slice(0, 30);
  await db.admin.query(
    `INSERT INTO orders (order_id, customer_id, placed_at, status_code, currency, total_cents, items, delivery_address, updated_at)
     VALUES ($1, $2, now(), 'DLVD', 'GBP', $3, '[]', '1 Test Street', now())`,
    [orderId, CUSTOMER, total],
  );
  const created = Math.floor(Date.now() / 1000) - 3_600;
  const charges = [0, 1].map((i) => stripe.addCharge({ orderId, amount: total, currency: 'gbp', id: `ch_${orderId}_${i}`, created: created + i * 200 }).id);
  return { orderId, charges };
}

const until = (id: string, what: string, ok: (s: InvestigationStatus) => boolean) => untilStatus(tw, model, id, what, ok);

const publicPosts = (ticketId: number) =>
  zendesk
    .ticket(ticketId)!
    .comments.filter((c) => c.public && c.author_id === zendesk.agent.id)
    .map((c) => c.body);
const internalNotes = (ticketId: number) =>
  zendesk
    .ticket(ticketId)!
    .comments.filter((c) => !c.public)
    .map((c) => c.body);

describe('a refund that fails after its case has closed', () => {
  test('reaches a person: the case is reopened for them, the desk gets the note and the ticket goes On-hold, the customer hears only that a colleague will reply', async () => {
    const total = 3_150;
    const { orderId, charges } = await doubleCharged(total);
    const text = `I was charged twice for order ${orderId}.`;
    const { ticketId } = zendesk.createTicket({ requesterId: REQUESTER, subject: 'Charged twice', body: text });
    const event = ticket(CUSTOMER, text, { ticketId: `zendesk-${ticketId}` });
    const id = investigationId(event.ticketId);
    model.script(id, {
      replies: [
        calls(toolUse('request_refund', { order_id: orderId, amount_cents: total, reason: 'Charged twice; refunding the duplicate charge.', kind: 'duplicate_charge' })),
        answer('A colleague is reviewing the refund of the duplicate charge.'),
        answer('Your duplicate charge has been refunded.'),
      ],
      purposes: { compact: () => json({ ...emptyCaseNotes(), order_ids: [orderId], customer_problem: text }) },
    });
    await deliverEvent(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings });
    const waiting = await settle(tw, model, id);
    assert.equal(waiting.status, 'awaiting_approval');
    await decideRefund(tw.client, id, { requestId: waiting.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });

    // Answered, then closed by itself once the follow-up window passed: the run has completed.
    const closed = await tw.client.workflow.getHandle(id).result();
    assert.equal(closed.status, 'closed');
    assert.equal(closed.refunds.length, 1);
    assert.equal(zendesk.statusHistory(ticketId).at(-1), 'solved');
    const made = stripe.refunds().find((r) => r.charge === charges[1])!;
    assert.ok(made, 'Stripe made the refund');
    const postsBefore = publicPosts(ticketId).length;
    const notesBefore = internalNotes(ticketId).length;

    const { body, signature } = stripe.failRefund(made.id, 'expired_or_canceled_card');
    const delivered = await fetch(`${server.url}/webhooks/payments/stripe`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    });
    assert.equal(delivered.status, 200, await delivered.clone().text());
    assert.deepEqual(await delivered.json(), { received: true, acted: true });
    assert.ok(
      logs.some((l) => l.path === '/webhooks/payments/stripe' && l.outcome === 'reopened_for_person'),
      'the request log says the closed case was reopened for a person',
    );

    // Where people look: the case reads needs_human (the CaseworkStatus the console and metrics count), with why.
    const handed = await until(id, 'the hand-over', (s) => s.status === 'needs_human' && (s.desk?.pending.length ?? 1) === 0);
    assert.match(handed.handOff?.reason ?? '', new RegExp(`refund \\S+ on order ${orderId} .*failed \\(expired_or_canceled_card\\)`));
    assert.deepEqual(
      handed.failedRefunds?.map((f) => [f.provider_refund_id, f.status]),
      [[made.id, 'failed']],
    );
    const listed: string[] = [];
    for await (const run of tw.client.workflow.list({ query: `WorkflowId = "${id}" AND ExecutionStatus = "Running" AND CaseworkStatus = "needs_human"` }))
      listed.push(run.workflowId);
    assert.deepEqual(listed, [id], 'visibility lists the case among those needing a person');
    const agent = consoleAgent(server.url);
    assert.equal((await agent.signIn('open-mode-key', 'Sam')).status, 303);
    const inbox = await agent.get('/console/inbox');
    assert.equal(inbox.status, 200);
    const shown = visibleText(inbox.text);
    assert.match(shown, /Handed to a person \(1\)/, 'the console inbox lists the case under the approvals');
    assert.match(shown, new RegExp(`Ticket zendesk-${ticketId} · ${CUSTOMER} · since .*refund \\S+ on order ${orderId} .*failed \\(expired_or_canceled_card\\)`));
    assert.match(inbox.text, new RegExp(`href="/console/cases/${id}"`));

    // The desk: an internal note naming the failed refund, and the ticket moved to a person's state.
    const notes = internalNotes(ticketId).slice(notesBefore);
    assert.equal(notes.length, 1, notes.join('\n---\n'));
    assert.match(notes[0]!, /this case needs a person/);
    assert.match(notes[0]!, new RegExp(`order ${orderId} .*failed \\(expired_or_canceled_card\\): nothing reached the customer`));
    assert.equal(zendesk.statusHistory(ticketId).at(-1), 'hold');
    // The customer: only that a colleague picks it up; never that the money is on its way.
    assert.deepEqual(publicPosts(ticketId).slice(postsBefore), [HOLDING_REPLY]);
    assert.equal(model.requests(id, 'investigate').length, 3, 'the model is not asked to say anything after the failure');

    // The same event again is acted on once.
    const again = await fetch(`${server.url}/webhooks/payments/stripe`, { method: 'POST', body, headers: { 'stripe-signature': signature } });
    assert.deepEqual(await again.json(), { received: true, duplicate: true });
    assert.equal((await readStatus(tw.client, id)).failedRefunds?.length, 1);
  });
});
