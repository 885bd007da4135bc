import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DecisionRejectedError, decideRefund, deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { decideRefundSignal } from '../src/workflows/investigation-api';
import { SYSTEM_PROMPT } from '../src/workflows/prompt';
import { example, send, settingsWith, ticket } from './support/investigate';
import { recordingModel, seededWorker } from './support/temporal';

// The Investigation workflow on the real dev server, real Postgres and the offline model.

const model = recordingModel();
const ctx = seededWorker({ model });

async function refundsFor(requestId: string): Promise<number> {
  const { rows } = await ctx.db.admin.query('SELECT count(*)::int AS n FROM refunds WHERE request_id = $1', [requestId]);
  return rows[0].n;
}

describe('a whole investigation', () => {
  test('investigates the dispute, waits for approval, issues the refund once, and replies citing what it found', async () => {
    const event = example('dana-5102');
    const paused = await send(ctx.tw, event);
    assert.equal(paused.status, 'awaiting_approval');
    const pending = paused.pendingApproval!;
    assert.equal(pending.order_id, '5102');
    const called = paused.steps.flatMap((s) => s.tools);
    for (const tool of ['get_order', 'get_tracking_events', 'get_payments', 'get_earlier_tickets', 'lookup_policy', 'request_refund']) {
      assert.ok(called.includes(tool), `expected ${tool} among ${called.join(', ')}`);
    }
    assert.ok(!called.includes('issue_refund'), 'no refund may be issued before approval');
    assert.equal(await refundsFor(pending.request_id), 0);
    const { rows } = await ctx.db.admin.query('SELECT total_cents FROM orders WHERE order_id = $1', ['5102']);
    assert.equal(pending.amount_cents, rows[0].total_cents, 'the request is for the order total');

    const approval = { requestId: pending.request_id, decision: 'approved' as const, approver: 'support-lead' };
    const first = await decideRefund(ctx.tw.client, paused.workflowId, approval);
    // A caller retrying the same decision (say, after a timeout) gets the same answer, not a refusal.
    assert.deepEqual(await decideRefund(ctx.tw.client, paused.workflowId, approval), first);
    const done = await waitUntilSettled(ctx.tw.client, paused.workflowId, { afterStep: paused.step });
    assert.equal(done.status, 'waiting_for_customer');
    assert.equal(done.decisions.length, 1);
    assert.ok(done.steps.some((s) => s.tools.includes('issue_refund')));
    assert.equal(await refundsFor(pending.request_id), 1, 'exactly one refund row for the approval');
    assert.match(done.lastReply!, /5102/);
    assert.match(done.lastReply!, /issued/);
    assert.match(done.lastReply!, /tracking/);
    assert.ok(done.totals.input_tokens + done.totals.cache_read_input_tokens > 0, 'token totals are accounted');
    assert.ok(done.totals.cost_usd > 0);

    // A follow-up continues the same investigation, with the same workflow id.
    const followUp = await send(ctx.tw, { ...event, type: 'ticket.message', eventId: `${event.eventId}-2`, message: 'Thanks! When will I see the money?' });
    assert.equal(followUp.workflowId, done.workflowId);
    assert.ok(followUp.step > done.step);
    assert.match(followUp.lastReply!, /refund/i);

    // The same event delivered twice is seen once: closing the ticket afterwards shows no new step.
    await deliverEvent(ctx.tw.client, ctx.db.app, { ...event, type: 'ticket.message', eventId: `${event.eventId}-2`, message: 'Thanks! When will I see the money?' }, { taskQueue: ctx.tw.taskQueue, settings: settingsWith() });

    // Closing the ticket records the case in the customer's memory.
    const closed = await send(ctx.tw, { ...event, type: 'ticket.closed', eventId: `${event.eventId}-closed`, message: '' });
    assert.equal(closed.status, 'closed');
    assert.equal(closed.step, followUp.step, 'a repeated eventId changes nothing');
    const cases = await ctx.db.admin.query('SELECT order_ids FROM memory_cases WHERE source_run = $1', [done.workflowId]);
    assert.equal(cases.rowCount, 1);
  });

  test('a denied refund is never issued and the reply says so honestly', async () => {
    const paused = await send(ctx.tw, example('double-charge'));
    assert.equal(paused.status, 'awaiting_approval');
    const pending = paused.pendingApproval!;
    await decideRefund(ctx.tw.client, paused.workflowId, { requestId: pending.request_id, decision: 'denied', approver: 'support-lead', reason: 'charge is a pre-authorisation' });
    const done = await waitUntilSettled(ctx.tw.client, paused.workflowId, { afterStep: paused.step });
    assert.ok(!done.steps.some((s) => s.tools.includes('issue_refund')));
    assert.equal(await refundsFor(pending.request_id), 0);
    assert.match(done.lastReply!, /not approved/);
    assert.deepEqual(done.decisions.map((d) => d.decision), ['denied']);
  });
});

