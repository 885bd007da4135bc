import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { withCustomer, type Database } from '../src/db/pool';
import { loadScreenCorpus } from '../src/dev/screen-corpus';
import { correctNote } from '../src/memory/control';
import { openTestDatabase, unique } from './support/db';

// The privacy screen where memory is written: what remember() and recordCase() leave in the
// database, read back as the application role under row-level security.

const corpus = loadScreenCorpus();
const refused = corpus.flatMap((s) => (s.label === 'refuse' ? [s] : []));
const kept = corpus.filter((s) => s.label === 'keep');

describe('nothing memory stores holds what the screen refuses', () => {
  let db: Database;
  let memory: ReturnType<typeof createMemoryActivities>;
  const clock = new Date('2026-10-14T10:00:00.000Z');
  const ctx = (customerId: string) => ({ customerId, ticketId: 'T1', workflowId: 'investigation-T1', toolUseId: 'toolu_1' });
  const remember = (customerId: string, fact: string) => memory.remember({ name: 'remember', input: { fact }, context: ctx(customerId) });
  const storedText = (customerId: string) =>
    withCustomer(db.app, customerId, async (c) => {
      const notes = (await c.query<{ text: string }>('SELECT text FROM memory_notes')).rows.map((r) => r.text);
      const cases = (await c.query<{ problem: string; resolution: string }>('SELECT problem, resolution FROM memory_cases')).rows;
      return { notes, cases, all: [...notes, ...cases.flatMap((r) => [r.problem, r.resolution])].join('\n') };
    });

  before(async () => {
    db = await openTestDatabase();
    memory = createMemoryActivities({ pool: db.app, now: () => clock });
  });
  after(async () => db.close());

  it('refuses the login from the issue with a reason that names a password and repeats neither part', async () => {
    const customer = unique('cust');
    const outcome = await remember(customer, 'Login priya.k@example.com, pw hunter2');
    assert.equal(outcome.is_error, true);
    assert.match(outcome.content, /^Not saved: it contains a password or login details\./);
    assert.ok(!outcome.content.includes('hunter2') && !outcome.content.includes('priya.k@example.com'), outcome.content);
    assert.deepEqual((await storedText(customer)).notes, []);
  });

  it("stores sentences about codes and passwords that hold none, and the neighbour who takes parcels, but not another person's details", async () => {
    const customer = unique('cust');
    for (const fact of [
      'The gate code changes every month, so ask me for the current one',
      'I reset my password last week',
      'My neighbour at number 12 is happy to take in parcels',
    ]) {
      const outcome = await remember(customer, fact);
      assert.equal(outcome.is_error, false, `${fact}: ${outcome.content}`);
    }
    const dana = await remember(customer, 'Dana Whitfield at 14 Orchard Lane… her order 5102 was lost');
    assert.equal(dana.is_error, true);
    assert.match(dana.content, /another person's personal details/);
    assert.ok(!/Dana|Whitfield|Orchard|5102/.test(dana.content), dana.content);
    assert.equal((await storedText(customer)).notes.length, 3);
  });

  it('writes every corpus sentence through remember() and finds only the kept ones stored', async () => {
    const customer = unique('cust');
    for (const s of corpus) {
      const outcome = await remember(customer, s.text);
      assert.equal(outcome.is_error, s.label === 'refuse', `${s.text}: ${outcome.content}`);
    }
    const { notes } = await storedText(customer);
    assert.deepEqual(notes.sort(), kept.map((s) => s.text).sort());
  });

  it('redacts every refused sentence from case summaries and resolutions, keeps the kept ones, and skips a sensitive commitment', async () => {
    const customer = unique('cust');
    const sentences = corpus.map((s) => `${s.text.replace(/[.…]+$/, '')}.`);
    // Twelve sentences a case keeps each text well inside the 2,000 characters a case stores.
    for (let i = 0; i * 24 < sentences.length; i++) {
      await memory.recordCase({
        customerId: customer,
        workflowId: `investigation-T${i}`,
        ticketId: `T${i}`,
        orderIds: ['4471'],
        summary: sentences.slice(i * 24, i * 24 + 12).join(' '),
        resolution: `Refunded. ${sentences.slice(i * 24 + 12, i * 24 + 24).join(' ')}`,
        closedOn: '2026-10-14',
      });
    }
    const result = await memory.recordCase({
      customerId: customer,
      workflowId: 'investigation-T99',
      ticketId: 'T99',
      summary: 'Checked the tracking portal.',
      resolution: 'Login priya.k@example.com, pw hunter2 used to check the portal. Refunded order 4471.',
      closedOn: '2026-10-14',
      commitments: [
        { text: 'Call Dana Whitfield at 14 Orchard Lane about her order 5102', due: null },
        { text: 'Send the replacement to Block B', due: null },
      ],
    });
    assert.equal(result.case.resolution, '[removed: password] Refunded order 4471.');
    assert.deepEqual(
      result.commitments.map((c) => c.text),
      ['Send the replacement to Block B'],
    );
    assert.match(result.skipped[0]!, /another person's personal details/);
    const { cases, all } = await storedText(customer);
    assert.equal(cases.length, Math.ceil(sentences.length / 24) + 1);
    assert.ok(!all.includes('hunter2'), all);
    for (const s of refused) {
      // A detail that a kept sentence also contains ("123" in a kept phone number) proves nothing.
      if (kept.some((k) => k.text.includes(s.detail))) continue;
      assert.ok(!all.includes(s.detail), `${s.detail} from "${s.text}" is stored`);
    }
    for (const s of kept) assert.ok(all.includes(s.text.replace(/[.…]+$/, '')), `kept sentence lost: ${s.text}`);
  });

  it('refuses a correction that would put a password into a note', async () => {
    const customer = unique('cust');
    await remember(customer, 'Prefers email');
    const { note_id } = (await withCustomer(db.app, customer, (c) => c.query<{ note_id: string }>('SELECT note_id FROM memory_notes'))).rows[0]!;
    await assert.rejects(correctNote(db.app, customer, note_id, 'Prefers email; pwd: Tr0ub4dor&3'), /Not changed: it contains a password/);
    assert.deepEqual((await storedText(customer)).notes, ['Prefers email']);
  });
});
