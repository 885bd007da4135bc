import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { APP_ROLE, openPool, withCustomer, type Database } from '../src/db/pool';
import { EMBEDDED_SHARED_SESSION, openTestDatabase, unique } from './support/db';

// What a transaction-pooling pooler (PgBouncer in pool_mode=transaction) does to casework's
// row-level security, reproduced on a real Postgres: the pooler hands one server connection to
// one client per transaction, then to the next client. Here a pool of one connection plays the
// server connection and successive calls play different clients. A pooler also does not pass
// on the `options=-c role=…` startup parameter the app pool normally sets, so the pool below
// connects without it, as the login role.
// What must hold: withCustomer's role and customer are transaction-local (SET LOCAL ROLE,
// set_config(…, true)), so they end with the transaction and never reach the next client; a
// session-level setting would.

describe('row-level security through one shared server connection (transaction pooling)', { skip: EMBEDDED_SHARED_SESSION }, () => {
  let db: Database;
  let shared: ReturnType<typeof openPool>;
  const dana = unique('cust_dana');
  const other = unique('cust_other');

  before(async () => {
    db = await openTestDatabase();
    shared = openPool(db.url, 1);
    const memory = createMemoryActivities({ pool: db.app });
    await memory.remember({
      name: 'remember',
      input: { fact: 'Deliveries must go to Block B, not the main gate' },
      context: { customerId: dana, ticketId: 'T1', workflowId: `investigation-${dana}`, toolUseId: 'toolu_1' },
    });
  });
  after(async () => {
    await shared?.end();
    await db?.close();
  });

  const facts = async () =>
    (
      await shared.query<{ pid: number; customer: string | null; role: string }>(
        "SELECT pg_backend_pid() AS pid, current_setting('casework.customer_id', true) AS customer, current_user AS role",
      )
    ).rows[0]!;

  test("a customer's scope and role end with the transaction: the next client on the same connection has neither", async () => {
    const before = await facts();
    const inside = await withCustomer(shared, dana, async (client) => {
      const row = (
        await client.query<{ pid: number; customer: string; role: string; notes: number }>(
          "SELECT pg_backend_pid() AS pid, current_setting('casework.customer_id') AS customer, current_user AS role, (SELECT count(*)::int FROM memory_notes) AS notes",
        )
      ).rows[0]!;
      return row;
    });
    assert.equal(inside.pid, before.pid, 'one server connection throughout');
    assert.deepEqual({ customer: inside.customer, role: inside.role }, { customer: dana, role: APP_ROLE });
    assert.ok(inside.notes > 0, "inside Dana's scope her note is visible");
    const next = await facts();
    assert.equal(next.pid, before.pid);
    assert.ok(!next.customer, 'the next client is scoped to no customer');
    assert.equal(next.role, before.role, 'and is back to the login role');
  });

  test("another customer's transaction on the same connection sees none of Dana's rows", async () => {
    await withCustomer(shared, dana, async (client) => client.query('SELECT 1'));
    const seen = await withCustomer(shared, other, async (client) => (await client.query('SELECT customer_id FROM memory_notes')).rows);
    assert.deepEqual(seen, []);
  });

  test('a session-level setting, by contrast, would outlive its client: casework never makes one', async () => {
    await shared.query("SELECT set_config('casework.customer_id', $1, false)", [dana]);
    assert.equal((await facts()).customer, dana, 'the next client inherits it: why casework sets the customer only with SET LOCAL semantics');
    await shared.query('RESET casework.customer_id');
  });
});
