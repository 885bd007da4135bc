import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideRefund, deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { historySizes } from '../src/dev/bench/workflow';
import { example, send, settingsWith, ticket } from './support/investigate';
import { recordingModel, seededWorker } from './support/temporal';

// Long runs stay inside Temporal's limits: the workflow continues as new when the server
// suggests it (scripts/test.ts sets the suggestion at 1,000 events), carrying the transcript,
// notes, totals and anything that arrived meanwhile.

const model = recordingModel();
const ctx = seededWorker({ model });

// Remote model calls reach the server's suggestion within 200 steps (about 8 events a step); local
// ones (the default, about 3) continue as new at the per-run step cap instead.
const longRuns: { calls: string; env: Record<string, string> }[] = [
  { calls: 'remote model calls, at the server suggestion', env: { CASEWORK_LOCAL_MODEL_CALLS: 'false' } },
  { calls: 'local model calls, at the per-run step cap', env: { CASEWORK_MAX_STEPS_PER_RUN: '90' } },
];

for (const { calls, env } of longRuns)
  test(`a 200-step investigation completes across continue-as-new without losing a signal or its notes (${calls})`, async () => {
    const settings = settingsWith({ CASEWORK_MAX_STEPS: '250', ...env });
    const event = ticket('cust_dana', 'Scripted long investigation of order 5102. #drill:200');
    const workflowId = `investigation-${event.ticketId}`;
    await deliverEvent(ctx.tw.client, ctx.db.app, event, { taskQueue: ctx.tw.taskQueue, settings });
    await waitUntilSettled(ctx.tw.client, workflowId, { timeoutMs: 30_000, pollMs: 50, afterStep: 0 }).catch(() => undefined);
    // A follow-up arriving mid-run is carried into the next run if it is not read first.
    await deliverEvent(
      ctx.tw.client,
      ctx.db.app,
      { ...event, type: 'ticket.message', eventId: `${event.eventId}-mid`, message: `Any news on my parcel? (${event.ticketId})` },
      { taskQueue: ctx.tw.taskQueue, settings },
    );
    const done = await waitUntilSettled(ctx.tw.client, workflowId, { afterStep: 200, timeoutMs: 600_000 });
    assert.ok(done.step >= 201, `ran ${done.step} steps`);
    assert.ok(done.continuedAsNew >= 1, 'continued as new at least once');
    assert.ok(done.agentNotes.found.includes('drill step 5 of 200'), 'notes written in the first run survive');
    assert.ok(done.agentNotes.found.includes('drill step 200 of 200'));
    // The latest step records are in the status; older ones moved to the transcript log (history by reference).
    assert.equal(done.steps.length + (done.stepsInLog ?? 0), done.step, 'every step is accounted, across runs');
    const sent = model.requests.filter((r) => r.purpose === 'investigate' && JSON.stringify(r.messages).includes(`Any news on my parcel? (${event.ticketId})`));
    assert.ok(sent.length > 0, 'the mid-run message reached the model');
    const runs = await historySizes(ctx.tw.client, workflowId);
    assert.equal(runs.length, done.continuedAsNew + 1);
    for (const run of runs) assert.ok(run.events < 2_000, `a run of ${run.events} events stays well inside the 51,200-event limit`);
  });

test('a refund requested after continue-as-new is approved and issued once', async () => {
  const settings = settingsWith({ CASEWORK_MAX_STEPS_PER_RUN: '4' });
  const paused = await send(ctx.tw, example('dana-5102'), settings);
  assert.ok(paused.continuedAsNew >= 2);
  assert.equal(paused.status, 'awaiting_approval');
  await decideRefund(ctx.tw.client, paused.workflowId, { requestId: paused.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
  const done = await waitUntilSettled(ctx.tw.client, paused.workflowId, { afterStep: paused.step });
  assert.match(done.lastReply!, /has been issued/);
  const { rows } = await ctx.db.admin.query('SELECT count(*)::int AS n FROM refunds WHERE request_id = $1', [paused.pendingApproval!.request_id]);
  assert.equal(rows[0].n, 1);
});
