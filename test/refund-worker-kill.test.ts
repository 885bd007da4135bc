import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decideRefund, deliverAndWait, readStatus } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { mirrorDemoPayments, startStandinPayments } from '../src/dev/demo/stand-in-payments';
import type { StripeStandin } from '../src/dev/stripe-standin';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { example, settingsWith } from './support/investigate';
import { openTestDatabase, unique } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// A real worker kill in the one moment that matters: `casework worker` runs as a child process,
// paying refunds through the Stripe stand-in (Stripe cannot be reached from here). A refund is
// approved; Stripe makes it and holds its answer; the worker is SIGKILLed right then, so the
// activity never learns what Stripe did. A new worker takes the retried activity (after its
// start-to-close timeout), sends the same idempotency key, gets Stripe's first refund back, and
// the case completes: one refund at Stripe, the approval paid once in the trail and the ledger.
// The model is the offline investigator (a deterministic test double; the real model cannot run here).

const ROOT = resolve(__dirname, '..');
const taskQueue = unique('casework-kill');
let db: Database;
let stripe: StripeStandin;
let stripeEnv: Record<string, string>;
let client: TestWorker;
const children: ChildProcess[] = [];

before(async () => {
  db = await openTestDatabase({ seed: true });
  const payments = await startStandinPayments();
  stripe = payments.standin;
  stripeEnv = Object.fromEntries(Object.entries(payments.config).map(([k, v]) => [k, String(v)]));
  await mirrorDemoPayments(db.admin, stripe);
  // Its own worker idles on another queue; the test uses its client.
  client = await startTestWorker({ pool: db.app });
});
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await client?.stop();
  await stripe?.close();
  await db?.close();
});

/** `casework worker` as a child process on the test's queue, resolved once it says it is polling. */
async function startWorker(): Promise<{ child: ChildProcess; output: () => string; exited: Promise<unknown> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...stripeEnv, DATABASE_URL: db.url, TEMPORAL_TASK_QUEUE: taskQueue, CASEWORK_LOG_LEVEL: 'info' };
  delete env.ANTHROPIC_API_KEY;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'worker'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  const exited = new Promise((r) => child.on('exit', r));
  await new Promise<void>((ready, fail) => {
    const hear = (chunk: Buffer) => {
      output += chunk.toString();
      if (/casework worker on task queue/.test(output)) ready();
    };
    child.stdout.on('data', hear);
    child.stderr.on('data', hear);
    void exited.then(() => fail(new Error(`the worker exited before it started:\n${output.slice(-3000)}`)));
  });
  return { child, output: () => output, exited };
}

async function until(id: string, what: string, ok: (s: InvestigationStatus) => boolean, timeoutMs = 150_000): Promise<InvestigationStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await readStatus(client.client, id).catch(() => undefined);
    if (status && ok(status)) return status;
    if (Date.now() > deadline) throw new Error(`${id}: ${what} did not happen; last status ${status?.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a worker killed while Stripe holds the answer to the refund it made', () => {
  test('the new worker sends the same key: one refund at Stripe, paid once in the trail and the ledger, and the case completes', { timeout: 300_000 }, async () => {
    const first = await startWorker();
    const event = example('double-charge');
    const id = investigationId(event.ticketId);
    const asked = await deliverAndWait(client.client, db.app, event, { taskQueue, settings: settingsWith(), timeoutMs: 150_000 });
    assert.equal(asked.status, 'awaiting_approval', 'the investigation asks for the duplicate charge back');
    const request = asked.pendingApproval!;

    const held = new Promise<() => void>((r) => stripe.fault({ kind: 'hold_response', held: r }));
    await decideRefund(client.client, id, { requestId: request.request_id, decision: 'approved', approver: 'support-lead' });
    const release = await held;
    const made = stripe.refunds().filter((r) => r.metadata.order_id === request.order_id);
    assert.equal(made.length, 1, 'Stripe made the refund before the worker heard of it');

    first.child.kill('SIGKILL');
    await first.exited;
    assert.equal(first.child.signalCode, 'SIGKILL');
    release();

    const second = await startWorker();
    const done = await until(id, 'the refund and the reply', (s) => s.refunds.length === 1 && s.status === 'waiting_for_customer');
    second.child.kill('SIGTERM');
    await second.exited;

    const atStripe = stripe.refunds().filter((r) => r.metadata.order_id === request.order_id);
    assert.deepEqual(
      atStripe.map((r) => [r.id, r.amount, r.status]),
      [[made[0]!.id, request.amount_cents, 'succeeded']],
      'one refund at Stripe, the one made before the kill',
    );
    const payouts = await db.admin.query(
      `SELECT o.status, o.provider_refund_id, o.idempotency_key, f.approval_id, f.amount_cents FROM refund_payouts o JOIN refunds f ON f.refund_id = o.refund_id WHERE f.order_id = $1`,
      [request.order_id],
    );
    assert.equal(payouts.rows.length, 1, "one refund in casework's trail");
    const payout = payouts.rows[0] as { status: string; provider_refund_id: string; idempotency_key: string; approval_id: string; amount_cents: number };
    assert.deepEqual([payout.status, payout.provider_refund_id, payout.amount_cents], ['succeeded', made[0]!.id, request.amount_cents]);
    const sent = stripe.requests().filter((r) => r.method === 'POST' && r.idempotencyKey === payout.idempotency_key);
    assert.ok(sent.length >= 2, `the new worker sent the approval's key again (${sent.length} requests)`);
    const ledger = await db.admin.query('SELECT count(*)::int AS n, coalesce(sum(amount_cents), 0)::int AS cents FROM ledger_refunds WHERE order_id = $1', [request.order_id]);
    assert.deepEqual(ledger.rows[0], { n: 1, cents: request.amount_cents }, 'the ledger counts the refund once');
    assert.deepEqual(
      done.refunds.map((r) => [r.approval_id, r.amount_cents]),
      [[payout.approval_id, request.amount_cents]],
    );
    assert.ok(done.lastReply && done.lastReply !== asked.lastReply, 'the customer is told, once the refund is paid');
  });
});
