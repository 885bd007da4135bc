import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createConnection, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readStatus, waitUntilSettled } from '../src/client/investigations';
import type { Config } from '../src/config';
import type { Database } from '../src/db/pool';
import { MAX_MESSAGE_CHARS } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import type { RequestLog } from '../src/server/app';
import { ApiKeyConfigError, createAuthenticator, parseApiKeys } from '../src/server/auth';
import { MAX_BODY_BYTES } from '../src/server/http';
import { serveCommand } from '../src/main/commands/serve';
import { lazyClient, startServer, type RunningServer } from '../src/server/start';
import { openTestDatabase, unique } from './support/db';
import { example, ticket } from './support/investigate';
import { startTestWorker, type TestWorker } from './support/temporal';

// The ticket-event endpoint over real HTTP, against the suite's Temporal dev server, a real
// worker with the offline model, and real Postgres.

const TRUSTED = 'tk_trusted_0123456789abcdef';
const DANA = 'ck_dana_0123456789abcdef';
const OTHER = 'ck_other_0123456789abcdef';
const CONSOLE = 'ak_console_0123456789abcdef';
const LEAD = 'ak_lead_0123456789abcdef';

let db: Database;
let tw: TestWorker;
let config: Config;
let server: RunningServer;
const logs: RequestLog[] = [];

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

