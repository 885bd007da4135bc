import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eraseCustomer } from '../src/client/erasure';
import { replyAsPerson } from '../src/client/hand-off';
import { decideRefund } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import type { TicketEvent } from '../src/schemas/event';
import { escapeHtml } from '../src/server/console/html';
import { startServer, type RunningServer } from '../src/server/start';
import { customerKeysOf } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { consoleAgent, visibleText, type ConsoleAgent } from './support/console-agent';
import { CONSOLE_RUN_ENV, scriptedTicket } from './support/console-cases';
import { openTestDatabase, unique } from './support/db';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, json, lastToolResults, reply, scriptedModel, text, toolUse } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// The case page's conversation over real HTTP, against the suite's Temporal dev server, a worker
// driven by the scripted model (the one double) and real Postgres: the customer's words (a
// hostile message among them, shown as text), the agent's tool calls with their whole results
// behind an expander, the refund request and its decision, the replies, a hand-over with a held
// reply and a person's answer, a closed case read again, and an erased customer's case.

const LEAD = 'ak_lead_casepage_0123456789a'; // approver:support-lead
const SUPPORT = 'sk_support_casepage_0123456'; // support

const HOSTILE = `<script>alert("pwned")</script><img src=x onerror=alert(1)> My order 5102 never arrived & the courier says "delivered".`;

const model = scriptedModel();
let db: Database;
let tw: TestWorker;
let server: RunningServer;

async function signedIn(key: string, person = ''): Promise<ConsoleAgent> {
  const a = consoleAgent(server.url);
  const res = await a.signIn(key, person);
  assert.equal(res.status, 303, `sign-in succeeds: ${res.text.slice(0, 300)}`);
  await a.follow(res);
  return a;
}

/** The markup of the page's conversation section. */
function conversationOf(page: string): string {
  const start = page.indexOf('<section data-conversation>');
  assert.ok(start >= 0, 'the page has a conversation section');
  return page.slice(start, page.indexOf('</section>', start));
}

before(async () => {
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app, model });
  const config = { ...tw.config, CASEWORK_API_KEYS: [`${LEAD}:approver:support-lead`, `${SUPPORT}:support`].join(',') };
  server = await startServer({ client: tw.client, pool: db.app, config, log: () => undefined }, 0);
});
after(async () => {
  await server?.close();
  await tw?.stop();
  await db?.close();
});

