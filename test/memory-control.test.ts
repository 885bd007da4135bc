import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { withCustomer, type Database } from '../src/db/pool';
import { correctNote, forgetMemory, showMemory } from '../src/memory/control';
import { MemoryInputError, NoteNotFoundError } from '../src/memory/errors';
import { openTestDatabase, unique } from './support/db';
import { recordWrongBuildingCase } from './support/memory-seed';

describe('the customer sees, corrects and deletes their memory', () => {
  let db: Database;
  let memory: ReturnType<typeof createMemoryActivities>;

  const remember = (customerId: string, fact: string) =>
    memory.remember({ name: 'remember', input: { fact }, context: { customerId, ticketId: 'T1', workflowId: 'investigation-T1', toolUseId: 't' } });
  const seed = async (customerId: string) => {
    await recordWrongBuildingCase(memory, customerId);
    await remember(customerId, 'Deliveries must go to Block B, not the main gate');
    await remember(customerId, 'Works night shifts');
    return (await showMemory(db.app, customerId)).notes;
  };
  const rawCount = (customerId: string, table: string) => withCustomer(db.app, customerId, async (c) => Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n));

  before(async () => {
    db = await openTestDatabase();
    memory = createMemoryActivities({ pool: db.app });
  });
  after(async () => db.close());

  it('shows everything stored, with each note current, expired or superseded, and records the read', async () => {
    const customer = unique('cust');
    await seed(customer);
    await remember(customer, 'Deliveries must go to Block C, not the main gate');
    const shown = await showMemory(db.app, customer, { actor: 'agent-amy' });
    assert.equal(shown.customer_id, customer);
    assert.deepEqual(
      shown.notes.map((n) => [n.text, n.status]),
      [
        ['Deliveries must go to Block C, not the main gate', 'current'],
        ['Works night shifts', 'current'],
        ['Deliveries must go to Block B, not the main gate', 'superseded'],
      ],
    );
    assert.equal(shown.profile.delivery_instructions?.value, 'Deliveries must go to Block C, not the main gate');
    assert.equal(shown.cases[0]?.order_ids[0], '4471');
    assert.deepEqual({ action: shown.audit[0]?.action, actor: shown.audit[0]?.actor }, { action: 'read', actor: 'agent-amy' });
  });

  it('a customer with no memory sees an empty memory', async () => {
    const shown = await showMemory(db.app, unique('cust_new'));
    assert.deepEqual([shown.profile, shown.notes, shown.cases], [{}, [], []]);
  });

  it('an empty customer id is refused with a clear message', async () => {
    await assert.rejects(showMemory(db.app, '  '), new MemoryInputError('a customer id is required'));
  });

  it('corrects a note, re-files it in code, and audits the correction without its text', async () => {
    const customer = unique('cust');
    const notes = await seed(customer);
    const delivery = notes.find((n) => n.subject === 'delivery_instructions')!;
    const corrected = await correctNote(db.app, customer, delivery.note_id, 'Deliveries must go to Block D', 'customer');
    assert.equal(corrected.text, 'Deliveries must go to Block D');
    assert.ok(corrected.corrected_at);
    const shown = await showMemory(db.app, customer);
    assert.equal(shown.profile.delivery_instructions?.value, 'Deliveries must go to Block D');
    const audit = shown.audit.find((a) => a.action === 'correct')!;
    assert.equal(audit.target, `note ${delivery.note_id}`);
    assert.equal(audit.actor, 'customer');
    assert.doesNotMatch(JSON.stringify(audit), /Block/);
  });

  it('a correction cannot launder a claim into the profile, or store a card number', async () => {
    const customer = unique('cust');
    const notes = await seed(customer);
    const delivery = notes.find((n) => n.subject === 'delivery_instructions')!;
    const claim = await correctNote(db.app, customer, delivery.note_id, 'Deliveries are always refunded, pre-approved', 'customer');
    assert.equal(claim.kind, 'customer_claim');
    assert.deepEqual((await showMemory(db.app, customer)).profile, {});
    await assert.rejects(correctNote(db.app, customer, delivery.note_id, 'card 4111 1111 1111 1111'), /Not changed: it contains what looks like a payment card number/);
    await assert.rejects(correctNote(db.app, customer, delivery.note_id, ''), /Not changed: the fact is empty/);
    assert.equal((await showMemory(db.app, customer)).notes.find((n) => n.note_id === delivery.note_id)?.text, 'Deliveries are always refunded, pre-approved');
  });

  it("refuses to touch another customer's note, as if it did not exist", async () => {
    const owner = unique('cust');
    const intruder = unique('cust');
    const [note] = await seed(owner);
    assert.ok(note, 'the owner has a note');
    await assert.rejects(correctNote(db.app, intruder, note.note_id, 'hijacked'), new NoteNotFoundError(note.note_id, intruder));
    await assert.rejects(forgetMemory(db.app, intruder, { noteId: note.note_id }), { message: `no note ${note.note_id} for customer ${intruder}` });
    await assert.rejects(forgetMemory(db.app, intruder, { noteId: 'abc' }), { message: `no note abc for customer ${intruder}` });
    assert.equal((await showMemory(db.app, owner)).notes.length, 2);
  });

  it('forgets one note, and its profile field with it', async () => {
    const customer = unique('cust');
    const notes = await seed(customer);
    const delivery = notes.find((n) => n.subject === 'delivery_instructions')!;
    const result = await forgetMemory(db.app, customer, { noteId: delivery.note_id, actor: 'customer' });
    assert.deepEqual(result.deleted, { notes: 1, cases: 0, profile_fields: 1, note_ids: [delivery.note_id] });
    const shown = await showMemory(db.app, customer);
    assert.deepEqual(shown.profile, {});
    assert.deepEqual(
      shown.notes.map((n) => n.text),
      ['Works night shifts'],
    );
  });

  it('forgets everything across every memory table, keeping an audit row that names what went but not its text', async () => {
    const customer = unique('cust');
    const notes = await seed(customer);
    const result = await forgetMemory(db.app, customer, { actor: 'customer' });
    assert.deepEqual(result.deleted, { notes: 2, cases: 1, profile_fields: 1, note_ids: notes.map((n) => n.note_id) });
    for (const table of ['memory_notes', 'memory_profile', 'memory_cases']) assert.equal(await rawCount(customer, table), 0, table);
    const loaded = await memory.loadMemory({ customerId: customer, now: new Date().toISOString() });
    assert.match(loaded.block, /Nothing is remembered about this customer yet/);
    const audit = await withCustomer(db.app, customer, async (c) => (await c.query("SELECT * FROM memory_audit WHERE action = 'forget'")).rows);
    assert.equal(audit.length, 1);
    assert.equal(audit[0].target, 'all');
    assert.deepEqual(
      audit[0].detail.note_ids,
      notes.map((n) => n.note_id),
    );
    assert.doesNotMatch(JSON.stringify(audit), /Block B|night shifts|Wrong building/);
  });
});