async function call(base: string, method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const res = await fetch(base + path, { method, headers, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}
const http = (method: string, path: string, options: { key?: string; body?: unknown } = {}) => call(server.url, method, path, options);

/** Waits until the workflow has processed `count` customer messages' signals (a workflow task completed after the last). */
async function signalsProcessed(workflowId: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = (await tw.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const signals = events.map((e, i) => (e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage' ? i : -1)).filter((i) => i >= 0);
    const last = signals[signals.length - 1] ?? Infinity;
    if (signals.length >= count && events.slice(last).some((e) => e.workflowTaskCompletedEventAttributes)) return;
    if (Date.now() > deadline) throw new Error(`${workflowId} did not process ${count} customer messages (saw ${signals.length})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A TCP proxy in front of the dev server that can be taken down and brought back on the same port. */
function temporalProxy(target: string) {
  const [host, port] = target.split(':');
  let listener: TcpServer | undefined;
  let ownPort = 0;
  const sockets = new Set<Socket>();
  return {
    get port() {
      return ownPort;
    },
    async up(listenOn = ownPort) {
      listener = createTcpServer((client) => {
        const upstream = createConnection({ host, port: Number(port) });
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', end).on('close', end);
        upstream.on('error', end).on('close', end);
      });
      await new Promise<void>((r) => listener!.listen(listenOn, '127.0.0.1', r));
      ownPort = (listener.address() as { port: number }).port;
    },
    async down() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      await new Promise((r) => (listener ? listener.close(r) : r(undefined)));
      listener = undefined;
    },
  };
}

before(async () => {
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app });
  config = {
    ...tw.config,
    CASEWORK_API_KEYS: [`${TRUSTED}:*`, `${DANA}:cust_dana`, `${OTHER}:cust_other`, `${CONSOLE}:approver:*`, `${LEAD}:approver:support-lead`].join(','),
  };
  server = await startServer({ client: tw.client, pool: db.app, config, log: (e) => logs.push(e) }, 0);
});
after(async () => {
  await server?.close();
  await tw?.stop();
  await db?.close();
});

describe('POST /events', () => {
  test('a ticket.created event answers 202 with the workflow id and starts the investigation', async () => {
    const event = ticket(unique('cust'), 'Hello, I have a question about my account.');
    const res = await http('POST', '/events', { key: TRUSTED, body: event });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { workflowId: `investigation-${event.ticketId}`, eventId: event.eventId });
    const described = await tw.client.workflow.getHandle(res.body.workflowId).describe();
    assert.equal(described.taskQueue, tw.taskQueue);
    const status = await waitUntilSettled(tw.client, res.body.workflowId);
    assert.equal(status.customerId, event.customerId);
    assert.ok(status.step >= 1);
  });

  test('a ticket.message reaches the same workflow, and a repeated eventId answers the same and never reaches it again', async () => {
    const customer = unique('cust');
    const created = ticket(customer, 'Hi there, I need some help with my account please.');
    const first = await http('POST', '/events', { key: TRUSTED, body: created });
    const settled = await waitUntilSettled(tw.client, first.body.workflowId);

    const message = { ...created, type: 'ticket.message', eventId: unique('evt'), message: 'Any news on this?' };
    const second = await http('POST', '/events', { key: TRUSTED, body: message });
    assert.equal(second.status, 202);
    assert.equal(second.body.workflowId, first.body.workflowId, 'signal-with-start reaches the running investigation');
    const followed = await waitUntilSettled(tw.client, first.body.workflowId, { afterStep: settled.step });
    assert.ok(followed.step > settled.step, 'the follow-up was investigated');
    assert.ok(followed.transcriptMessages > settled.transcriptMessages);

    const repeated = await http('POST', '/events', { key: TRUSTED, body: message });
    assert.equal(repeated.status, 202);
    assert.deepEqual(repeated.body, second.body, 'the same answer as the first delivery');
    // The gate answered it from Postgres: no third signal was sent.
    await signalsProcessed(first.body.workflowId, 2);
    const history = (await tw.client.workflow.getHandle(first.body.workflowId).fetchHistory()).events ?? [];
    assert.equal(history.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage').length, 2);
    const after = await readStatus(tw.client, first.body.workflowId);
    assert.equal(after.step, followed.step, 'a repeated eventId changes nothing');
    assert.equal(after.transcriptMessages, followed.transcriptMessages);
  });

  test('a key that speaks for one customer may leave customerId out: it comes from the credentials', async () => {
    const { customerId: _ignored, ...event } = ticket('cust_dana', 'Hello, a quick question about my account.');
    const res = await http('POST', '/events', { key: DANA, body: event });
    assert.equal(res.status, 202);
    const status = await waitUntilSettled(tw.client, res.body.workflowId);
    assert.equal(status.customerId, 'cust_dana');
  });

  test('bad JSON, a missing field and an oversized message are 400s naming the problem; an oversized body is 413', async () => {
    const badJson = await http('POST', '/events', { key: TRUSTED, body: '{"eventId": "e1", ' });
    assert.equal(badJson.status, 400);
    assert.match(badJson.body.error, /not valid JSON/);

    const { ticketId: _t, ...noTicket } = ticket('cust_dana', 'hello');
    const missing = await http('POST', '/events', { key: TRUSTED, body: noTicket });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /ticketId/);
    assert.ok(
      missing.body.issues.some((i: string) => i.startsWith('ticketId:')),
      JSON.stringify(missing.body),
    );

    const long = await http('POST', '/events', { key: TRUSTED, body: { ...ticket('cust_dana', 'x'), message: 'x'.repeat(MAX_MESSAGE_CHARS + 1) } });
    assert.equal(long.status, 400);
    assert.match(long.body.error, new RegExp(`message: at most ${MAX_MESSAGE_CHARS} characters`));

    const huge = await http('POST', '/events', { key: TRUSTED, body: { ...ticket('cust_dana', 'x'), message: 'x'.repeat(MAX_BODY_BYTES) } });
    assert.equal(huge.status, 413);
    assert.match(huge.body.error, /larger than \d+ bytes/);

    const array = await http('POST', '/events', { key: TRUSTED, body: [] });
    assert.equal(array.status, 400);
    assert.match(array.body.error, /JSON object/);
  });

  test('no key or an unknown key is 401; a customerId the key may not speak for is 403 and starts nothing', async () => {
    const event = ticket('cust_dana', 'hello');
    const none = await http('POST', '/events', { body: event });
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /Bearer/);
    assert.match(none.body.error, /Authorization: Bearer/);
    assert.equal((await http('POST', '/events', { key: 'ck_dana_0123456789abcdeX', body: event })).status, 401);

    const mismatch = await http('POST', '/events', { key: OTHER, body: event });
    assert.equal(mismatch.status, 403);
    assert.equal(mismatch.body.error, 'these credentials may not send events for customer cust_dana');
    await assert.rejects(tw.client.workflow.getHandle(`investigation-${event.ticketId}`).describe(), /not found/i);
  });
});

describe('ticket.closed', () => {
  test('closes a running investigation, and is 404 for a ticket with no investigation', async () => {
    const created = ticket(unique('cust'), 'Hello, I have a question about my account.');
    const { body } = await http('POST', '/events', { key: TRUSTED, body: created });
    await waitUntilSettled(tw.client, body.workflowId);
    const close = { ...created, type: 'ticket.closed', eventId: unique('evt'), message: '' };
    const closed = await http('POST', '/events', { key: TRUSTED, body: close });
    assert.deepEqual({ status: closed.status, body: closed.body }, { status: 202, body: { workflowId: body.workflowId, eventId: close.eventId } });
    const status = await waitUntilSettled(tw.client, body.workflowId, { afterStep: Infinity });
    assert.equal(status.status, 'closed');

    const orphan = await http('POST', '/events', { key: TRUSTED, body: { ...close, ticketId: unique('T'), eventId: unique('evt') } });
    assert.equal(orphan.status, 404);
    assert.match(orphan.body.error, /no investigation investigation-T-.* is running/);
  });
});

describe('GET /investigations/:id', () => {
  test("answers the status query; another customer's key and an unknown id get 404", async () => {
    const event = ticket('cust_dana', 'Hello, can you help me with my account?');
    const { body } = await http('POST', '/events', { key: DANA, body: event });
    await waitUntilSettled(tw.client, body.workflowId);
    const res = await http('GET', `/investigations/${body.workflowId}`, { key: DANA });
    assert.equal(res.status, 200);
    const status = res.body as InvestigationStatus;
    assert.equal(status.workflowId, body.workflowId);
    assert.equal(status.customerId, 'cust_dana');
    assert.equal(status.ticketId, event.ticketId);
    assert.ok(['waiting_for_customer', 'awaiting_approval', 'closed', 'investigating'].includes(status.status));
    assert.equal((await http('GET', `/investigations/${event.ticketId}`, { key: TRUSTED })).body.workflowId, body.workflowId, 'a ticket id works too');

    const foreign = await http('GET', `/investigations/${body.workflowId}`, { key: OTHER });
    assert.deepEqual({ status: foreign.status, body: foreign.body }, { status: 404, body: { error: `no investigation ${body.workflowId}` } });
    const unknown = await http('GET', '/investigations/investigation-no-such-ticket', { key: TRUSTED });
    assert.deepEqual({ status: unknown.status, body: unknown.body }, { status: 404, body: { error: 'no investigation investigation-no-such-ticket' } });
    assert.equal((await http('GET', `/investigations/${body.workflowId}`)).status, 401);
  });
});

describe('approvals over HTTP', () => {
  test('a pending refund is visible; a refused decision says why; an approver key approves and the refund is issued once', async () => {
    // Marco's double charge: the offline investigator asks to refund the duplicate payment.
    const event = example('double-charge');
    const started = await http('POST', '/events', { key: TRUSTED, body: event });
    assert.equal(started.status, 202);
    const workflowId = started.body.workflowId as string;
    const paused = await waitUntilSettled(tw.client, workflowId, { timeoutMs: 240_000 });
    assert.equal(paused.status, 'awaiting_approval');

    const seen = await http('GET', `/investigations/${workflowId}`, { key: LEAD });
    assert.equal(seen.status, 200, 'approvers may read what waits for them');
    const pending = seen.body.pendingApproval;
    assert.equal(pending.order_id, '5230');
    assert.ok(pending.amount_cents > 0);
    assert.ok(pending.reason);
    assert.deepEqual(
      pending.approvers.map((a: { name: string }) => a.name),
      ['support-lead', 'duty-manager'],
    );

    const path = `/investigations/${workflowId}/approve`;
    const request = { requestId: pending.request_id };
    const notApprover = await http('POST', path, { key: TRUSTED, body: { ...request, approver: 'support-lead' } });
    assert.equal(notApprover.status, 403, 'the key that feeds tickets in cannot pay money out');
    assert.match(notApprover.body.error, /may not decide refunds/);
    const asSomeoneElse = await http('POST', path, { key: LEAD, body: { ...request, approver: 'duty-manager' } });
    assert.deepEqual({ status: asSomeoneElse.status, body: asSomeoneElse.body }, { status: 403, body: { error: 'these credentials may not decide refunds as duty-manager' } });
    const mallory = await http('POST', path, { key: CONSOLE, body: { ...request, approver: 'mallory' } });
    assert.equal(mallory.status, 422);
    assert.match(mallory.body.error, /mallory may not decide refunds; allowed: support-lead, duty-manager/);
    const unknownRequest = await http('POST', path, { key: CONSOLE, body: { requestId: 'req-nope', approver: 'support-lead' } });
    assert.equal(unknownRequest.status, 422);
    assert.match(unknownRequest.body.error, /unknown refund request req-nope/);
    const noRequest = await http('POST', path, { key: LEAD, body: {} });
    assert.equal(noRequest.status, 400);
    assert.match(noRequest.body.error, /requestId/);

    const approved = await http('POST', path, { key: LEAD, body: { ...request, reason: 'two captures of the same amount minutes apart' } });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.deepEqual(approved.body, { workflowId, requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await waitUntilSettled(tw.client, workflowId, { afterStep: paused.step, timeoutMs: 240_000 });
    assert.equal(done.refunds.length, 1, 'the approved refund is paid');
    const refunds = await db.admin.query('SELECT count(*)::int AS n FROM refunds WHERE request_id = $1', [pending.request_id]);
    assert.equal(refunds.rows[0].n, 1, `exactly one refund for the approval; the reply was: ${done.lastReply}`);

    const again = await http('POST', `/investigations/${workflowId}/deny`, { key: LEAD, body: { ...request, reason: 'changed my mind' } });
    assert.equal(again.status, 409);
    assert.match(again.body.error, /already been decided/);
    const history = (await tw.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    assert.equal(history.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length, 1, 'refused decisions never reach history');

    const customerKey = await http('POST', path, { key: DANA, body: { ...request, approver: 'support-lead' } });
    assert.equal(customerKey.status, 403);
    const nowhere = await http('POST', '/investigations/investigation-no-such-ticket/deny', { key: LEAD, body: request });
    assert.equal(nowhere.status, 404);
  });
});

describe('when Temporal is unreachable', () => {
  test('events get 503 with Retry-After and readyz says so; once Temporal is back the same event is accepted', async () => {
    const proxy = temporalProxy(tw.config.TEMPORAL_ADDRESS);
    await proxy.up(0);
    await proxy.down(); // keeps the port number; nothing listens there now
    const cutConfig = { ...config, TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` };
    const temporal = lazyClient(cutConfig, { pool: db.app });
    const cut = await startServer({ client: temporal.client, pool: db.app, config: cutConfig, log: () => undefined, temporalTimeoutMs: 1_500 }, 0);
    try {
      const event = ticket(unique('cust'), 'Hello, is anyone there? I need help with my account.');
      const refused = await call(cut.url, 'POST', '/events', { key: TRUSTED, body: event });
      assert.equal(refused.status, 503);
      assert.equal(refused.body.retryable, true);
      assert.match(refused.body.error, /Temporal is unreachable/);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      const ready = await call(cut.url, 'GET', '/readyz');
      assert.deepEqual({ status: ready.status, retryable: ready.body.retryable }, { status: 503, retryable: true });
      assert.match(ready.body.error, new RegExp(`Temporal at 127.0.0.1:${proxy.port} is unreachable`));
      assert.equal((await call(cut.url, 'GET', '/healthz')).status, 200, 'alive all the same: a restart would not bring Temporal back');

      await proxy.up();
      // The caller retries as told; the first answer after Temporal returns is the 202.
      let res: Answer = refused;
      const deadline = Date.now() + 60_000;
      while (res.status === 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        res = await call(cut.url, 'POST', '/events', { key: TRUSTED, body: event });
      }
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.workflowId, `investigation-${event.ticketId}`);
      const status = await waitUntilSettled(tw.client, res.body.workflowId);
      assert.equal(status.customerId, event.customerId);
      assert.equal((await call(cut.url, 'GET', '/readyz')).status, 200);
    } finally {
      await cut.close();
      await temporal.close();
      await proxy.down();
    }
  });
});

describe('the rest of the endpoint', () => {
  test('healthz and readyz answer 200 without credentials while Temporal answers', async () => {
    assert.equal((await http('GET', '/healthz')).status, 200);
    const res = await http('GET', '/readyz');
    assert.equal(res.status, 200);
    assert.equal(res.body.temporal, 'ok');
  });

  test('memory routes are mounted behind the same credentials', async () => {
    assert.equal((await http('GET', '/customers/cust_dana/memory', { key: DANA })).status, 200);
    assert.equal((await http('GET', '/customers/cust_dana/memory', { key: TRUSTED })).status, 200);
    const foreign = await http('GET', '/customers/cust_dana/memory', { key: OTHER });
    assert.deepEqual({ status: foreign.status, body: foreign.body }, { status: 403, body: { error: 'these credentials may not access the memory of customer cust_dana' } });
    assert.equal((await http('GET', '/customers/cust_dana/memory')).status, 401);
  });

  test('unknown routes are 404 and wrong methods 405, as JSON', async () => {
    assert.equal((await http('GET', '/nope', { key: TRUSTED })).status, 404);
    const wrong = await http('GET', '/events', { key: TRUSTED });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
  });

  test('every request is logged as one JSON line with method, path, status, ms and workflow id, never the message', async () => {
    const secret = `distinctive-words-${unique('m')}`;
    const event = ticket(unique('cust'), `Hello, my order question: ${secret}`);
    await http('POST', '/events', { key: TRUSTED, body: event });
    const line = logs.find((l) => l.workflowId === `investigation-${event.ticketId}`);
    assert.ok(line, 'the request was logged with its workflow id');
    assert.deepEqual(
      { method: line.method, path: line.path, status: line.status, customerId: line.customerId, principal: line.principal },
      { method: 'POST', path: '/events', status: 202, customerId: event.customerId, principal: line.principal },
    );
    assert.match(line.principal!, /^key:[0-9a-f]{8}$/);
    assert.equal(typeof line.ms, 'number');
    assert.ok(!JSON.stringify(logs).includes(secret), 'message bodies never reach the log');
    assert.ok(!JSON.stringify(logs).includes(TRUSTED), 'keys never reach the log');
  });
});

describe('credentials configuration', () => {
  test('CASEWORK_API_KEYS entries map keys to customers, any customer or approvers, and bad entries are named by position', () => {
    const [trusted, scoped, approver] = parseApiKeys(`${TRUSTED}:*, ${DANA}:cust_dana|cust_dana_eu ,${LEAD}:approver:support-lead`).map((e) => e.principal);
    assert.ok(trusted && scoped && approver, 'three keys parsed');
    assert.equal(trusted.anyCustomer, true);
    assert.deepEqual([...scoped.customers], ['cust_dana', 'cust_dana_eu']);
    assert.deepEqual([...approver.approvers], ['support-lead']);
    assert.throws(() => parseApiKeys('short:*'), /entry 1: the key is 5 characters; use at least 16/);
    assert.throws(() => parseApiKeys(`${TRUSTED}:*,${DANA}`), /entry 2 is not <key>:<grant>/);
    assert.throws(() => parseApiKeys(`${TRUSTED}:`), /entry 1 grants nothing/);
    assert.throws(() => parseApiKeys(`${TRUSTED}:*,${TRUSTED}:cust_a`), /entry 2 repeats an earlier key/);
    assert.throws(() => parseApiKeys(`${TRUSTED}:approver:`), /"approver:" needs a name/);
  });

  test('with no keys the endpoint refuses to start unless open local mode is asked for', async () => {
    assert.throws(
      () => createAuthenticator({}),
      (e: Error) => e instanceof ApiKeyConfigError && /CASEWORK_API_KEYS/.test(e.message) && /CASEWORK_HTTP_OPEN=true/.test(e.message),
    );
    const lines: string[] = [];
    assert.equal(await serveCommand([], { ...config, CASEWORK_API_KEYS: undefined }, (l) => lines.push(l)), 2);
    assert.match(lines.join('\n'), /casework serve will not start: the ticket-event endpoint has no API keys/);
    const open = createAuthenticator({ open: true });
    assert.equal(open.mode, 'open');
    assert.equal(open.authenticate({ headers: {} } as never)?.anyCustomer, true);
  });

  test('`casework serve` starts, answers, and drains and exits 0 on SIGTERM', async () => {
    const root = resolve(__dirname, '..');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: root,
      env: { ...process.env, TEMPORAL_TASK_QUEUE: tw.taskQueue, CASEWORK_API_KEYS: `${TRUSTED}:*`, CASEWORK_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${stdout}${stderr}`)), 60_000);
      child.stdout.on('data', (d) => {
        stdout += d;
        const listening = stdout
          .split('\n')
          .map((l) => {
            try {
              return JSON.parse(l);
            } catch {
              return undefined;
            }
          })
          .find((l) => l?.msg === 'casework serve listening');
        if (listening) {
          clearTimeout(timer);
          resolveUrl(listening.url);
        }
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stdout}${stderr}`)));
    });
    try {
      assert.equal((await call(url, 'GET', '/healthz')).status, 200);
      assert.equal((await call(url, 'POST', '/events', { body: ticket('cust_dana', 'hi') })).status, 401);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    assert.match(stdout, /"msg":"casework serve stopped"/);
    assert.match(stdout, /"path":"\/healthz","status":200/);
  });
});