describe("a case page's conversation", () => {
  let id = '';
  let opened: TicketEvent;
  let orderResult = '';
  let trackingResult = '';
  let getOrderId = '';
  let requestId = '';

  before(async () => {
    const getOrder = toolUse('get_order', { order_id: '5102' });
    const tracking = toolUse('get_tracking_events', { order_id: '5102', page: 1 });
    getOrderId = getOrder.id;
    const made = scriptedTicket(model, HOSTILE, {
      replies: [
        reply([text('Let me check the order and its tracking.'), getOrder, tracking]),
        calls(toolUse('request_refund', { order_id: '5102', amount_cents: 700, reason: 'Marked delivered, never received.' })),
        answer('A colleague is reviewing your refund.'),
        answer('Your refund of £7.00 has been issued.'),
      ],
      purposes: { compact: () => json(emptyCaseNotes()) },
    });
    id = made.id;
    opened = made.event;
    const paused = await deliver(tw, model, made.event, settingsWith(CONSOLE_RUN_ENV));
    assert.equal(paused.status, 'awaiting_approval');
    requestId = paused.pendingApproval!.request_id;
    const results = lastToolResults(model.requests(id, 'investigate')[1]!);
    orderResult = results.find((r) => r.tool_use_id === getOrder.id)!.content;
    trackingResult = results.find((r) => r.tool_use_id === tracking.id)!.content;
    await decideRefund(tw.client, id, { requestId, decision: 'approved', approver: 'support-lead', reason: 'No delivery scan.' });
    await settle(tw, model, id, paused.step);
  });

  test("shows the customer's words as text, the tool calls with sentences and whole results behind an expander, the request, the decision and the replies, in order", async () => {
    const support = await signedIn(SUPPORT, 'Sam');
    const res = await support.get(`/console/cases/${id}`);
    assert.equal(res.status, 200);
    const section = conversationOf(res.text);

    // The hostile message is there, word for word, and none of it is markup.
    assert.ok(section.includes(escapeHtml(HOSTILE)), "the customer's words, escaped");
    for (const raw of ['<script>alert', '<img src=x', 'onerror=alert(1)>']) assert.ok(!res.text.includes(raw), `${raw} is not in the page as markup`);

    // Each tool call: its sentence first, then the whole result in a <details> expander, never cut.
    assert.ok(orderResult.length > 300, 'the order lookup answers more than a line');
    const order = new RegExp(`<li class="entry tool" data-entry="tool" data-tool="get_order" id="call-${getOrderId}">([\\s\\S]*?)</li>`).exec(section);
    assert.ok(order, 'the get_order call has its own entry, which the steps table links to');
    assert.match(visibleText(order[1]!), /^Tool get_order\(order_id=5102\) Order 5102: \w+/);
    assert.match(order[1]!, /<details data-raw-result>\s*<summary>Whole result \([\d,]+ characters\)<\/summary>\s*<pre>/);
    assert.ok(order[1]!.includes(`<pre>${escapeHtml(orderResult)}</pre>`), 'the whole get_order result, word for word');
    assert.ok(section.includes(`<pre>${escapeHtml(trackingResult)}</pre>`), 'the whole tracking result too');
    assert.match(visibleText(section), /Tool get_tracking_events\(order_id=5102, page=1\) Tracking for order 5102: /);
    assert.ok(res.text.includes(`href="#call-${getOrderId}"`), 'the steps table links each call to its whole result');

    const shown = visibleText(section);
    const at = (pattern: RegExp) => {
      const match = pattern.exec(shown);
      assert.ok(match, `${pattern} is on the page: ${shown}`);
      return match.index;
    };
    const order_ = [
      at(/Customer <script>alert\("pwned"\)<\/script><img src=x onerror=alert\(1\)> My order 5102 never arrived & the courier says "delivered"\./),
      at(/The agent, before its tool calls \(not sent\) Let me check the order and its tracking\./),
      at(/Tool get_order\(order_id=5102\)/),
      at(new RegExp(`Refund requested by the agent £7\\.00 on order 5102: Marked delivered, never received\\. \\(request ${requestId}\\)`)),
      at(/Reply from casework A colleague is reviewing your refund\./),
      at(new RegExp(`Refund approved by support-lead Request ${requestId}: “No delivery scan\\.” Paid £7\\.00 \\(refund rfd_\\w+\\)\\.`)),
      at(/Reply from casework Your refund of £7\.00 has been issued\./),
    ];
    assert.deepEqual(
      order_,
      [...order_].sort((a, b) => a - b),
      'in the order it happened',
    );
  });

  test('an approver-only session sees the conversation, and every link on the page opens for it, none to customer memory', async () => {
    const lead = await signedIn(LEAD);
    const page = await lead.get(`/console/cases/${id}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(escapeHtml(orderResult)), 'the approver reads the whole results');
    const links = [...page.text.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!).filter((href) => !href.startsWith('/console/assets/'));
    assert.deepEqual(
      links.filter((href) => href.startsWith('/console/customers')),
      [],
      'no memory link for a key without the support grant',
    );
    for (const href of links.filter((h) => h.startsWith('/console'))) {
      const res = await lead.get(href);
      assert.equal((res.status === 303 ? await lead.follow(res) : res).status, 200, href);
    }
    const anchors = links.filter((h) => h.startsWith('#'));
    assert.ok(anchors.length > 0);
    for (const anchor of anchors) assert.ok(page.text.includes(`id="${anchor.slice(1)}"`), `${anchor} names an entry on the page`);
  });

  test('a closed case shows the same conversation, read from its recorded result and the transcript log', async () => {
    const support = await signedIn(SUPPORT, 'Sam');
    const before = visibleText(conversationOf((await support.get(`/console/cases/${id}`)).text));
    const closed = await deliver(tw, model, { ...opened, eventId: unique('evt'), type: 'ticket.closed', message: '' });
    assert.equal(closed.status, 'closed');
    const page = await support.get(`/console/cases/${id}`);
    assert.equal(page.status, 200);
    assert.equal(visibleText(conversationOf(page.text)), before);
  });
});

describe('a case handed to a person', () => {
  test('shows the held-back reply as not sent, the hand-over with why, and the reply the person wrote', async () => {
    const { event, id } = scriptedTicket(model, 'Where is my refund?', [answer('Your request req_0123456789abcdef is filed, see investigation-T-1.')]);
    const status = await deliver(tw, model, event);
    assert.equal(status.status, 'needs_human');
    await replyAsPerson(tw.client, id, { by: 'sam', text: 'Hi, Sam here: your refund is on its way.' });
    const support = await signedIn(SUPPORT, 'Sam');
    const shown = visibleText(conversationOf((await support.get(`/console/cases/${id}`)).text));
    assert.match(
      shown,
      /Customer Where is my refund\? Held back: not sent to the customer Your request req_0123456789abcdef is filed, see investigation-T-1\. Handed to a person at \d{4}-\d\d-\d\d \d\d:\d\d UTC a reply was held back because it showed the customer [^.]*?an internal id.*? Answered by sam at \d{4}-\d\d-\d\d \d\d:\d\d UTC Reply from casework Thank you for your patience\..*? Reply from sam Hi, Sam here: your refund is on its way\./,
    );
  });
});

describe("an erased customer's case", () => {
  test('shows when the conversation was erased, and none of it', async () => {
    const customerId = unique('cust_casepage');
    const words = 'Leave it with Quillby at the back door.';
    const event = ticket(customerId, words);
    const id = `investigation-${event.ticketId}`;
    model.script(id, { replies: [answer('Noted: I will pass that on to the courier.')], purposes: { compact: () => json(emptyCaseNotes()) } });
    await deliver(tw, model, event);
    await deliver(tw, model, { ...event, eventId: unique('evt'), type: 'ticket.closed', message: '' });
    const support = await signedIn(SUPPORT, 'Sam');
    assert.ok((await support.get(`/console/cases/${id}`)).text.includes('Quillby'), 'readable before the erasure');
    await eraseCustomer({ pool: db.app, keys: customerKeysOf(db.app, codecFor(tw.config)), client: tw.client }, { customerId, by: 'alice' });
    const page = await support.get(`/console/cases/${id}`);
    assert.equal(page.status, 200);
    assert.match(visibleText(conversationOf(page.text)), new RegExp(`Conversation The conversation was erased on ${new Date().toISOString().slice(0, 10)}`));
    assert.ok(!page.text.includes('Quillby') && !page.text.includes('pass that on'), 'no word of it on the page');
  });
});
