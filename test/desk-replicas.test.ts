import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import { startDevServer, type DevServer } from '../src/dev/env/dev-server';
import { signIntercom } from '../src/desk/intercom-inbound';
import { startInProcessWorker } from '../src/worker';
import { openTestDatabase, unique } from './support/db';
import { scriptedModel, answer, type ScriptedModel } from './support/scripted-model';
import { settle } from './support/scripted-run';
import type { TestWorker } from './support/temporal';

// Desk deliveries at the seams a real desk hits: two `casework serve` processes on one Postgres
// behind the desk, a Temporal of this file's own that goes down and comes back, and a replica
// restarted between two deliveries of the same webhook. Whatever replica a delivery lands on,
// and whenever, it reaches its investigation exactly once and is never answered with a 4xx.

const BIN = resolve(__dirname, '../bin/casework');
const PORT = Number(process.env.CASEWORK_TEST_TEMPORAL_PORT ?? 7243) + 31;
const UI_PORT = Number(process.env.CASEWORK_TEST_UI_PORT ?? 8243) + 31;
const INTERCOM_SECRET = 'intercom-secret-for-replicas';
const MAPPED = 8447388090494;
const CUSTOMER = 'cust_dana';
const INTERCOM_V1_CONTACT = '5c9553cb27e377f24eed49f7';

let temporal: DevServer;
const dbFile = join(mkdtempSync(join(tmpdir(), 'casework-replicas-')), 'temporal.db');
let db: Database;
let standin: DeskStandin;
let model: ScriptedModel;
let tw: TestWorker;
const taskQueue = unique('casework-replicas');
const replicas: { a?: Replica; b?: Replica } = {};

/** One `casework serve` process. */
interface Replica {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function serverEnv(): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: `127.0.0.1:${PORT}`,
    TEMPORAL_TASK_QUEUE: taskQueue,
    CASEWORK_HTTP_OPEN: 'true',
    CASEWORK_LOG_LEVEL: 'warn',
    CASEWORK_DESKS: 'zendesk,intercom',
    CASEWORK_DESK_CUSTOMERS: `zendesk:${MAPPED}=${CUSTOMER},intercom:${INTERCOM_V1_CONTACT}=${CUSTOMER}`,
    CASEWORK_ZENDESK_BASE_URL: standin.url,
    CASEWORK_ZENDESK_EMAIL: standin.agent.email,
    CASEWORK_ZENDESK_API_TOKEN: standin.agent.apiToken,
    CASEWORK_ZENDESK_WEBHOOK_SECRET: standin.webhookSecret,
    CASEWORK_INTERCOM_CLIENT_SECRET: INTERCOM_SECRET,
    CASEWORK_INTERCOM_BASE_URL: 'http://127.0.0.1:9',
    CASEWORK_INTERCOM_ACCESS_TOKEN: 'unused',
    CASEWORK_INTERCOM_ADMIN_ID: '1',
    CASEWORK_CONNECT_TIMEOUT_MS: '3000',
  };
}

