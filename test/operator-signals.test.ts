import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decideRefund, DecisionNotYetError, NoWorkerAnsweredError } from '../src/client/investigations';
import { loadConfig, type Config } from '../src/config';
import { openPool } from '../src/db/pool';
import type { Database } from '../src/db/pool';
import { exitCodeOf, httpStatusOf } from '../src/errors';
import { startServer, type RunningServer } from '../src/server/start';
import { openTestDatabase } from './support/db';
import { stubTemporalClient, type StubCalls } from './support/stub-temporal';

// What an operator and a caller are told when something is down or too early: health names
// what is down, transient failures are 503 with Retry-After on every route, a decision before
// its request is pending is a retryable "not yet", and no stack trace reaches anyone.

const KEY = 'tk_ops_0123456789abcdef';
const LEAD = 'ak_ops_lead_0123456789abcdef';
let db: Database;
let config: Config;
/** A pool pointed at a port nothing listens on: Postgres is "down". */
const deadPool = openPool('postgres://postgres@127.0.0.1:1/none', 2);
const servers: RunningServer[] = [];

before(async () => {
  db = await openTestDatabase();
  config = { ...loadConfig(), CASEWORK_API_KEYS: `${KEY}:*,${LEAD}:approver:support-lead` };
});
after(async () => {
  await Promise.all(servers.map((s) => s.close(500)));
  await deadPool.end();
  await db?.close();
});

async function serve(options: { calls?: StubCalls; postgresDown?: boolean } = {}): Promise<string> {
  const server = await startServer(
    { client: stubTemporalClient(options.calls), pool: options.postgresDown ? deadPool : db.app, config, log: () => undefined, temporalTimeoutMs: 1_000 },
    0,
  );
  servers.push(server);
  return server.url;
}

async function call(base: string, method: string, path: string, body?: unknown, key = KEY) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.doesNotMatch(text, /\\n\s+at |\n\s+at /, `no stack trace in ${method} ${path}`);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: JSON.parse(text) as Record<string, any> };
}

const unavailable = (code: number) => Object.assign(new Error(`${code} UNAVAILABLE: connect ECONNREFUSED`), { code });