describe('approvals', () => {
  test('the update validator refuses bad decisions with the reason, before they reach history', async () => {
    const settings = settingsWith({ CASEWORK_APPROVERS: 'support-lead:50000,junior:100' });
    // Dana's refund was issued above; Priya's newer order is still refundable.
    const paused = await send(ctx.tw, example('priya-2'), settings);
    assert.equal(paused.status, 'awaiting_approval');
    const pending = paused.pendingApproval!;
    const refused = async (decision: Parameters<typeof decideRefund>[2], reason: RegExp) => {
      await assert.rejects(decideRefund(ctx.tw.client, paused.workflowId, decision), (error: Error) => {
        assert.ok(error instanceof DecisionRejectedError, error.message);
        assert.match(error.message, reason);
        return true;
      });
    };
    await refused({ requestId: 'req-nope', decision: 'approved', approver: 'support-lead' }, /unknown refund request req-nope/);
    await refused({ requestId: pending.request_id, decision: 'approved', approver: 'mallory' }, /mallory may not decide refunds/);
    await refused({ requestId: pending.request_id, decision: 'approved', approver: 'junior' }, /junior may approve up to 100 cents/);
    const history = await ctx.tw.client.workflow.getHandle(paused.workflowId).fetchHistory();
    const updates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    assert.equal(updates.length, 0, 'rejected updates leave no trace in history');

    // Signals stay accepted for tools that can only signal.
    await ctx.tw.client.workflow.getHandle(paused.workflowId).signal(decideRefundSignal, { requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await waitUntilSettled(ctx.tw.client, paused.workflowId, { afterStep: paused.step });
    assert.ok(done.steps.some((s) => s.tools.includes('issue_refund')));
    await refused({ requestId: pending.request_id, decision: 'approved', approver: 'support-lead' }, /already been decided/);
    assert.equal(await refundsFor(pending.request_id), 1);
  });
});

describe('tool failures and limits', () => {
  test('an unknown tool becomes an error result and the run goes on', async () => {
    const done = await send(ctx.tw, ticket('cust_dana', 'Please run #call:frobnicate'));
    assert.equal(done.status, 'waiting_for_customer');
    assert.match(done.lastReply!, /frobnicate tool and it failed: .*Unknown tool "frobnicate"/);
  });

  test('a tool error (unknown order) becomes an error result the model reads', async () => {
    const done = await send(ctx.tw, ticket('cust_dana', 'Check this: #call:get_order {"order_id":"99999"}'));
    assert.match(done.lastReply!, /get_order tool and it failed: .*99999/);
  });

  test('invalid tool input is refused by the schema, naming the field', async () => {
    const done = await send(ctx.tw, ticket('cust_dana', 'Check this: #call:get_tracking_events {"order_id":"5102","page":0}'));
    assert.match(done.lastReply!, /failed: Invalid input for get_tracking_events: page/);
  });

  test("another customer's order is invisible to the tools", async () => {
    const done = await send(ctx.tw, ticket('cust_dana', 'Check this: #call:get_order {"order_id":"4471"}'));
    assert.match(done.lastReply!, /get_order tool and it failed/);
  });

  test('the step cap hands the case to a person instead of looping on', async () => {
    const done = await send(ctx.tw, ticket('cust_dana', 'Order 5102 #drill:20'), settingsWith({ CASEWORK_MAX_STEPS: '5' }));
    assert.equal(done.step, 5);
    assert.match(done.lastReply!, /step limit/);
  });
});

describe('the rules never move', () => {
  test('the system prompt is identical on every call, and between batches the sent prefix only grows', async () => {
    const from = model.requests.length;
    const done = await send(ctx.tw, ticket('cust_dana', 'Order 5102 #drill:25'), settingsWith({ CASEWORK_MAX_STEPS: '40' }));
    assert.equal(done.step, 26);
    const calls = model.requests.slice(from).filter((r) => r.purpose === 'investigate');
    assert.equal(calls.length, 26);
    for (const call of calls) {
      assert.equal(call.system.length, 1);
      assert.equal(call.system[0].text, SYSTEM_PROMPT);
    }
    const batches = done.steps.filter((s) => s.context_event?.startsWith('cleared')).map((s) => s.step);
    assert.deepEqual(batches, [10, 20], 'a clearing batch every ten steps');
    const strip = (m: unknown) => JSON.stringify(m).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '');
    for (let i = 1; i < calls.length; i++) {
      if (batches.includes(i + 1)) continue;
      const previous = calls[i - 1].messages.map(strip);
      const current = calls[i].messages.map(strip);
      assert.deepEqual(current.slice(0, previous.length), previous, `step ${i + 1} resends step ${i}'s messages unchanged`);
    }
    const last = JSON.stringify(calls[calls.length - 1].messages);
    assert.match(last, /Older result cleared to save space/);
  });
});
