import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deliverEvent } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import { investigationId } from '../src/schemas/event';
import { settingsWith, ticket } from './support/investigate';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { answer, json, scriptedModel } from './support/scripted-model';
import { settle } from './support/scripted-run';
import { openTestDatabase } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';
import { firstTicketIdOfFile, zendeskEnv } from './support/desk-stack';

// A customer writes again on a Zendesk ticket whose case has closed. The reopened case is a new
// run of the same workflow, and every desk post's idempotency key is the workflow id and the
// post's number: the new run numbers its posts after the closed run's, so its reply reaches the
// ticket instead of being skipped as one already posted. Real dev server, real Postgres; Zendesk's
// stand-in (Zendesk cannot be reached from here) and a scripted model.

const CUSTOMER = 'cust_dana';
const model = scriptedModel();
let db: Database;
let zendesk: DeskStandin;
let tw: TestWorker;
// A short follow-up window: an answered case closes by itself soon after its reply.
const settings = settingsWith({ CASEWORK_FOLLOW_UP_WINDOW_SECONDS: '2' });

before(async () => {
  zendesk = await startDeskStandin({ firstTicketId: firstTicketIdOfFile() });
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({
    pool: db.app,
    model,
    env: {
      CASEWORK_DESKS: 'zendesk',
      CASEWORK_DESK_TIMEOUT_MS: '2000',
      ...zendeskEnv(zendesk),
    },
  });
});
after(async () => {
  await tw?.stop();
  await db?.close();
  await zendesk?.close();
});

const publicPosts = (ticketId: number) =>
  zendesk
    .ticket(ticketId)!
    .comments.filter((c) => c.public && c.author_id === zendesk.agent.id)
    .map((c) => c.body);

test('a customer who writes again on a closed ticket gets the reopened case’s reply on the desk', async () => {
  const first = 'Where is my parcel for order 5102?';
  const { ticketId } = zendesk.createTicket({ requesterId: 8447388090494, subject: 'Parcel', body: first });
  const event = ticket(CUSTOMER, first, { ticketId: `zendesk-${ticketId}` });
  const id = investigationId(event.ticketId);
  model.script(id, {
    replies: [answer('Your parcel is with the courier and due tomorrow.'), answer('It was delivered this morning; thank you for your patience.')],
    purposes: { compact: () => json({ ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: first }) },
  });

  await deliverEvent(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings });
  const closed = await tw.client.workflow.getHandle(id).result();
  assert.equal(closed.status, 'closed');
  assert.deepEqual(publicPosts(ticketId), ['Your parcel is with the courier and due tomorrow.']);

  const again = ticket(CUSTOMER, 'It arrived, thanks. Anything else I need to do?', { ticketId: event.ticketId, type: 'ticket.message' });
  await deliverEvent(tw.client, tw.pool, again, { taskQueue: tw.taskQueue, settings });
  const reopened = await settle(tw, model, id, 1);
  assert.notEqual(reopened.status, 'needs_human');
  await tw.client.workflow.getHandle(id).result();
  assert.deepEqual(publicPosts(ticketId), ['Your parcel is with the courier and due tomorrow.', 'It was delivered this morning; thank you for your patience.']);
});