describe('/readyz', () => {
  test('is 200 when Temporal, Postgres and the payload keys are all there', async () => {
    const res = await call(await serve(), 'GET', '/readyz');
    assert.deepEqual(
      { status: res.status, temporal: res.body.temporal, postgres: res.body.postgres, keys: res.body.keys },
      { status: 200, temporal: 'ok', postgres: 'ok', keys: 'ok' },
    );
  });

  test('is 503 with Retry-After naming Postgres when Postgres is down, while /healthz (liveness) stays 200', async () => {
    const url = await serve({ postgresDown: true });
    const res = await call(url, 'GET', '/readyz');
    assert.equal(res.status, 503);
    assert.ok(Number(res.retryAfter) > 0);
    assert.deepEqual({ temporal: res.body.temporal, postgres: res.body.postgres }, { temporal: 'ok', postgres: 'down' });
    assert.match(res.body.error, /Postgres is unreachable \(ECONNREFUSED\)/);
    assert.doesNotMatch(res.body.error, /127\.0\.0\.1:1|postgres:\/\//, 'no connection string');
    const live = await call(url, 'GET', '/healthz');
    assert.deepEqual({ status: live.status, body: live.body }, { status: 200, body: { status: 'alive', draining: false } }, 'restarting would not bring Postgres back');
  });

  test('is 503 naming Temporal when Temporal is down, while /healthz stays 200', async () => {
    const url = await serve({ calls: { getSystemInfo: () => Promise.reject(unavailable(14)) } });
    const res = await call(url, 'GET', '/readyz');
    assert.equal(res.status, 503);
    assert.deepEqual({ temporal: res.body.temporal, postgres: res.body.postgres }, { temporal: 'down', postgres: 'ok' });
    assert.match(res.body.error, /^not ready: Temporal at .* is unreachable/);
    assert.equal((await call(url, 'GET', '/healthz')).status, 200);
  });

  test('is 503 naming the payload keys when their file can no longer be read, never a key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'casework-keys-'));
    const keyFile = join(dir, 'codec-keys');
    writeFileSync(keyFile, `ops-test:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    try {
      const server = await startServer(
        { client: stubTemporalClient(), pool: db.app, config: { ...config, CASEWORK_CODEC_KEY_FILE: keyFile }, log: () => undefined, temporalTimeoutMs: 1_000 },
        0,
      );
      servers.push(server);
      assert.equal((await call(server.url, 'GET', '/readyz')).status, 200);
      rmSync(keyFile);
      const res = await call(server.url, 'GET', '/readyz');
      assert.equal(res.status, 503);
      assert.equal(res.body.keys, 'missing');
      assert.match(res.body.error, /the payload keys do not load: CASEWORK_CODEC_KEY_FILE=.* cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('with Postgres down, every route that needs it answers 503 with Retry-After', () => {
  test('the memory routes', async () => {
    const base = await serve({ postgresDown: true });
    for (const [method, path, body] of [
      ['GET', '/customers/cust_dana/memory'],
      ['DELETE', '/customers/cust_dana/memory'],
      ['PATCH', '/customers/cust_dana/memory/notes/1', { text: 'Leave parcels with the neighbour.' }],
      ['DELETE', '/customers/cust_dana/memory/notes/1'],
    ] as const) {
      const res = await call(base, method, path, body);
      assert.equal(res.status, 503, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.ok(Number(res.retryAfter) > 0, `${method} ${path} has Retry-After`);
      assert.equal(res.body.retryable, true);
      assert.doesNotMatch(res.body.error, /127\.0\.0\.1:1|postgres:\/\//, 'no connection string');
    }
  });

  test('POST /events, whose gate is in Postgres, sends nothing to Temporal', async () => {
    const client = stubTemporalClient();
    const server = await startServer({ client, pool: deadPool, config, log: () => undefined }, 0);
    servers.push(server);
    const event = { eventId: 'e-ops-1', type: 'ticket.created', ticketId: 'T-ops-1', customerId: 'cust_dana', message: 'Where is my parcel?', receivedAt: '2026-11-30T09:00:00Z' };
    const res = await call(server.url, 'POST', '/events', event);
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.ok(Number(res.retryAfter) > 0);
    assert.match(res.body.error, /^Postgres is unreachable \(ECONNREFUSED\)/, 'names what is down: Postgres, not Temporal');
    assert.deepEqual(client.sent, []);
  });
});

/** An update the validator refused with `type` (undefined: a history from before the types). */
function refusedUpdate(message: string, type?: string): () => Promise<never> {
  const cause = type ? ApplicationFailure.create({ type, message, nonRetryable: true }) : ApplicationFailure.create({ message, nonRetryable: true });
  return () => Promise.reject(new WorkflowUpdateFailedError('Workflow Update failed', cause));
}

describe('refund decisions', () => {
  const decision = { requestId: 'rr-1', reason: 'ok' };

  test('"not yet" (DecisionNotYet) is 503 with Retry-After over HTTP and exit 1 in the CLI', async () => {
    const base = await serve({ calls: { executeUpdate: refusedUpdate('no refund request rr-1 is pending yet', 'DecisionNotYet') } });
    const res = await call(base, 'POST', '/investigations/T-1/approve', decision, LEAD);
    assert.equal(res.status, 503);
    assert.ok(Number(res.retryAfter) > 0);
    assert.match(res.body.error, /^not yet: retry shortly \(no refund request rr-1 is pending yet\)$/);
    const error = await decideRefund(stubTemporalClient({ executeUpdate: refusedUpdate('pending soon', 'DecisionNotYet') }), 'investigation-T-1', {
      ...decision,
      decision: 'approved',
      approver: 'support-lead',
    }).catch((e: unknown) => e);
    assert.ok(error instanceof DecisionNotYetError);
    assert.equal(exitCodeOf(error), 1);
  });

  test('DecisionConflict is 409 and DecisionRefused 422; untyped refusals fall back to their words', async () => {
    const cases: [() => Promise<never>, number][] = [
      [refusedUpdate('refund rr-1 has already been decided (approved)', 'DecisionConflict'), 409],
      [refusedUpdate('support-lead may approve at most $200.00', 'DecisionRefused'), 422],
      [refusedUpdate('refund rr-1 has already been decided (approved)'), 409],
      [refusedUpdate('approver mallory is not allowed'), 422],
    ];
    for (const [executeUpdate, status] of cases) {
      const res = await call(await serve({ calls: { executeUpdate } }), 'POST', '/investigations/T-1/approve', decision, LEAD);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.match(res.body.error, /^refund decision refused: /);
    }
  });

  test('an update no worker answers is 503 saying so, and exit 1', async () => {
    const timedOut = () =>
      Promise.reject(new WorkflowUpdateRPCTimeoutOrCancelledError('Timed out waiting for update', { cause: Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4 }) }));
    const res = await call(await serve({ calls: { executeUpdate: timedOut } }), 'POST', '/investigations/T-1/approve', decision, LEAD);
    assert.equal(res.status, 503);
    assert.ok(Number(res.retryAfter) > 0);
    assert.match(res.body.error, /no worker answered the refund decision for investigation-T-1/);
    const error = await decideRefund(stubTemporalClient({ executeUpdate: timedOut }), 'investigation-T-1', { ...decision, decision: 'approved', approver: 'support-lead' }).catch(
      (e: unknown) => e,
    );
    assert.ok(error instanceof NoWorkerAnsweredError);
    assert.deepEqual([exitCodeOf(error), httpStatusOf(error)], [1, 503]);
  });

  test('a refusal whose message carries a stack shows the caller only its first line', async () => {
    const withStack = refusedUpdate('approver mallory is not allowed\n    at validate (/app/src/workflows/refund-approval.ts:10:5)\n    at run (node:internal)', 'DecisionRefused');
    const res = await call(await serve({ calls: { executeUpdate: withStack } }), 'POST', '/investigations/T-1/approve', decision, LEAD);
    assert.deepEqual({ status: res.status, error: res.body.error }, { status: 422, error: 'refund decision refused: approver mallory is not allowed' });
  });
});
