import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { createOfflineModel } from '../src/model/offline';
import type { Model } from '../src/model/port';
import { dataConverterFor } from '../src/temporal/data-converter';
import { deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { QUERY_WAIT_MS, readCaseStatus } from '../src/client/case-status';
import { send, settingsWith, ticket } from './support/investigate';
import { seededWorker } from './support/temporal';

// Model calls as local activities (CASEWORK_LOCAL_MODEL_CALLS=true, the default): a turn's steps leave one
// marker each instead of an activity's three events and a workflow task's three, the
// investigation answers exactly as with remote calls, its history replays, and a call the model
// refuses for good still ends with a person told, not a failed run.

const REJECT = '#local-model-reject';
const SLOW = '#local-model-slow';
/** How long the double takes over a conversation carrying SLOW: longer than a status read waits for a worker (QUERY_WAIT_MS). */
const SLOW_CALL_MS = 3 * QUERY_WAIT_MS;
let slowCallsAsked = 0;

/** Resolves once the double has been asked a slow call (the step's local activity is in flight). */
async function untilSlowCallAsked(): Promise<void> {
  for (let waited = 0; slowCallsAsked === 0; waited += 50) {
    if (waited > 60_000) throw new Error('the slow call was never asked');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The offline investigator, refusing for good (as the port maps an API 400) any conversation carrying REJECT, and slow over the first call of one carrying SLOW. */
function rejectingOnMarker(inner: Model): Model {
  return {
    label: inner.label,
    offline: inner.offline,
    create(request) {
      const sent = JSON.stringify(request.messages);
      if (sent.includes(SLOW) && request.messages.length === 1) {
        slowCallsAsked += 1;
        return new Promise((resolve) => setTimeout(resolve, SLOW_CALL_MS)).then(() => inner.create(request));
      }
      if (sent.includes(REJECT)) {
        return Promise.reject(
          ApplicationFailure.create({ type: 'ModelRequestRejected', nonRetryable: true, message: 'invalid_request_error: the test double rejects this request' }),
        );
      }
      return inner.create(request);
    },
  };
}

const ctx = seededWorker({ model: rejectingOnMarker(createOfflineModel()) });
const local = () => settingsWith({ CASEWORK_LOCAL_MODEL_CALLS: 'true' });

test('a 20-step turn with local model calls answers as remote calls do, in under 5 history events a step, and replays', async () => {
  const message = 'Scripted long investigation of order 5102. #drill:20';
  const remote = await send(ctx.tw, ticket('cust_dana', message), settingsWith({ CASEWORK_LOCAL_MODEL_CALLS: 'false' }));
  const done = await send(ctx.tw, ticket('cust_dana', message), local());
  assert.equal(done.status, 'waiting_for_customer');
  assert.equal(done.step, remote.step);
  assert.equal(done.lastReply, remote.lastReply);
  assert.deepEqual(
    done.steps.map((s) => s.tools),
    remote.steps.map((s) => s.tools),
  );

  const history = await ctx.tw.client.workflow.getHandle(done.workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType?.name);
  assert.ok(!scheduled.includes('callModelOnPlan'), `no model call is a remote activity (scheduled: ${scheduled.join(', ')})`);
  const remoteEvents = (await ctx.tw.client.workflow.getHandle(remote.workflowId).fetchHistory()).events?.length ?? 0;
  assert.ok(events.length / done.step <= 5, `${events.length} events for ${done.step} steps (remote calls: ${remoteEvents})`);
  assert.ok(events.length < remoteEvents / 2, `${events.length} events against ${remoteEvents} with remote calls`);
  const code = process.env.CASEWORK_WORKFLOW_BUNDLE
    ? { workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE } }
    : { workflowsPath: require.resolve('../src/workflows') };
  await Worker.runReplayHistory({ ...code, dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app) }, history, done.workflowId);
});

test('a local model call the model refuses for good hands the case to a person, naming why', async () => {
  const held = await send(ctx.tw, ticket('cust_dana', `Where is my parcel? ${REJECT}`), local());
  assert.equal(held.status, 'needs_human');
  assert.match(held.handOff?.reason ?? '', /^the model could not be asked: .*the test double rejects this request/);
});

test("a status read during a slow local model call is answered at the worker's next task heartbeat, not refused for want of a worker", async () => {
  const event = ticket('cust_dana', `Where is my parcel for order 5102? ${SLOW}`);
  const { workflowId } = await deliverEvent(ctx.tw.client, ctx.db.app, event, { taskQueue: ctx.tw.taskQueue, settings: local() });
  const handle = ctx.tw.client.workflow.getHandle(workflowId);
  // The run starts with the task timeout whose heartbeat falls inside a status read's wait.
  const history = await handle.fetchHistory();
  const timeout = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowTaskTimeout;
  // The worker heartbeats the task at 80 % of its timeout: that must come before a status read gives up.
  assert.ok(Number(timeout?.seconds ?? 0) * 1000 * 0.8 < QUERY_WAIT_MS, `workflow task timeout ${String(timeout?.seconds)} s`);
  // Read the status while the call is surely in flight: the model has been asked and has not answered.
  await untilSlowCallAsked();
  const during = await readCaseStatus(ctx.tw.client, workflowId);
  assert.equal(during.status, 'investigating');
  const done = await waitUntilSettled(ctx.tw.client, workflowId, { timeoutMs: 120_000 });
  assert.ok(['awaiting_approval', 'waiting_for_customer'].includes(done.status), `the turn ends as it would have: ${done.status}`);
});
