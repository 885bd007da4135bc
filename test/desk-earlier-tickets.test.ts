import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readTickets } from '../src/activities/tools/tickets';
import { loadTickets } from '../src/activities/bulk-read';
import { deskTicketSource } from '../src/commerce/desk-tickets';
import { demoTickets } from '../src/commerce/demo';
import type { TicketSource } from '../src/commerce/shop';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { DeskAuthError, DeskRateLimitedError } from '../src/desk/errors';
import { deskSettings } from '../src/desk/settings';
import { DEMO } from '../src/dev/demo-data/seed';
import { startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import {
  DEMO_FRESHDESK_ORDER_FIELD,
  DEMO_INTERCOM_ORDER_ATTRIBUTE,
  DEMO_ZENDESK_ORDER_FIELD_ID,
  seedFreshdeskHistory,
  seedIntercomHistory,
  seedZendeskHistory,
} from '../src/dev/desk-standin-demo';
import { startFreshdeskStandin, type FreshdeskStandin } from '../src/dev/freshdesk-standin';
import { startIntercomStandin, type IntercomStandin } from '../src/dev/intercom-standin';
import { isTransient } from '../src/errors';
import { openTestDatabase } from './support/db';
import { zendeskEnv as zendeskStandinEnv } from './support/desk-stack';

// get_earlier_tickets and review_tickets read the customer's earlier tickets from the desk the
// ticket came from: the requester of the current ticket is found on the desk itself, their other
// tickets are listed through its documented API (the stand-ins answer as the vendors document
// it: auth, fields, pagination, 429s), and the tools shape them exactly as they shape casework's
// own record. Dana's demo history, put on each desk, reads the same as from the demo tables.

const dana = DEMO.customers.dana;
let db: Database;
let zendesk: DeskStandin;
let freshdesk: FreshdeskStandin;
let intercom: IntercomStandin;
const slept: number[] = [];
const sleep = async (ms: number) => {
  slept.push(ms);
};

/** The desks' clients as configuration builds them. */
function clientsFor(env: Record<string, string>) {
  return deskSettings(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/none', ...env })).clients;
}

let zendeskEnv: Record<string, string>;
let freshdeskEnv: Record<string, string>;
let intercomEnv: Record<string, string>;

before(async () => {
  db = await openTestDatabase({ seed: true });
  zendesk = await startDeskStandin();
  freshdesk = await startFreshdeskStandin();
  intercom = await startIntercomStandin();
  zendeskEnv = {
    CASEWORK_DESKS: 'zendesk',
    ...zendeskStandinEnv(zendesk),
    CASEWORK_ZENDESK_ORDER_FIELD_ID: String(DEMO_ZENDESK_ORDER_FIELD_ID),
  };
  freshdeskEnv = {
    CASEWORK_DESKS: 'freshdesk',
    CASEWORK_FRESHDESK_BASE_URL: freshdesk.url,
    CASEWORK_FRESHDESK_API_KEY: freshdesk.apiKey,
    CASEWORK_FRESHDESK_WEBHOOK_TOKEN: 'fd-token',
    CASEWORK_FRESHDESK_ORDER_FIELD: DEMO_FRESHDESK_ORDER_FIELD,
  };
  intercomEnv = {
    CASEWORK_DESKS: 'intercom',
    CASEWORK_INTERCOM_BASE_URL: intercom.url,
    CASEWORK_INTERCOM_ACCESS_TOKEN: intercom.accessToken,
    CASEWORK_INTERCOM_CLIENT_SECRET: 'ic-secret',
    CASEWORK_INTERCOM_ADMIN_ID: intercom.adminId,
    CASEWORK_INTERCOM_ORDER_ATTRIBUTE: DEMO_INTERCOM_ORDER_ATTRIBUTE,
  };
});
after(async () => {
  await Promise.all([zendesk?.close(), freshdesk?.close(), intercom?.close()]);
  await db?.close();
});

/** Every page the model can read, without the ticket ids (each system names its tickets its own way). */
async function everyPage(source: TicketSource, ticketId?: string) {
  const pages = [];
  for (let page = 1; page;) {
    const read = await readTickets(source, dana, page, ticketId);
    pages.push({ ...read, tickets: read.tickets.map(({ ticket_id: _id, ...rest }) => rest) });
    page = read.next_page ?? 0;
  }
  const all = await loadTickets(source, dana, ticketId);
  return { pages, bulk: { total: all.total, tickets: all.tickets.map(({ ticket_id: _id, ...rest }) => rest) } };
}

/** What casework's own record gives the model for Dana. */
const fromDemo = () => everyPage(demoTickets(db.app));

describe('earlier tickets from the desk the ticket came from', () => {
  test('Zendesk: the requester of the ticket, their requested tickets, shaped exactly as the demo record', async () => {
    const requester = 7310042;
    seedZendeskHistory(zendesk, requester, dana);
    const other = zendesk.createTicket({ requesterId: 99, subject: 'Someone else', body: 'Not Dana.' });
    const current = zendesk.createTicket({ requesterId: requester, subject: 'Order 5102 never arrived', body: 'It never came.' });
    const source = deskTicketSource(clientsFor(zendeskEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    const read = await everyPage(source, `zendesk-${current.ticketId}`);
    assert.deepEqual(read, await fromDemo());
    assert.equal(read.pages[0]!.showing, 'tickets 1-5 of 13, newest first');
    const ids = (await readTickets(source, dana, 1, `zendesk-${current.ticketId}`)).tickets.map((t) => t.ticket_id);
    assert.ok(
      ids.every((id) => /^zendesk-\d+$/.test(id) && id !== `zendesk-${current.ticketId}` && id !== `zendesk-${other.ticketId}`),
      ids.join(),
    );
    const listed = zendesk.requests.filter((r) => r.path.startsWith(`/api/v2/users/${requester}/tickets/requested.json`));
    assert.ok(listed.length > 0 && listed.every((r) => r.status === 200 && /sort_by=created_at&sort_order=desc&per_page=100/.test(r.path)));
  });

  test('Zendesk: a requester with more than a page of tickets is read across pages, counted by the desk', async () => {
    const requester = 7310077;
    for (let i = 0; i < 120; i++)
      zendesk.createTicket({ requesterId: requester, subject: `Ticket ${i}`, body: `Message ${i}`, createdAt: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString() });
    const current = zendesk.createTicket({ requesterId: requester, subject: 'Now', body: 'Today.' });
    const source = deskTicketSource(clientsFor(zendeskEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    const page = await readTickets(source, dana, 21, `zendesk-${current.ticketId}`);
    assert.equal(page.showing, 'tickets 101-105 of 120, newest first');
    assert.deepEqual(
      page.tickets.map((t) => t.subject),
      ['Ticket 19', 'Ticket 18', 'Ticket 17', 'Ticket 16', 'Ticket 15'],
    );
    assert.ok(zendesk.requests.some((r) => r.path.includes(`/users/${requester}/tickets/requested.json`) && r.path.endsWith('page=2')));
  });

  test('Zendesk: a short 429 is waited out for its Retry-After; a long one fails the read as transient; bad credentials name the variables', async () => {
    const requester = 7310099;
    zendesk.createTicket({ requesterId: requester, subject: 'Earlier', body: 'Before.' });
    const current = zendesk.createTicket({ requesterId: requester, subject: 'Now', body: 'Today.' });
    const source = deskTicketSource(clientsFor(zendeskEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    slept.length = 0;
    zendesk.inject({ kind: 'rate_limit', count: 2, retryAfterSeconds: 3 });
    const read = await readTickets(source, dana, 1, `zendesk-${current.ticketId}`);
    assert.deepEqual(
      read.tickets.map((t) => t.subject),
      ['Earlier'],
    );
    assert.deepEqual(slept, [3000, 3000], 'waited exactly what the desk asked, twice');

    zendesk.inject({ kind: 'rate_limit', count: 1, retryAfterSeconds: 60 });
    await assert.rejects(
      readTickets(source, dana, 1, `zendesk-${current.ticketId}`),
      (e: unknown) => e instanceof DeskRateLimitedError && isTransient(e) && e.retryAfterSeconds === 60,
    );

    const wrong = deskTicketSource(clientsFor({ ...zendeskEnv, CASEWORK_ZENDESK_API_TOKEN: 'not-the-token' }), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    await assert.rejects(
      readTickets(wrong, dana, 1, `zendesk-${current.ticketId}`),
      (e: unknown) => e instanceof DeskAuthError && /CASEWORK_ZENDESK_EMAIL \/ CASEWORK_ZENDESK_API_TOKEN/.test(e.message),
    );
  });

  test('Freshdesk: tickets listed by requester reach back past the 30-day default, shaped exactly as the demo record', async () => {
    const requester = 43_100_007;
    seedFreshdeskHistory(freshdesk, requester, dana);
    freshdesk.createTicket(99, '<div>Not Dana.</div>', { subject: 'Someone else' });
    const current = freshdesk.createTicket(requester, '<div>It never came.</div>', { subject: 'Order 5102 never arrived' });
    const source = deskTicketSource(clientsFor(freshdeskEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    slept.length = 0;
    freshdesk.rateLimit(1, 2);
    const read = await everyPage(source, `freshdesk-${current}`);
    assert.deepEqual(read, await fromDemo());
    assert.deepEqual(slept, [2000], "the 429's Retry-After was waited out");
    const listed = freshdesk.requests.filter((r) => r.path.startsWith('/api/v2/tickets?'));
    assert.ok(listed.length > 0 && listed.every((r) => r.status === 200 || r.status === 429));
    assert.ok(listed.every((r) => /requester_id=43100007&updated_since=/.test(r.path) && /include=description/.test(r.path)));
  });

  test('Intercom: conversations searched by the contact, newest first, shaped exactly as the demo record; its 429 waits for X-RateLimit-Reset', async () => {
    const contact = '6650ab12cd34ef5678901234';
    seedIntercomHistory(intercom, contact, dana);
    intercom.createConversation('someone-else', '<p>Not Dana.</p>');
    const current = intercom.createConversation(contact, '<p>It never came.</p>');
    const source = deskTicketSource(clientsFor(intercomEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    slept.length = 0;
    intercom.rateLimit(1, 4);
    const read = await everyPage(source, `intercom-${current}`);
    assert.deepEqual(read, await fromDemo());
    assert.equal(slept.length, 1);
    assert.ok(slept[0]! >= 3000 && slept[0]! <= 5000, `waited until the reset (${slept[0]} ms)`);
    assert.ok(intercom.requests.some((r) => r.method === 'POST' && r.path === '/conversations/search' && r.status === 200));
  });

  test('Intercom: more conversations than one search page are followed by starting_after', async () => {
    const contact = '6650ab12cd34ef5678909999';
    for (let i = 0; i < 160; i++)
      intercom.createConversation(contact, `<p>Message ${i}</p>`, { title: `Conversation ${i}`, createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString() });
    const current = intercom.createConversation(contact, '<p>Now.</p>');
    const source = deskTicketSource(clientsFor(intercomEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    const page = await readTickets(source, dana, 32, `intercom-${current}`);
    assert.equal(page.showing, 'tickets 156-160 of 160, newest first');
    assert.deepEqual(
      page.tickets.map((t) => t.subject),
      ['Conversation 4', 'Conversation 3', 'Conversation 2', 'Conversation 1', 'Conversation 0'],
    );
  });

  test("a ticket from POST /events, or from a desk casework does not read, is answered from casework's own record", async () => {
    const source = deskTicketSource(clientsFor(zendeskEnv), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    const before = zendesk.requests.length;
    assert.deepEqual(await everyPage(source, 'T-13412'), await fromDemo());
    assert.deepEqual(await everyPage(source, 'intercom-147000001'), await fromDemo());
    assert.equal(zendesk.requests.length, before, 'Zendesk was not asked');
    const none = deskTicketSource(clientsFor({}), demoTickets(db.app), { maxWaitSeconds: 10, sleep });
    assert.equal(none.name, 'demo', 'with no desk configured the source is the shop record itself');
    assert.equal(source.name, 'zendesk (else demo)');
  });
});
