import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadConfig, type Config } from '../src/config';
import type { Database } from '../src/db/pool';
import { showMemory } from '../src/memory/control';
import { lazyClient, startServer, type RunningServer } from '../src/server/start';
import { consoleAgent, visibleText } from './support/console-agent';
import { seedConsoleMemory } from './support/console-cases';
import { openTestDatabase, unique } from './support/db';

// The console as a fleet: two console servers (as two replicas would be) on one Postgres, a
// person's requests landing on either. Sessions, CSRF tokens, customer references and the
// message after a form are nothing either process keeps for itself, so a session begun on one
// replica works on the other, signing out on one ends it on both, and both end a session at
// the same idle and absolute limits. Both replicas read one injected clock, so expiry is
// tested without waiting. Temporal is not needed: the pages used here read only Postgres.

const SUPPORT = 'sk_support_fleet_0123456789ab';
const MINUTE = 60_000;

let db: Database;
let clock = Date.parse('2026-12-01T09:00:00.000Z');
const replicas: RunningServer[] = [];
const temporal: { close(): Promise<void> }[] = [];
let customer: string;
let baseConfig: Config;

async function replica(config: Config): Promise<RunningServer> {
  const client = lazyClient(config);
  temporal.push(client);
  const server = await startServer({ client: client.client, pool: db.app, config, log: () => undefined, routes: 'console', now: () => clock }, 0);
  replicas.push(server);
  return server;
}

let a: RunningServer;
let b: RunningServer;

before(async () => {
  db = await openTestDatabase();
  const config: Config = {
    ...loadConfig(),
    DATABASE_URL: db.url,
    CASEWORK_API_KEYS: `${SUPPORT}:support`,
    CASEWORK_CONSOLE_IDLE_MINUTES: 30,
    CASEWORK_CONSOLE_SESSION_HOURS: 2,
    // Nothing answers here: a page that needed Temporal would fail loudly, not pass.
    TEMPORAL_ADDRESS: '127.0.0.1:9',
  };
  baseConfig = config;
  a = await replica(config);
  b = await replica(config);
  customer = unique('cust_fleet');
  await seedConsoleMemory(db.app, customer);
});
after(async () => {
  for (const server of replicas) await server.close();
  for (const client of temporal) await client.close().catch(() => undefined);
  await db?.close();
});

/** A browser whose next request goes to `on.server`. */
function person() {
  const on = { server: a };
  return { on, agent: consoleAgent(() => on.server.url) };
}

const signedInAs = (html: string) => /Signed in as (.+?) \(key:[0-9a-f]{8}\)/.exec(visibleText(html))?.[1];

describe('two console replicas on one database', () => {
  test('a session begun on A works on B: pages, a CSRF-protected form with a reference A issued, and its message shown back on A', async () => {
    const { on, agent } = person();
    on.server = a;
    const signIn = await agent.signIn(SUPPORT, 'Sam from support');
    assert.equal(signIn.status, 303, signIn.text.slice(0, 300));

    on.server = b;
    const lookup = await agent.get('/console/customers');
    assert.equal(lookup.status, 200, 'B knows the session A began');
    assert.equal(signedInAs(lookup.text), 'Sam from support');

    on.server = a;
    const found = await agent.post('/console/customers/lookup', { customerId: customer });
    assert.equal(found.status, 303, 'a form with the CSRF token B drew is accepted by A');
    const location = found.headers.get('location')!;
    assert.ok(!location.includes(customer), 'the reference does not carry the customer id in clear');
    const note = (await showMemory(db.app, customer)).notes.find((n) => n.text.startsWith('Deliveries must go to Block B'))!;

    on.server = b;
    const memoryPage = await agent.get(location);
    assert.equal(memoryPage.status, 200, 'B opens the reference A issued');
    assert.match(visibleText(memoryPage.text), new RegExp(`What casework remembers about ${customer}`));

    on.server = a;
    await agent.get(location);
    on.server = b;
    const forgotten = await agent.post(`${location}/forget`, { noteId: String(note.note_id) });
    assert.equal(forgotten.status, 303, `B accepts the form A drew: ${forgotten.text.slice(0, 300)}`);
    assert.ok(!(await showMemory(db.app, customer)).notes.some((n) => n.note_id === note.note_id), 'the note is forgotten');

    on.server = a;
    const shown = await agent.follow(forgotten);
    assert.match(visibleText(shown.text), new RegExp(`Note ${note.note_id} forgotten\\.`), "the form's message, kept by B, is shown by A");
    assert.doesNotMatch(visibleText((await agent.get(location)).text), /forgotten\./, 'shown once');
  });

  test('signing out on B ends the session on A too', async () => {
    const { on, agent } = person();
    on.server = a;
    assert.equal((await agent.signIn(SUPPORT, 'Sam')).status, 303);
    const cookie = agent.setCookies
      .filter((c) => c.startsWith('casework_console='))
      .at(-1)!
      .split(';')[0]!;
    on.server = b;
    await agent.get('/console/customers');
    const out = await agent.post('/console/sign-out', {});
    assert.equal(out.headers.get('location'), '/console/sign-in');
    for (const server of [a, b]) {
      const replay = await fetch(`${server.url}/console/customers`, { headers: { cookie }, redirect: 'manual' });
      assert.equal(replay.status, 303, `the old cookie opens nothing on ${server === a ? 'A' : 'B'}`);
      assert.equal(replay.headers.get('location'), '/console/sign-in');
      const form = await fetch(`${server.url}/console/customers/lookup`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ customerId: customer, csrf: agent.csrf }).toString(),
        redirect: 'manual',
      });
      assert.equal(form.status, 403, 'nor does it send a form, with the token it had');
    }
  });

  test('a replica whose CASEWORK_API_KEYS no longer holds the key ends the session (a revoked key signs no one in)', async () => {
    const { on, agent } = person();
    on.server = a;
    assert.equal((await agent.signIn(SUPPORT, 'Sam')).status, 303);
    const other = 'sk_support_fleet_other_0123456789';
    const revoked = await replica({ ...baseConfig, CASEWORK_API_KEYS: `${other}:support` });
    on.server = revoked;
    const refused = await agent.get('/console/customers');
    assert.equal(refused.status, 303, 'the rolled-out replica no longer knows the key');
    assert.equal(refused.headers.get('location'), '/console/sign-in');
    on.server = a;
    assert.equal((await agent.get('/console/customers')).status, 303, 'and the session is gone for the old replicas too');
  });

  test('the database keeps only a hash of the session token, and the principal without the key', async () => {
    const { agent } = person();
    assert.equal((await agent.signIn(SUPPORT, 'Sam')).status, 303);
    const token = agent.setCookies
      .filter((c) => c.startsWith('casework_console='))
      .at(-1)!
      .split(';')[0]!
      .split('=')[1]!;
    const { rows } = await db.admin.query<{ token_sha256: Buffer; principal: unknown; person: string }>('SELECT token_sha256, principal, person FROM console_sessions');
    const row = rows.find((r) => r.token_sha256.equals(createHash('sha256').update(token).digest()));
    assert.ok(row, 'the session is found by the hash of its token');
    const stored = JSON.stringify(rows);
    assert.ok(!stored.includes(token), 'the token itself is stored nowhere');
    assert.ok(!stored.includes(SUPPORT), 'nor the key');
    assert.equal(row.person, 'Sam');
  });

  test('a forged or altered customer reference opens nothing (404)', async () => {
    const { agent } = person();
    await agent.signIn(SUPPORT, 'Sam');
    await agent.get('/console/customers');
    const found = await agent.post('/console/customers/lookup', { customerId: customer });
    const ref = found.headers.get('location')!.split('/').pop()!;
    const flipped = `${ref.slice(0, -2)}${ref.at(-2) === 'A' ? 'B' : 'A'}${ref.at(-1)}`;
    for (const bad of [flipped, `c_${'A'.repeat(60)}`]) {
      const res = await agent.get(`/console/customers/${bad}`);
      assert.equal(res.status, 404, bad);
      assert.match(visibleText(res.text), /look the customer up again/);
    }
  });
});

