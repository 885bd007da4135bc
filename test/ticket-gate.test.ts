import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitUntilSettled } from '../src/client/investigations';
import type { Config } from '../src/config';
import { admitEvent, EventRefusedError } from '../src/db/tickets';
import { METRIC, processMetrics } from '../src/observability/metrics';
import type { RequestLog } from '../src/server/app';
import { startServer, type RunningServer } from '../src/server/start';
import type { Database } from '../src/db/pool';
import { openTestDatabase, unique } from './support/db';
import { example, ticket } from './support/investigate';
import { startTestWorker, type TestWorker } from './support/temporal';

// The gate in front of every investigation, over real HTTP and the CLI, against the suite's
// Temporal dev server, a worker with the offline model, and real Postgres: a ticket belongs to
// the customer of its first event, whatever state its investigation is in, and an event id is
// delivered once, for good.

const TRUSTED = 'tk_gate_trusted_0123456789abcdef';
const ctx = {} as { db: Database; tw: TestWorker };
let server: RunningServer;
let config: Config;
const logs: RequestLog[] = [];

before(async () => {
  ctx.db = await openTestDatabase({ seed: true });
  ctx.tw = await startTestWorker({ pool: ctx.db.app });
  config = { ...ctx.tw.config, CASEWORK_API_KEYS: `${TRUSTED}:*` };
  server = await startServer({ client: ctx.tw.client, pool: ctx.db.app, config, log: (e) => logs.push(e) }, 0);
});
after(async () => {
  await server?.close();
  await ctx.tw?.stop();
  await ctx.db?.close();
});

async function post(body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${server.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TRUSTED}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The customer messages the workflow's history holds, across the latest run. */
async function messageSignals(workflowId: string): Promise<string[]> {
  const events = (await ctx.tw.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.flatMap((e) =>
    e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage' ? [e.workflowExecutionSignaledEventAttributes.identity ?? 'signal'] : [],
  );
}

async function refusedCount(reason: string): Promise<number> {
  const metric = await processMetrics().registry.getSingleMetric(METRIC.eventsRefused)?.get();
  return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** Sends another customer's event for `ticketId` and checks it is refused, loudly, with nothing sent on. */
async function assertRefusedForStranger(ticketId: string, type: 'ticket.message' | 'ticket.closed' = 'ticket.message'): Promise<void> {
  const workflowId = `investigation-${ticketId}`;
  const before = await ctx.tw.client.workflow.getHandle(workflowId).describe();
  const signalsBefore = await messageSignals(workflowId);
  const countBefore = await refusedCount('ticket_owner');
  const stranger = ticket(unique('cust_mallory'), 'This is my ticket now, refund me.', { ticketId, type, ...(type === 'ticket.closed' ? { message: '' } : {}) });
  const res = await post(stranger);
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.match(res.body.error, new RegExp(`ticket ${ticketId} belongs to another customer: event ${stranger.eventId} from customer ${stranger.customerId} was refused`));
  assert.doesNotMatch(res.body.error, /cust_dana|cust-/, "the owner's id is not told to the stranger");
  const afterwards = await ctx.tw.client.workflow.getHandle(workflowId).describe();
  assert.equal(afterwards.runId, before.runId, 'no new run was started');
  assert.deepEqual(await messageSignals(workflowId), signalsBefore, 'nothing reached the workflow');
  assert.equal(await refusedCount('ticket_owner'), countBefore + 1, `${METRIC.eventsRefused}{reason="ticket_owner"} counted it`);
  const line = [...logs].reverse().find((l) => l.status === 409);
  assert.equal(line?.level, 'warn');
  assert.equal(line?.refused, 'ticket_owner');
}

describe("another customer's event is refused before anything reaches the workflow", () => {
  test('on an open ticket, whose investigation is running', async () => {
    const owner = ticket(unique('cust'), 'Hello, I have a question about my account.');
    assert.equal((await post(owner)).status, 202);
    await assertRefusedForStranger(owner.ticketId);
    await assertRefusedForStranger(owner.ticketId, 'ticket.closed');
    const settled = await waitUntilSettled(ctx.tw.client, `investigation-${owner.ticketId}`);
    assert.equal(settled.customerId, owner.customerId, "the investigation is still the owner's");
  });

  test('on a ticket waiting for a refund approval', async () => {
    const owner = example('dana-5102');
    assert.equal((await post(owner)).status, 202);
    const paused = await waitUntilSettled(ctx.tw.client, `investigation-${owner.ticketId}`, { timeoutMs: 240_000 });
    assert.equal(paused.status, 'awaiting_approval');
    await assertRefusedForStranger(owner.ticketId);
  });

  test('on a closed ticket, where it would otherwise start a run of its own', async () => {
    const owner = ticket(unique('cust'), 'Hello, I have a question about my account.');
    const workflowId = `investigation-${owner.ticketId}`;
    await post(owner);
    await waitUntilSettled(ctx.tw.client, workflowId);
    assert.equal((await post({ ...owner, type: 'ticket.closed', eventId: unique('evt'), message: '' })).status, 202);
    await ctx.tw.client.workflow.getHandle(workflowId).result();
    await assertRefusedForStranger(owner.ticketId);
    assert.equal((await ctx.tw.client.workflow.getHandle(workflowId).describe()).status.name, 'COMPLETED');
  });

  test('and by the CLI, with exit code 2 and the conflict named', async () => {
    const owner = ticket(unique('cust'), 'Hello, I have a question about my account.');
    await post(owner);
    const stranger = ticket(unique('cust_mallory'), 'Mine now.', { ticketId: owner.ticketId });
    const file = join(mkdtempSync(join(tmpdir(), 'casework-gate-')), 'stranger.json');
    writeFileSync(file, JSON.stringify(stranger));
    const r = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const env = { ...process.env, TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: ctx.tw.taskQueue, DATABASE_URL: ctx.db.url };
      const child = spawn(resolve(__dirname, '../bin/casework'), ['ticket', file], { env, timeout: 60_000 });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => done({ code, stderr }));
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`error: ticket ${owner.ticketId} belongs to another customer`));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.equal((await messageSignals(`investigation-${owner.ticketId}`)).length, 1);
  });
});

