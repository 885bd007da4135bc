import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBulkReadActivities, helperPrompt, type ReviewResult, type TicketRow } from '../src/activities/bulk-read';
import { demoTickets } from '../src/commerce/demo';
import { answerQuestion, keyTerms, offlineBulkRead, readTickets } from '../src/model/offline/bulk-reader';
import type { Model } from '../src/model/port';
import type { ModelRequest } from '../src/schemas/model';
import type { ToolCall } from '../src/schemas/tool-call';
import { estimateTokens } from '../src/context/tokens';
import { openTestDatabase, unique } from './support/db';
import type { Database } from '../src/db/pool';

const filler = 'The customer describes the parcel, the courier and the date in some detail. '.repeat(20);

function tickets(): TicketRow[] {
  return [
    { ticket_id: 'T-1', opened_at: '2025-03-02T10:00:00.000Z', subject: 'Late delivery', body: `${filler}It came two days late.`, status: 'closed', order_id: '3001' },
    {
      ticket_id: 'T-2',
      opened_at: '2025-06-14T09:00:00.000Z',
      subject: 'Left at the wrong building',
      body: `${filler}The courier left it at Block A, the wrong building, again.`,
      status: 'closed',
      order_id: '4471',
    },
    { ticket_id: 'T-3', opened_at: '2025-08-01T12:00:00.000Z', subject: 'Charged twice', body: `${filler}I was charged twice for one order.`, status: 'closed', order_id: null },
    {
      ticket_id: 'T-4',
      opened_at: '2025-10-14T08:30:00.000Z',
      subject: 'Parcel missing',
      body: `${filler}Delivered to another building, not Block B. The wrong buildings keep getting my parcels.`,
      status: 'open',
      order_id: '5102',
    },
  ];
}

describe('the offline ticket reader', () => {
  it('takes the key terms of the question, each "or" an alternative', () => {
    assert.deepEqual(keyTerms('Which tickets mention the wrong building?'), [['wrong', 'build']]);
    assert.deepEqual(keyTerms('Which earlier tickets mention a double charge or the wrong building?'), [
      ['doubl', 'charg'],
      ['wrong', 'build'],
    ]);
  });

  it('lists the matching tickets with dates, orders and a one-line quote', () => {
    const answer = answerQuestion('Which tickets mention the wrong building?', readTickets(helperPrompt('q', tickets())));
    assert.equal(
      answer,
      [
        '2 of 4 earlier tickets mention "wrong build":',
        '- T-2 (2025-06-14, order 4471): "The courier left it at Block A, the wrong building, again."',
        '- T-4 (2025-10-14, order 5102): "The wrong buildings keep getting my parcels."',
      ].join('\n'),
    );
  });

  it('says so when no ticket matches', () => {
    assert.equal(answerQuestion('Which tickets mention a broken lamp?', readTickets(helperPrompt('q', tickets()))), 'None of the 4 earlier tickets mention "broken lamp".');
  });

  it('answers a bulk_read request deterministically, reading far more than it returns', () => {
    const request: ModelRequest = {
      purpose: 'bulk_read',
      system: [{ type: 'text', text: 'helper' }],
      tools: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: helperPrompt('Which tickets mention the wrong building?', tickets()) }] }],
      max_tokens: 1024,
    };
    const reply = offlineBulkRead(request);
    assert.deepEqual(reply, offlineBulkRead(request));
    assert.equal(reply.stop_reason, 'end_turn');
    assert.ok(reply.usage.input_tokens > 5 * reply.usage.output_tokens);
  });
});

describe('review_tickets', () => {
  let db: Database;
  const customerId = unique('cust-review');
  const otherId = unique('cust-other');
  const requests: ModelRequest[] = [];
  const model: Model = {
    label: 'offline investigator (deterministic test double)',
    offline: true,
    create: async (request) => {
      requests.push(request);
      return offlineBulkRead(request);
    },
  };
  const call = (customer: string, question: string): ToolCall => ({
    name: 'review_tickets',
    input: { question },
    context: { customerId: customer, ticketId: 'T-now', workflowId: 'wf', toolUseId: 'toolu_1' },
  });

  before(async () => {
    db = await openTestDatabase();
    for (const id of [customerId, otherId]) {
      await db.admin.query(`INSERT INTO customers (customer_id, name, email, default_address, created_at) VALUES ($1, $2, $3, 'Block B, 12 Elm Road', now())`, [
        id,
        'Test customer',
        `${id}@example.test`,
      ]);
    }
    for (const t of tickets()) {
      await db.admin.query(`INSERT INTO support_tickets (ticket_id, customer_id, order_id, opened_at, subject, body, status) VALUES ($1, $2, NULL, $3, $4, $5, $6)`, [
        `${customerId}-${t.ticket_id}`,
        customerId,
        t.opened_at,
        t.subject,
        t.body,
        t.status,
      ]);
    }
    await db.admin.query(
      `INSERT INTO support_tickets (ticket_id, customer_id, opened_at, subject, body, status) VALUES ($1, $2, now(), 'Wrong building', 'Someone else: wrong building.', 'open')`,
      [`${otherId}-T-9`, otherId],
    );
  });
  after(async () => {
    await db?.close();
  });

  it("reads all of this customer's tickets in a separate call and returns only a short answer", async () => {
    const review = createBulkReadActivities({ tickets: demoTickets(db.app), model });
    const outcome = await review.review_tickets(call(customerId, 'Which tickets mention the wrong building?'));
    assert.equal(outcome.is_error, false);
    const result = JSON.parse(outcome.content) as ReviewResult;
    assert.equal(result.tickets_read, 4);
    assert.match(result.answer, /^2 of 4 earlier tickets/);
    assert.match(result.answer, new RegExp(`${customerId}-T-2 \\(2025-06-14\\)`));
    assert.doesNotMatch(result.answer, new RegExp(otherId));
    assert.equal(result.tokens_returned, estimateTokens(result.answer));
    assert.ok(result.tokens_read_by_helper > 10 * result.tokens_returned, 'the helper reads much more than it returns');
    assert.ok(result.tokens_if_read_inline > 10 * result.tokens_returned, 'reading inline would have cost much more');
    const helper = requests[requests.length - 1];
    assert.equal(helper?.purpose, 'bulk_read');
    assert.equal(helper?.messages.length, 1, 'the helper starts from a fresh context');
  });

  it('answers without a model call when the customer has no earlier tickets', async () => {
    const before = requests.length;
    const outcome = await createBulkReadActivities({ tickets: demoTickets(db.app), model }).review_tickets(call(unique('cust-none'), 'Which tickets mention anything?'));
    assert.equal((JSON.parse(outcome.content) as ReviewResult).tickets_read, 0);
    assert.equal(requests.length, before);
  });

  it('returns invalid input to the model as an error result', async () => {
    const outcome = await createBulkReadActivities({ tickets: demoTickets(db.app), model }).review_tickets({ ...call(customerId, 'x'), input: { question: 'x' } });
    assert.equal(outcome.is_error, true);
  });
});
