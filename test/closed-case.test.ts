import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../src/config';
import type { Database } from '../src/db/pool';
import { investigationId, type TicketEvent } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import type { RequestLog } from '../src/server/context';
import { lazyClient, startServer, type RunningServer } from '../src/server/start';
import { connectClient, type TemporalClient } from '../src/temporal/client';
import { consoleAgent, visibleText } from './support/console-agent';
import { openTestDatabase, unique } from './support/db';
import { example, send, ticket } from './support/investigate';
import { startTestWorker, type TestWorker } from './support/temporal';

// Reading cases when no worker polls their task queue: the cases are made by a real worker on a
// queue of their own, then the worker stops, so nothing answers a query on that queue. A closed
// case is read from what its run recorded (its result, the transcript log); a running one needs
// a live answer and says no worker gave one; a customer-scoped key is refused before Temporal.

const TRUSTED = 'tk_trusted_closed_0123456789';
const DANA = 'ck_dana_closed_0123456789ab';
const OTHER = 'ck_other_closed_0123456789a';
const SUPPORT = 'sk_support_closed_01234567';
const BIN = resolve(__dirname, '../bin/casework');

let db: Database;
let tw: TestWorker;
let temporal: TemporalClient;
let config: Config;
let server: RunningServer;
const logs: RequestLog[] = [];

let closedEvent: TicketEvent;
let closed: InvestigationStatus;
let closedId: string;
let runningId: string;
let pendingId: string;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

async function get(base: string, path: string, key: string): Promise<Answer> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

function casework(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(BIN, args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

before(async () => {
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app });
  // First, before any case of Dana's is closed into her memory: the dispute pauses at its refund request.
  const refund = example('dana-5102');
  pendingId = investigationId(refund.ticketId);
  const paused = await send(tw, refund);
  assert.equal(paused.status, 'awaiting_approval', 'a case waits for a refund decision');
  closedEvent = ticket('cust_dana', 'Where is my order 5102? It says delivered but nothing came.');
  closedId = investigationId(closedEvent.ticketId);
  await send(tw, closedEvent);
  closed = await send(tw, { ...closedEvent, eventId: unique('evt'), type: 'ticket.closed', message: '' });
  const running = ticket('cust_dana', 'I was charged twice for order 5230, can you check?');
  runningId = investigationId(running.ticketId);
  await send(tw, running);
  // From here no worker polls the cases' task queue.
  await tw.stop();
  config = {
    ...tw.config,
    CASEWORK_API_KEYS: [`${TRUSTED}:*`, `${DANA}:cust_dana`, `${OTHER}:cust_other`, `${SUPPORT}:support`].join(','),
  };
  temporal = await connectClient(config, { pool: db.app });
  server = await startServer({ client: temporal.client, pool: db.app, config, log: (e) => logs.push(e) }, 0);
});
after(async () => {
  await server?.close();
  await temporal?.close();
  await db?.close();
});

describe('GET /investigations/:id with no worker polling', () => {
  test('a closed case answers 200 from the status its run returned, by workflow id or ticket id', async () => {
    assert.equal(closed.status, 'closed');
    for (const path of [`/investigations/${closedId}`, `/investigations/${closedEvent.ticketId}`]) {
      const res = await get(server.url, path, TRUSTED);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.status, 'closed');
      assert.equal(res.body.customerId, 'cust_dana');
      assert.equal(res.body.lastReply, closed.lastReply);
      assert.equal(res.body.step, closed.step);
      assert.equal(res.body.brokenRun, undefined);
    }
  });

  test('a running case needs its worker: 503 with Retry-After, saying no worker answered and on which task queue', async () => {
    const res = await get(server.url, `/investigations/${runningId}`, TRUSTED);
    assert.equal(res.status, 503);
    assert.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After is set');
    assert.match(res.body.error, new RegExp(`no worker answered for ${runningId} .*task queue "${tw.taskQueue}"`));
  });

  test('a customer-scoped key reads its own closed case; another customer, closed or running, and an unknown id are 404', async () => {
    const own = await get(server.url, `/investigations/${closedId}`, DANA);
    assert.equal(own.status, 200);
    assert.equal(own.body.status, 'closed');
    for (const id of [closedId, runningId, 'investigation-T-never-seen']) {
      const res = await get(server.url, `/investigations/${id}`, OTHER);
      assert.equal(res.status, 404, `${id}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error, `no investigation ${id}`);
    }
    assert.equal((await get(server.url, '/investigations/investigation-T-never-seen', TRUSTED)).status, 404);
  });

  test("the scope is checked before Temporal is asked: with Temporal unreachable, another customer's case is still 404", async () => {
    const down = lazyClient({ ...config, TEMPORAL_ADDRESS: '127.0.0.1:1' }, { pool: db.app });
    const offline = await startServer({ client: down.client, pool: db.app, config, log: () => undefined, temporalTimeoutMs: 1_500 }, 0);
    try {
      const scoped = await get(offline.url, `/investigations/${closedId}`, OTHER);
      assert.equal(scoped.status, 404, JSON.stringify(scoped.body));
      const trusted = await get(offline.url, `/investigations/${closedId}`, TRUSTED);
      assert.equal(trusted.status, 503, 'a key that may read it needs Temporal, which is down');
    } finally {
      await offline.close();
      await down.close();
    }
  });

  test('no read answered 500', () => {
    const reads = logs.filter((l) => l.path.startsWith('/investigations/'));
    assert.ok(reads.length >= 6);
    assert.deepEqual(
      reads.filter((l) => l.status >= 500 && l.status !== 503),
      [],
    );
  });
});

describe('the console with no worker polling', () => {
  test("a closed case's page shows its conversation from the transcript log; a running one answers 503", async () => {
    const agent = consoleAgent(server.url);
    const signedIn = await agent.signIn(SUPPORT, 'Sam');
    assert.equal(signedIn.status, 303);
    const page = await agent.get(`/console/cases/${closedId}`);
    assert.equal(page.status, 200, JSON.stringify(logs.filter((l) => l.status === 500)));
    const text = visibleText(page.text);
    assert.match(text, /closed/);
    assert.match(text, /get_order.{0,80} → /, 'each tool call is shown with its result, read from the log');
    assert.doesNotMatch(text, /no result yet/);
    const inbox = await agent.get('/console/inbox');
    assert.equal(inbox.status, 503, 'a refund waits, but no worker can say for whom: the inbox does not claim nothing waits');
    assert.match(visibleText(inbox.text), /no worker answered for investigation-/);
    assert.ok(Number(inbox.headers.get('retry-after')) > 0);
    assert.equal((await agent.get(`/console/cases/${pendingId}`)).status, 503);
    const running = await agent.get(`/console/cases/${runningId}`);
    assert.equal(running.status, 503, `${visibleText(running.text).slice(0, 300)} ${JSON.stringify(logs.filter((l) => l.status === 500))}`);
    assert.match(visibleText(running.text), /no worker answered/);
  });
});

describe('`casework status` with no worker polling', () => {
  test('a closed case prints its status and exits 0; a running one exits 1 saying no worker answered, with no stack', async () => {
    const env = { DATABASE_URL: db.url, TEMPORAL_TASK_QUEUE: tw.taskQueue };
    const shown = await casework(['status', closedId], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /closed/);
    const waiting = await casework(['status', runningId], env);
    assert.equal(waiting.code, 1, waiting.stdout);
    assert.match(waiting.stderr, /^error: no worker answered for /);
    assert.doesNotMatch(waiting.stderr, /\n\s+at /, 'no stack trace');
  });
});