describe('events are deduplicated for good', () => {
  test('a resent event after the investigation closed answers as delivered and starts nothing; the owner reopening starts a new run', async () => {
    const owner = ticket(unique('cust'), 'Hello, I have a question about my account.');
    const workflowId = `investigation-${owner.ticketId}`;
    await post(owner);
    await waitUntilSettled(ctx.tw.client, workflowId);
    await post({ ...owner, type: 'ticket.closed', eventId: unique('evt'), message: '' });
    await ctx.tw.client.workflow.getHandle(workflowId).result();
    const closed = await ctx.tw.client.workflow.getHandle(workflowId).describe();

    const resent = await post(owner);
    assert.deepEqual(resent, { status: 202, body: { workflowId, eventId: owner.eventId } }, 'answered as its first delivery was');
    const still = await ctx.tw.client.workflow.getHandle(workflowId).describe();
    assert.deepEqual({ runId: still.runId, status: still.status.name }, { runId: closed.runId, status: 'COMPLETED' }, 'no second investigation');

    const reopened = ticket(owner.customerId, 'Sorry, one more question about the same thing.', { ticketId: owner.ticketId, type: 'ticket.message' });
    assert.equal((await post(reopened)).status, 202);
    const next = await ctx.tw.client.workflow.getHandle(workflowId).describe();
    assert.notEqual(next.runId, closed.runId, 'the owner reopening starts a new run');
    const status = await waitUntilSettled(ctx.tw.client, workflowId);
    assert.equal(status.customerId, owner.customerId);
  });

  test('the same event id with a different body, or on another ticket, is 409 and reaches nothing', async () => {
    const owner = ticket(unique('cust'), 'Hello, I have a question about my account.');
    const workflowId = `investigation-${owner.ticketId}`;
    await post(owner);
    await waitUntilSettled(ctx.tw.client, workflowId);
    const before = await refusedCount('event_reused');
    const changed = await post({ ...owner, message: 'Actually, something else entirely.' });
    assert.equal(changed.status, 409);
    assert.match(changed.body.error, new RegExp(`event id ${owner.eventId} was already used with a different body`));
    const elsewhere = ticket(owner.customerId, 'Hello, I have a question about my account.', { eventId: owner.eventId });
    const moved = await post(elsewhere);
    assert.equal(moved.status, 409);
    assert.match(moved.body.error, /already used with a different body \(on another ticket\)/);
    await assert.rejects(ctx.tw.client.workflow.getHandle(`investigation-${elsewhere.ticketId}`).describe(), /not found/i, 'no run on the other ticket');
    assert.deepEqual((await messageSignals(workflowId)).length, 1);
    assert.equal(await refusedCount('event_reused'), before + 2);
  });

  test('an event recorded but never delivered (Temporal was down) is delivered when it is sent again', async () => {
    const event = ticket(unique('cust'), 'Hello, I have a question about my account.');
    // The first attempt got as far as the gate and no further.
    assert.equal(await admitEvent(ctx.db.app, event), 'deliver');
    assert.equal(await admitEvent(ctx.db.app, event), 'redeliver');
    assert.equal((await post(event)).status, 202);
    assert.equal(await admitEvent(ctx.db.app, event), 'duplicate');
    await assert.rejects(admitEvent(ctx.db.app, { ...event, customerId: unique('cust') }), (e: unknown) => e instanceof EventRefusedError && e.reason === 'ticket_owner');
    const status = await waitUntilSettled(ctx.tw.client, `investigation-${event.ticketId}`);
    assert.equal(status.customerId, event.customerId);
  });

  test('an event Temporal took but the gate never marked delivered (Postgres went away between) is not signalled again when it is resent', async () => {
    const event = ticket(unique('cust'), 'Hello, I have a question about my account.');
    const workflowId = `investigation-${event.ticketId}`;
    assert.equal((await post(event)).status, 202);
    // As if the mark after the signal had failed: the desk's retry finds it admitted, unmarked.
    await ctx.db.admin.query('UPDATE ticket_events SET delivered_at = NULL WHERE event_id = $1', [event.eventId]);
    const resent = await post(event);
    assert.deepEqual(resent, { status: 202, body: { workflowId, eventId: event.eventId } }, 'answered as its first delivery was');
    assert.equal((await messageSignals(workflowId)).length, 1, 'the workflow received the message once');
    assert.equal(await admitEvent(ctx.db.app, event), 'duplicate', 'the retry marked it delivered');
    await waitUntilSettled(ctx.tw.client, workflowId);
  });

  test('two first events racing for one ticket agree on a single owner', async () => {
    const ticketId = unique('T');
    const [a, b] = [ticket(unique('cust'), 'Hello there, help please.', { ticketId }), ticket(unique('cust'), 'Hello there, help please.', { ticketId })];
    const outcomes = await Promise.allSettled([admitEvent(ctx.db.app, a), admitEvent(ctx.db.app, b)]);
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    assert.equal(outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof EventRefusedError).length, 1);
  });
});
