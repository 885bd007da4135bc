import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config';
import { decideRefund, deliverEvent, readStatus } from '../src/client/investigations';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { openDatabase, type Database } from '../src/db/pool';
import { startFaultProxy, type FaultProxy } from '../src/dev/fault-proxy';
import { investigationId } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { carriedStateQuery } from '../src/workflows/investigation-api';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, json, scriptedModel, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { openTestDatabase } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// An approval accepted (the update answered "approved") while Postgres is away for longer than
// the outage budget must never be lost: the run survives, the customer is told a colleague has
// the case, and once Postgres is back the decision is recorded, the refund paid once, the model
// told, and the hand-over closed by casework itself, with nobody having to resume it. A case
// record that could not be written at close is retried the same way. The worker reaches
// Postgres through a fault proxy the test cuts just before the write.

const skip = !process.env.DATABASE_URL && 'needs a Postgres server (DATABASE_URL) to put a fault proxy in front of';

describe('writes that fail in a Postgres outage longer than the budget', { skip }, () => {
  const model = scriptedModel();
  let db: Database;
  let proxied: Database;
  let proxy: FaultProxy;
  let tw: TestWorker;

  before(async () => {
    db = await openTestDatabase({ seed: true });
    const url = new URL(db.url);
    proxy = await startFaultProxy({ port: 0, target: { host: url.hostname, port: Number(url.port || 5432) } });
    url.port = String(proxy.port);
    proxied = await openDatabase({ ...loadConfig(), DATABASE_URL: url.toString() });
    tw = await startTestWorker({ pool: proxied.app, model });
  });
  after(async () => {
    await proxy?.resume();
    await tw?.stop();
    await proxied?.close();
    await proxy?.close();
    await db?.close();
  });

  async function until(id: string, what: string, ok: (s: InvestigationStatus) => boolean, timeoutMs = 120_000): Promise<InvestigationStatus> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await readStatus(tw.client, id).catch(() => undefined);
      if (status && ok(status)) return status;
      if (model.failures(id).length) throw new Error(model.failures(id).at(-1));
      if (Date.now() > deadline) throw new Error(`${id}: ${what} did not happen; last status ${status?.status}, hand-off ${JSON.stringify(status?.handOff)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  test('an accepted approval is recorded and paid once Postgres is back, the customer told meanwhile, and the case carries on by itself', async () => {
    const event = ticket('cust_dana', 'My order 5102 never arrived.');
    const id = investigationId(event.ticketId);
    model.script(id, [
      calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1200, reason: 'Marked delivered, never received.', kind: 'not_received' })),
      answer('A colleague is reviewing your refund.'),
      answer('Your refund of £12.00 has been issued.'),
    ]);
    const settings = settingsWith({ CASEWORK_OUTAGE_BUDGET_SECONDS: '4' });
    const paused = await deliver(tw, model, event, settings);
    assert.equal(paused.status, 'awaiting_approval');
    const requestId = paused.pendingApproval!.request_id;

    await proxy.cut();
    const outage = new Promise((r) => setTimeout(r, 14_000)).then(() => proxy.resume());
    try {
      // The update is answered by the workflow alone: accepted, although nothing can be written now.
      const accepted = await decideRefund(tw.client, id, { requestId, decision: 'approved', approver: 'support-lead' });
      assert.equal(accepted.decision, 'approved');

      const handed = await until(id, 'the hand-over', (s) => s.status === 'needs_human');
      assert.match(handed.handOff!.reason, new RegExp(`the approved decision on refund ${requestId} could not be recorded.*carries on by itself`));
      assert.equal(handed.lastReply, HOLDING_REPLY, 'the customer is told a colleague has the case');
      const described = await tw.client.workflow.getHandle(id).describe();
      assert.equal(described.status.name, 'RUNNING', 'the run survives the outage');
    } finally {
      await outage;
    }

    const done = await until(id, 'the refund after the outage', (s) => s.status === 'waiting_for_customer' && s.refunds.length > 0);
    assert.equal(done.lastReply, 'Your refund of £12.00 has been issued.');
    assert.equal(done.handOff, null, 'no hand-over left open');
    const { rows: decisions } = await db.admin.query('SELECT decision, approver FROM refund_decisions WHERE request_id = $1', [requestId]);
    assert.deepEqual(decisions, [{ decision: 'approved', approver: 'support-lead' }]);
    const { rows: refunds } = await db.admin.query('SELECT amount_cents, currency, kind FROM refunds WHERE request_id = $1', [requestId]);
    assert.deepEqual(refunds, [{ amount_cents: 1200, currency: 'GBP', kind: 'not_received' }], 'paid exactly once, in the order currency');
    const carried = await tw.client.workflow.getHandle(id).query(carriedStateQuery);
    assert.deepEqual(
      carried.handOffs.map((h) => [h.resolution?.by, h.resolution?.action]),
      [['casework', 'resumed']],
      'handed over once, and closed by casework once the write succeeded',
    );
  });

  test('a case whose record could not be written goes to a person, and closes by itself once Postgres is back', async () => {
    const event = ticket('cust_dana', 'Thanks, that is all for order 5102.');
    const id = investigationId(event.ticketId);
    const notes = { ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: 'Asked about order 5102.' };
    model.script(id, { replies: [answer('Glad to help.')], purposes: { compact: () => json(notes) } });
    const settings = settingsWith({ CASEWORK_OUTAGE_BUDGET_SECONDS: '4' });
    assert.equal((await deliver(tw, model, event, settings)).status, 'waiting_for_customer');

    await proxy.cut();
    const outage = new Promise((r) => setTimeout(r, 14_000)).then(() => proxy.resume());
    try {
      // The close passes the gate on the test's own connection; the worker's Postgres is the one cut.
      await deliverEvent(tw.client, db.app, { ...event, type: 'ticket.closed', eventId: `${event.eventId}-closed`, message: '' }, { taskQueue: tw.taskQueue, settings });
      const handed = await until(id, 'the hand-over', (s) => s.status === 'needs_human');
      assert.match(handed.handOff!.reason, /the case could not be recorded/);
    } finally {
      await outage;
    }
    const closed = await tw.client.workflow.getHandle(id).result();
    assert.equal(closed.status, 'closed', 'nobody had to resume it');
    const { rows } = await db.admin.query('SELECT problem FROM memory_cases WHERE source_run = $1', [id]);
    assert.deepEqual(rows, [{ problem: notes.customer_problem }], 'the case is recorded once');
  });
});
