import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { withCustomer, type Database } from '../src/db/pool';
import { openTestDatabase, unique } from './support/db';

describe('recordCase, loadMemory and recall across conversations', () => {
  let db: Database;
  let clock = new Date('2026-10-14T16:00:00.000Z');
  let memory: ReturnType<typeof createMemoryActivities>;
  const ctx = (customerId: string, workflowId = 'investigation-T1') => ({ customerId, ticketId: 'T1', workflowId, toolUseId: 'toolu_1' });
  const recall = async (customerId: string, query: string) => {
    const outcome = await memory.recall({ name: 'recall', input: { query }, context: ctx(customerId) });
    assert.equal(outcome.is_error, false, outcome.content);
    return JSON.parse(outcome.content) as { showing: string; matches: { date: string; what: string; text: string }[] };
  };
  const count = (customerId: string, table: string) => withCustomer(db.app, customerId, async (c) => Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n));

  before(async () => {
    db = await openTestDatabase();
    memory = createMemoryActivities({ pool: db.app, now: () => clock });
  });
  after(async () => db.close());

  it("Priya's next run starts from order 4471, the wrong building, the refund and the Block B instruction", async () => {
    const priya = unique('cust_priya');
    await memory.recordCase({
      customerId: priya,
      workflowId: 'investigation-T-4471',
      ticketId: 'T-4471',
      orderIds: ['4471'],
      summary: 'Courier left the parcel at the wrong building',
      resolution: 'Refunded in full; courier warned',
      closedOn: '2026-10-14',
    });
    await memory.remember({ name: 'remember', input: { fact: 'Deliveries must go to Block B, not the main gate' }, context: ctx(priya, 'investigation-T-4471') });
    const loaded = await memory.loadMemory({ customerId: priya, now: '2026-10-19T08:00:00.000Z' });
    assert.match(loaded.block, /^<customer_memory>\n/);
    assert.match(loaded.block, /order 4471/);
    assert.match(loaded.block, /wrong building/);
    assert.match(loaded.block, /Refunded/);
    assert.match(loaded.block, /Block B, not the main gate/);
    assert.ok(loaded.tokens > 0 && loaded.tokens < 500, `${loaded.tokens} tokens`);
    assert.deepEqual(
      loaded.recentCases.map((c) => c.order_ids),
      [['4471']],
    );
  });

  it('is idempotent on the workflow id: a retried recordCase writes nothing twice', async () => {
    const customer = unique('cust');
    const input = {
      customerId: customer,
      workflowId: 'investigation-T9',
      ticketId: 'T9',
      orderIds: ['5102', '5102'],
      summary: 'Parcel marked delivered but not received',
      resolution: 'Replacement sent',
      closedOn: '2026-10-14',
      commitments: [{ text: 'Call back from the courier team', due: '2026-10-20' }],
    };
    const first = await memory.recordCase(input);
    const second = await memory.recordCase(input);
    assert.equal(first.written, true);
    assert.equal(second.written, false);
    assert.equal(second.case.case_id, first.case.case_id);
    assert.deepEqual(first.case.order_ids, ['5102']);
    assert.equal(await count(customer, 'memory_cases'), 1);
    assert.equal(await count(customer, 'memory_notes'), 1);
  });

  it('shows open commitments with their due date in the next run', async () => {
    const customer = unique('cust');
    await memory.recordCase({
      customerId: customer,
      workflowId: 'investigation-T10',
      ticketId: 'T10',
      orderIds: ['4471'],
      summary: 'Wrong building',
      resolution: 'Courier team to call back',
      closedOn: '2026-10-14',
      commitments: [{ text: 'Promised a call back from the courier team', due: '2026-10-20' }],
    });
    const loaded = await memory.loadMemory({ customerId: customer, now: '2026-10-16T08:00:00.000Z' });
    assert.equal(loaded.commitments.length, 1);
    assert.match(loaded.block, /Open commitments:\n- 2026-10-14: Promised a call back from the courier team, due 2026-10-20/);
  });

  it('keeps the case but strips a card number the summary picked up, and skips a sensitive commitment', async () => {
    const customer = unique('cust');
    const result = await memory.recordCase({
      customerId: customer,
      workflowId: 'investigation-T11',
      ticketId: 'T11',
      orderIds: [],
      summary: 'Charged twice. Customer read out card 4111 1111 1111 1111.',
      resolution: 'Duplicate charge voided',
      closedOn: '2026-10-14',
      commitments: [{ text: 'Text the one-time code 482913 back', due: null }],
    });
    assert.equal(result.case.problem, 'Charged twice. [removed: card number]');
    assert.equal(result.commitments.length, 0);
    assert.match(result.skipped[0] ?? '(nothing skipped)', /one-time/);
  });

  it('rejects a malformed record for good, naming the field', async () => {
    await assert.rejects(
      memory.recordCase({ customerId: unique('cust'), workflowId: 'w', ticketId: 'T', orderIds: [], summary: 'x', resolution: '', closedOn: '14 Oct' }),
      (error: Error & { nonRetryable?: boolean }) => {
        assert.match(error.message, /closedOn: a calendar date written YYYY-MM-DD/);
        assert.equal(error.nonRetryable, true);
        return true;
      },
    );
  });

  it('recall finds older notes and cases by meaning, with dates, newest first among equals', async () => {
    const customer = unique('cust');
    await memory.recordCase({
      customerId: customer,
      workflowId: 'run-1',
      ticketId: 'T1',
      orderIds: ['4471'],
      summary: 'Parcel left at the wrong building',
      resolution: 'refunded',
      closedOn: '2026-09-01',
    });
    await memory.recordCase({
      customerId: customer,
      workflowId: 'run-2',
      ticketId: 'T2',
      orderIds: ['4480'],
      summary: 'Parcel left at the wrong building',
      resolution: 'replacement sent',
      closedOn: '2026-10-01',
    });
    await memory.recordCase({
      customerId: customer,
      workflowId: 'run-3',
      ticketId: 'T3',
      orderIds: ['4490'],
      summary: 'Charged twice for one order',
      resolution: 'voided',
      closedOn: '2026-10-05',
    });
    const found = await recall(customer, 'same as last time, the courier left it at the wrong buildings');
    assert.deepEqual(
      found.matches.slice(0, 2).map((m) => m.date),
      ['2026-10-01', '2026-09-01'],
    );
    assert.match(found.matches[0]?.text ?? '(no match)', /order 4480; Parcel left at the wrong building; resolution: replacement sent/);
    assert.equal(found.matches[0]?.what, 'past case');
    assert.ok(!found.matches.some((m) => /Charged twice/.test(m.text)));
  });

  it('recall tolerates a typo, leaves expired notes out and labels claims', async () => {
    const customer = unique('cust');
    clock = new Date('2024-01-01T00:00:00.000Z');
    await memory.remember({ name: 'remember', input: { fact: 'Neighbour at number 12 takes parcels' }, context: ctx(customer) });
    clock = new Date('2026-10-14T16:00:00.000Z');
    await memory.remember({ name: 'remember', input: { fact: 'Prefers the neighbour at number 14 to take parcels' }, context: ctx(customer) });
    await memory.remember({ name: 'remember', input: { fact: 'I am a VIP customer' }, context: ctx(customer) });
    const typo = await recall(customer, 'neighbor parcels');
    assert.deepEqual(
      typo.matches.map((m) => m.text),
      ['Prefers the neighbour at number 14 to take parcels'],
    );
    const claim = await recall(customer, 'vip');
    assert.equal(claim.matches[0]?.text, 'the customer claims "I am a VIP customer"');
    assert.equal(claim.matches[0]?.what, 'customer claim (unverified)');
    const none = await recall(customer, 'passport renewal');
    assert.deepEqual(none, { query: 'passport renewal', showing: 'nothing in memory matches', matches: [] });
  });
});
