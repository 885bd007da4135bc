import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decideRefund, deliverEvent, readStatus } from '../src/client/investigations';
import { publicReplyLeaks } from '../src/context/public-reply';
import type { Database } from '../src/db/pool';
import { textOf } from '../src/desk/read-back';
import { startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import { startFreshdeskStandin, type FreshdeskStandin } from '../src/dev/freshdesk-standin';
import { startIntercomStandin, type IntercomStandin } from '../src/dev/intercom-standin';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { openTestDatabase } from './support/db';
import { settingsWith, ticket } from './support/investigate';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { answer, calls, json, scriptedModel, toolUse, type ScriptedModel, type ScriptStep } from './support/scripted-model';
import { settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';
import { firstTicketIdOfFile, zendeskEnv } from './support/desk-stack';

// The ticket lifecycle each desk documents, read back from the desks' stand-ins (test doubles of
// Zendesk's, Intercom's and Freshdesk's APIs, as strict as their documentation): a real worker on
// the suite's Temporal dev server posts to all three with the scripted fake model.

const CUSTOMER = 'cust_dana';
const ZENDESK_GROUP = '360001';
let zendesk: DeskStandin;
let intercom: IntercomStandin;
let freshdesk: FreshdeskStandin;
let db: Database;
let model: ScriptedModel;
let tw: TestWorker;
// A short follow-up window: an answered case that hears nothing more closes, and casework closes the desk ticket.
const settings = settingsWith({ CASEWORK_FOLLOW_UP_WINDOW_SECONDS: '2' });

before(async () => {
  zendesk = await startDeskStandin({ firstTicketId: firstTicketIdOfFile() });
  intercom = await startIntercomStandin({ firstId: 100_000_000 + Math.floor(Math.random() * 800_000) * 100 });
  freshdesk = await startFreshdeskStandin({ firstTicketId: firstTicketIdOfFile() });
  db = await openTestDatabase({ seed: true });
  model = scriptedModel();
  tw = await startTestWorker({
    pool: db.app,
    model,
    env: {
      CASEWORK_DESKS: 'zendesk,intercom,freshdesk',
      CASEWORK_DESK_TIMEOUT_MS: '2000',
      ...zendeskEnv(zendesk),
      CASEWORK_ZENDESK_HANDOFF_GROUP_ID: ZENDESK_GROUP,
      CASEWORK_INTERCOM_BASE_URL: intercom.url,
      CASEWORK_INTERCOM_ACCESS_TOKEN: intercom.accessToken,
      CASEWORK_INTERCOM_CLIENT_SECRET: 'intercom-client-secret-for-tests',
      CASEWORK_INTERCOM_ADMIN_ID: intercom.adminId,
      CASEWORK_INTERCOM_HANDOFF_ADMIN_ID: intercom.teammateId,
      CASEWORK_FRESHDESK_BASE_URL: freshdesk.url,
      CASEWORK_FRESHDESK_API_KEY: freshdesk.apiKey,
      CASEWORK_FRESHDESK_WEBHOOK_TOKEN: 'freshdesk-token-for-tests-0123456789',
      CASEWORK_FRESHDESK_HANDOFF_GROUP_ID: String(freshdesk.groupId),
    },
  });
});
after(async () => {
  await tw?.stop();
  await db?.close();
  await Promise.all([zendesk?.close(), intercom?.close(), freshdesk?.close()]);
});

type Desk = 'zendesk' | 'intercom' | 'freshdesk';

/** Opens a ticket on the desk's stand-in and starts its investigation, as the desk's webhook would. */
async function openCase(desk: Desk, text: string, script: ScriptStep[]): Promise<{ id: string; workflowId: string; status: InvestigationStatus }> {
  const id =
    desk === 'zendesk'
      ? String(zendesk.createTicket({ requesterId: 8447388090494, subject: 'Order', body: text }).ticketId)
      : desk === 'intercom'
        ? intercom.createConversation('5d6a4c8e0e8a2b1c3d4e5f60', text)
        : String(freshdesk.createTicket(7001, text));
  const event = ticket(CUSTOMER, text, { ticketId: `${desk}-${id}` });
  const workflowId = investigationId(event.ticketId);
  // Closing summarises the case into notes: the fake answers that with fixed notes.
  model.script(workflowId, { replies: script, purposes: { compact: () => json({ ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: text }) } });
  await deliverEvent(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings });
  return { id, workflowId, status: await settle(tw, model, workflowId) };
}

/** Waits until the run's outbox has nothing pending and at least `done` posts made. */
async function postsSettled(workflowId: string, done: number): Promise<InvestigationStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await readStatus(tw.client, workflowId);
    if (status.desk && status.desk.pending.length === 0 && status.desk.posted + status.desk.failed.length >= done) return status;
    if (Date.now() > deadline) throw new Error(`${workflowId}: desk posts did not settle: ${JSON.stringify(status.desk)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The desk's statuses for the ticket, in order, as its stand-in recorded them. */
function statuses(desk: Desk, id: string): (string | number)[] {
  if (desk === 'zendesk') return zendesk.statusHistory(Number(id));
  if (desk === 'intercom') return intercom.stateHistory(id);
  return freshdesk.statusHistory(Number(id));
}

/** What the customer sees on the ticket: casework's public posts, as plain text. */
function publicPosts(desk: Desk, id: string): string[] {
  if (desk === 'zendesk')
    return zendesk
      .ticket(Number(id))!
      .comments.filter((c) => c.public && c.author_id === zendesk.agent.id)
      .map((c) => c.body);
  if (desk === 'intercom')
    return intercom
      .conversation(id)!
      .parts.filter((p) => p.part_type === 'comment' && p.author.type === 'admin')
      .map((p) => textOf(p.body ?? ''));
  return freshdesk
    .ticket(Number(id))!
    .conversations.filter((c) => !c.private)
    .map((c) => c.body_text);
}

/** What the team sees: casework's internal notes, as text. */
function internalNotes(desk: Desk, id: string): string[] {
  if (desk === 'zendesk')
    return zendesk
      .ticket(Number(id))!
      .comments.filter((c) => !c.public)
      .map((c) => c.body);
  if (desk === 'intercom')
    return intercom
      .conversation(id)!
      .parts.filter((p) => p.part_type === 'note')
      .map((p) => textOf(p.body ?? ''));
  return freshdesk
    .ticket(Number(id))!
    .conversations.filter((c) => c.private)
    .map((c) => c.body_text);
}

function assertNothingInternalInPublic(desk: Desk, id: string): void {
  for (const body of publicPosts(desk, id)) {
    assert.doesNotMatch(body, /cw[0-9a-f]{24}|ref:/, `${desk} public reply carries a marker: ${body}`);
    assert.deepEqual(publicReplyLeaks(body), [], `${desk} public reply shows internals: ${body}`);
  }
}

const REFUND_FLOW: Record<Desk, (string | number)[]> = {
  // On-hold while the approval waits, open once it is paid, pending on the customer after the reply, solved when casework closes.
  zendesk: ['new', 'hold', 'open', 'pending', 'solved'],
  // Waiting on Third Party (7), Open (2), Pending (3), Resolved (4).
  freshdesk: [2, 7, 2, 3, 4],
  // Open until casework closes it.
  intercom: ['open', 'closed'],
};

const CLOSE_FLOW: Record<Desk, (string | number)[]> = {
  zendesk: ['new', 'pending', 'solved'],
  freshdesk: [2, 3, 4],
  intercom: ['open', 'closed'],
};

describe('the ticket lifecycle each desk documents', () => {
  for (const desk of ['zendesk', 'freshdesk', 'intercom'] as const) {
    it(`${desk}: a refund awaiting approval, then paid, then closed, moves the ticket through ${REFUND_FLOW[desk].join(' → ')}`, async () => {
      const { id, workflowId, status } = await openCase(desk, 'Order 5102 never arrived, I want my money back.', [
        calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Marked delivered but never received.' })),
        answer('I have asked a colleague to approve a refund of £10.00 for order 5102.'),
        answer('Your refund of £10.00 has been issued.'),
      ]);
      assert.equal(status.status, 'awaiting_approval');
      await postsSettled(workflowId, 2);
      await decideRefund(tw.client, workflowId, { requestId: status.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
      const closed = await settle(tw, model, workflowId, status.step);
      assert.equal((await settle(tw, model, workflowId, closed.step)).status, 'closed');
      await postsSettled(workflowId, 5);
      assert.deepEqual(statuses(desk, id), REFUND_FLOW[desk]);
      assert.deepEqual(publicPosts(desk, id), ['I have asked a colleague to approve a refund of £10.00 for order 5102.', 'Your refund of £10.00 has been issued.']);
      assert.match(internalNotes(desk, id).join('\n'), /awaits approval[\s\S]*was issued[\s\S]*the case is closed/);
      assertNothingInternalInPublic(desk, id);
    });

    it(`${desk}: an answered case that hears nothing more closes the ticket: ${CLOSE_FLOW[desk].join(' → ')}`, async () => {
      const { id, workflowId, status } = await openCase(desk, 'Where is order 5102?', [answer('It left the warehouse this morning and arrives tomorrow.')]);
      assert.equal((status.status === 'closed' ? status : await settle(tw, model, workflowId, status.step)).status, 'closed');
      await postsSettled(workflowId, 2);
      assert.deepEqual(statuses(desk, id), CLOSE_FLOW[desk]);
      assert.deepEqual(publicPosts(desk, id), ['It left the warehouse this morning and arrives tomorrow.']);
      assertNothingInternalInPublic(desk, id);
    });
  }

  it('a reply that would show the customer internals goes to the team as a note, the customer gets the holding reply, and the case goes to the configured group on hold', async () => {
    const leaky = 'Your refund req_0123456789abcdef of 1099 cents failed with ToolError: refused.';
    const { id, workflowId, status } = await openCase('zendesk', 'Refund order 5102 please.', [answer(leaky)]);
    assert.equal(status.status, 'needs_human');
    assert.match(status.handOff!.reason, /held back because it showed the customer .*an internal id.*an amount in cents.*a tool or system error/);
    await postsSettled(workflowId, 3);
    assert.deepEqual(publicPosts('zendesk', id), [HOLDING_REPLY]);
    const notes = internalNotes('zendesk', id);
    assert.ok(
      notes.some((n) => n.includes('a reply was held back') && n.includes(leaky)),
      notes.join('\n---\n'),
    );
    assert.deepEqual(zendesk.statusHistory(Number(id)), ['new', 'hold']);
    assert.equal(zendesk.ticket(Number(id))!.groupId, Number(ZENDESK_GROUP));
    assertNothingInternalInPublic('zendesk', id);
  });

  it('a case handed to a person is assigned to the configured Intercom admin and Freshdesk group', async () => {
    const leaky = 'Error at investigation-x: SQLSTATE 23505';
    const onIntercom = await openCase('intercom', 'Hello?', [answer(leaky)]);
    const onFreshdesk = await openCase('freshdesk', 'Hello?', [answer(leaky)]);
    assert.equal(onIntercom.status.status, 'needs_human');
    await postsSettled(onIntercom.workflowId, 3);
    await postsSettled(onFreshdesk.workflowId, 3);
    assert.equal(intercom.conversation(onIntercom.id)!.assignee, intercom.teammateId);
    assert.deepEqual(intercom.stateHistory(onIntercom.id), ['open']);
    assert.equal(freshdesk.ticket(Number(onFreshdesk.id))!.groupId, freshdesk.groupId);
    assert.deepEqual(freshdesk.statusHistory(Number(onFreshdesk.id)), [2, 7]);
    assert.deepEqual(publicPosts('intercom', onIntercom.id), [HOLDING_REPLY]);
    assert.deepEqual(publicPosts('freshdesk', onFreshdesk.id), [HOLDING_REPLY]);
  });
});