async function startReplica(port: number): Promise<Replica> {
  const child = spawn(BIN, ['serve', '--port', String(port)], { env: serverEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`casework serve exited with ${child.exitCode}: ${stderr}`);
    const up = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`casework serve on ${port} did not answer: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGKILL');
      }),
  };
}

async function startWorker(): Promise<TestWorker> {
  const config = loadConfig({ ...process.env, TEMPORAL_ADDRESS: `127.0.0.1:${PORT}`, TEMPORAL_TASK_QUEUE: taskQueue, CASEWORK_DESKS: '' });
  const started = await startInProcessWorker({ config, pool: db.app, model, workflowBundlePath: process.env.CASEWORK_WORKFLOW_BUNDLE });
  return { ...started, config, model, taskQueue, pool: db.app };
}

const startTemporal = () => startDevServer({ port: PORT, uiPort: UI_PORT, dbFile, headless: true });

/** The port of a replica: two free ports near the dev server's, fixed so a restarted replica keeps its address. */
const REPLICA_PORTS = [PORT + 101, PORT + 102] as const;

before(async () => {
  temporal = await startTemporal();
  db = await openTestDatabase({ seed: true });
  standin = await startDeskStandin({ firstTicketId: 300_000 + Math.floor(Math.random() * 600_000) * 10 });
  model = scriptedModel();
  tw = await startWorker();
  [replicas.a, replicas.b] = await Promise.all([startReplica(REPLICA_PORTS[0]), startReplica(REPLICA_PORTS[1])]);
});

after(async () => {
  await replicas.a?.stop();
  await replicas.b?.stop();
  await tw?.stop();
  await standin?.close();
  await db?.close();
  await temporal?.stop();
});

async function post(replica: Replica, desk: string, body: Buffer, headers: Record<string, string>) {
  const res = await fetch(`${replica.url}/webhooks/${desk}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
}

/** How many customer messages the investigation received, from its history. */
async function messagesReceived(workflowId: string): Promise<number> {
  const { events } = await tw.client.workflow.getHandle(workflowId).fetchHistory();
  return (events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage').length;
}

const exists = (workflowId: string) =>
  tw.client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      () => false,
    );

function casework(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(BIN, args, { env: serverEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('desk deliveries across two casework serve replicas on one Postgres', () => {
  it('a delivery refused with 503 while Temporal is down is accepted when retried byte for byte, and a duplicate on the other replica and after a restart', async () => {
    const { ticketId, commentId } = standin.createTicket({ requesterId: MAPPED, subject: 'Order', body: 'My parcel for order 4471 never came.' });
    const workflowId = `investigation-zendesk-${ticketId}`;
    model.script(workflowId, [answer('I am looking into order 4471 now.')]);
    const { body, headers } = standin.commentWebhook(ticketId, commentId);

    await tw.stop();
    await temporal.stop();
    const down = await post(replicas.a!, 'zendesk', body, headers);
    assert.equal(down.status, 503, JSON.stringify(down.body));
    assert.ok(Number(down.retryAfter) > 0, 'Retry-After tells the desk when to come back');

    temporal = await startTemporal();
    tw = await startWorker();
    // As the desk does: the same bytes again after Retry-After, while the replica's connection to
    // the restarted Temporal comes back (each of these is another 503, never a 4xx).
    let retried = await post(replicas.a!, 'zendesk', body, headers);
    for (let attempt = 0; retried.status === 503 && attempt < 30; attempt++) {
      await new Promise((r) => setTimeout(r, 1_000));
      retried = await post(replicas.a!, 'zendesk', body, headers);
    }
    assert.equal(retried.status, 202, `the byte-identical retry is accepted: ${JSON.stringify(retried.body)}`);
    const elsewhere = await post(replicas.b!, 'zendesk', body, headers);
    assert.deepEqual([elsewhere.status, elsewhere.body.duplicate], [200, true], 'the other replica knows it from Postgres');

    await replicas.a!.stop();
    replicas.a = await startReplica(REPLICA_PORTS[0]);
    const afterRestart = await post(replicas.a, 'zendesk', body, headers);
    assert.deepEqual([afterRestart.status, afterRestart.body.duplicate], [200, true], 'a restarted replica knows it from Postgres');

    await settle(tw, model, workflowId);
    assert.equal(await messagesReceived(workflowId), 1, 'the message reached the investigation once');
  });

  it('an unmapped requester is parked (2xx, never 422) on either replica, and delivered once when a person maps them', async () => {
    const stranger = 7_000_000 + Math.floor(Math.random() * 1_000_000);
    const { ticketId, commentId } = standin.createTicket({ requesterId: stranger, subject: 'Refund', body: 'I was charged twice for order 5230.' });
    const workflowId = `investigation-zendesk-${ticketId}`;
    const { body, headers } = standin.commentWebhook(ticketId, commentId);

    const parked = await post(replicas.b!, 'zendesk', body, headers);
    assert.deepEqual([parked.status, parked.body.parked], [202, 'unmapped_requester']);
    const again = await post(replicas.a!, 'zendesk', body, headers);
    assert.deepEqual([again.status, again.body.duplicate], [200, true]);
    assert.equal(await exists(workflowId), false, 'nothing starts for a requester nobody mapped');

    const listed = await casework(['desk', 'parked', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const waiting = (JSON.parse(listed.stdout) as { eventId: string; requester: string }[]).filter((p) => p.requester === String(stranger));
    assert.deepEqual(
      waiting.map((p) => p.eventId),
      [`zendesk-comment-${commentId}`],
    );
    assert.ok(!listed.stdout.includes('charged twice'), 'the list shows ids, never the words');

    model.script(workflowId, [answer('Let me look at the two charges on order 5230.')]);
    const mapped = await casework(['desk', 'map', '--desk', 'zendesk', '--requester', String(stranger), '--customer', CUSTOMER, '--by', 'Sam Lead']);
    assert.equal(mapped.code, 0, mapped.stderr + mapped.stdout);
    assert.match(mapped.stdout, /delivered 1 parked delivery/);
    const status = await settle(tw, model, workflowId);
    assert.equal(status.customerId, CUSTOMER);
    assert.equal(await messagesReceived(workflowId), 1);

    const late = await post(replicas.b!, 'zendesk', body, headers);
    assert.deepEqual([late.status, late.body.duplicate], [200, true], 'a redelivery after the mapping reaches nothing again');
    const audit = await db.admin.query<{ actor: string; action: string }>('SELECT actor, action FROM desk_delivery_audit WHERE requester = $1 ORDER BY id', [String(stranger)]);
    assert.deepEqual(
      audit.rows.map((r) => [r.action, r.actor]),
      [
        ['mapped', 'Sam Lead'],
        ['delivered', 'Sam Lead'],
      ],
    );
  });

  it('Intercom: the ping is 2xx-ignored; a 1.x notification delivered two hours late reaches its investigation', async () => {
    const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, 'fixtures', 'desk', name), 'utf8')) as Record<string, any>;
    const pingBody = Buffer.from(JSON.stringify(fixture('intercom-ping.json')));
    const ping = await post(replicas.a!, 'intercom', pingBody, { 'x-hub-signature': signIntercom(INTERCOM_SECRET, pingBody) });
    assert.deepEqual([ping.status, typeof ping.body.ignored], [202, 'string']);

    const v1 = fixture('intercom-v1-conversation-replied.json');
    const conversation = String(Date.now());
    v1.data.item.id = conversation;
    v1.data.item.conversation_parts.conversation_parts[0].id = `${conversation}1`;
    v1.created_at = v1.first_sent_at = Math.floor(Date.now() / 1000) - 2 * 3600;
    const body = Buffer.from(JSON.stringify(v1));
    const workflowId = `investigation-intercom-${conversation}`;
    model.script(workflowId, [answer('Happy to help with access.')]);
    const late = await post(replicas.b!, 'intercom', body, { 'x-hub-signature': signIntercom(INTERCOM_SECRET, body) });
    assert.equal(late.status, 202, JSON.stringify(late.body));
    const status = await settle(tw, model, workflowId);
    assert.equal(status.customerId, CUSTOMER);
  });
});