describe('session lifetimes, the same on every replica', () => {
  test('a session unused for longer than the idle time ends; one in use lives on', async () => {
    const { on, agent } = person();
    on.server = a;
    assert.equal((await agent.signIn(SUPPORT, 'Sam')).status, 303);
    for (const server of [b, a, b]) {
      clock += 29 * MINUTE;
      on.server = server;
      assert.equal((await agent.get('/console/customers')).status, 200, 'used within the idle time, it lives on');
    }
    clock += 31 * MINUTE;
    on.server = a;
    const idle = await agent.get('/console/customers');
    assert.equal(idle.status, 303, 'idle for 31 minutes of 30, it has ended');
    assert.equal(idle.headers.get('location'), '/console/sign-in');
    on.server = b;
    assert.equal((await agent.get('/console/customers')).status, 303, 'on B as on A');
  });

  test('a session ends at its absolute lifetime however busy it is', async () => {
    const { on, agent } = person();
    const signedInAt = clock;
    assert.equal((await agent.signIn(SUPPORT, 'Sam')).status, 303);
    let i = 0;
    while (clock + 20 * MINUTE < signedInAt + 120 * MINUTE) {
      clock += 20 * MINUTE;
      on.server = i++ % 2 ? a : b;
      assert.equal((await agent.get('/console/customers')).status, 200, `in use at ${(clock - signedInAt) / MINUTE} minutes`);
    }
    clock = signedInAt + 120 * MINUTE + 1;
    const ended = await agent.get('/console/customers');
    assert.equal(ended.status, 303, 'two hours after sign-in it has ended, used 20 minutes ago or not');
  });
});

describe('lifetime settings', () => {
  test('are validated at start: whole positive minutes, and the idle time no longer than the lifetime', () => {
    assert.throws(
      () => loadConfig({ CASEWORK_CONSOLE_IDLE_MINUTES: '600', CASEWORK_CONSOLE_SESSION_HOURS: '8' }),
      /CASEWORK_CONSOLE_IDLE_MINUTES \(600\) is longer than CASEWORK_CONSOLE_SESSION_HOURS \(8 h/,
    );
    assert.throws(() => loadConfig({ CASEWORK_CONSOLE_IDLE_MINUTES: '0' }), /CASEWORK_CONSOLE_IDLE_MINUTES/);
    assert.throws(() => loadConfig({ CASEWORK_CONSOLE_SESSION_HOURS: '-1' }), /CASEWORK_CONSOLE_SESSION_HOURS/);
    const config = loadConfig({});
    assert.equal(config.CASEWORK_CONSOLE_IDLE_MINUTES, 480);
    assert.equal(config.CASEWORK_CONSOLE_SESSION_HOURS, 24);
  });
});
