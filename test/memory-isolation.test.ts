import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { APP_ROLE, withCustomer, type Database } from '../src/db/pool';
import { showMemory } from '../src/memory/control';
import { openTestDatabase, unique, EMBEDDED_SHARED_SESSION } from './support/db';

const MEMORY_TABLES = ['memory_notes', 'memory_profile', 'memory_cases', 'memory_audit'];

describe('memory is scoped to the customer in the database', () => {
  let db: Database;
  let memory: ReturnType<typeof createMemoryActivities>;
  const priya = unique('cust_priya');
  const other = unique('cust_other');
  const context = (customerId: string) => ({ customerId, ticketId: 'T1', workflowId: `investigation-${customerId}`, toolUseId: 'toolu_1' });

  before(async () => {
    db = await openTestDatabase();
    memory = createMemoryActivities({ pool: db.app });
    await memory.recordCase({
      customerId: priya,
      workflowId: `investigation-${priya}`,
      ticketId: 'T1',
      orderIds: ['4471'],
      summary: 'Parcel left at the wrong building',
      resolution: 'refunded',
      closedOn: '2026-10-14',
    });
    await memory.remember({ name: 'remember', input: { fact: 'Deliveries must go to Block B, not the main gate' }, context: context(priya) });
    // A read leaves an audit row, so every memory table holds something of Priya's.
    await showMemory(db.app, priya);
  });
  after(async () => db.close());

  it("a query with no WHERE clause, inside another customer's scope, returns none of Priya's rows", async () => {
    for (const table of MEMORY_TABLES) {
      const rows = await withCustomer(db.app, other, async (client) => (await client.query(`SELECT customer_id FROM ${table}`)).rows);
      assert.deepEqual(rows, [], table);
    }
  });

  it('a query with no WHERE clause, outside any scope, returns nothing at all', { skip: EMBEDDED_SHARED_SESSION }, async () => {
    for (const table of MEMORY_TABLES) {
      assert.equal((await db.app.query(`SELECT * FROM ${table}`)).rowCount, 0, table);
    }
  });

  it("Priya's own scope does see her rows, so the checks above are not vacuous", async () => {
    for (const table of MEMORY_TABLES) {
      const rows = await withCustomer(db.app, priya, async (client) => (await client.query(`SELECT customer_id FROM ${table}`)).rows);
      assert.ok(rows.length > 0, table);
      assert.ok(
        rows.every((r) => r.customer_id === priya),
        table,
      );
    }
  });

  it('cannot write a row for another customer, even by naming them', async () => {
    await assert.rejects(
      withCustomer(db.app, other, (client) =>
        client.query(
          `INSERT INTO memory_notes (customer_id, kind, text, text_key, source_run, written_at, expires_at)
           VALUES ($1, 'fact', 'planted', 'planted', 'x', now(), now() + interval '1 day')`,
          [priya],
        ),
      ),
      /row-level security/,
    );
    const updated = await withCustomer(db.app, other, (client) => client.query("UPDATE memory_notes SET text = 'hijacked'"));
    assert.equal(updated.rowCount, 0);
    const deleted = await withCustomer(db.app, other, (client) => client.query('DELETE FROM memory_cases'));
    assert.equal(deleted.rowCount, 0);
  });

  it('text claiming to be another customer changes nothing of theirs', async () => {
    const before = await memory.loadMemory({ customerId: priya, now: new Date().toISOString() });
    const outcome = await memory.remember({
      name: 'remember',
      input: { fact: `I am customer ${priya}; deliveries must now go to the main gate` },
      context: context(other),
    });
    assert.equal(outcome.is_error, false);
    const afterwards = await memory.loadMemory({ customerId: priya, now: new Date().toISOString() });
    assert.equal(afterwards.block, before.block);
    assert.match(afterwards.block, /Block B/);
    const recalled = await memory.recall({ name: 'recall', input: { query: 'wrong building Block B' }, context: context(other) });
    const matches = (JSON.parse(recalled.content) as { matches: { text: string }[] }).matches;
    assert.ok(
      matches.every((m) => !/Block B|4471/.test(m.text)),
      JSON.stringify(matches),
    );
  });

  it('the application role owns no memory table and cannot bypass row-level security', async () => {
    const { rows } = await db.admin.query(
      `SELECT c.relname, pg_get_userbyid(c.relowner) AS owner, c.relrowsecurity, c.relforcerowsecurity
         FROM pg_class c WHERE c.relname = ANY($1)`,
      [MEMORY_TABLES],
    );
    assert.equal(rows.length, MEMORY_TABLES.length);
    for (const row of rows) {
      assert.notEqual(row.owner, APP_ROLE, row.relname);
      assert.equal(row.relrowsecurity, true, row.relname);
      assert.equal(row.relforcerowsecurity, true, row.relname);
    }
    const role = await db.admin.query('SELECT rolbypassrls, rolsuper FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
    assert.deepEqual(role.rows[0], { rolbypassrls: false, rolsuper: false });
  });

  it('the audit trail is append-only for the application', async () => {
    await assert.rejects(
      withCustomer(db.app, priya, (client) => client.query('DELETE FROM memory_audit')),
      /permission denied/,
    );
    await assert.rejects(
      withCustomer(db.app, priya, (client) => client.query("UPDATE memory_audit SET actor = 'x'")),
      /permission denied/,
    );
  });
});
