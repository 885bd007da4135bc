import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { deliverEvent, readStatus } from '../src/client/investigations';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { createOfflineModel } from '../src/model/offline';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { dataConverterFor } from '../src/temporal/data-converter';
import { registerSearchAttributes } from '../src/temporal/search-attributes';
import { createWorker } from '../src/worker';
import { openTestDatabase, unique } from './support/db';
import { example, settingsWith } from './support/investigate';

// Durable timers on the time-skipping test server: a refund request left waiting gets a
// reminder after 24 h and is denied automatically after 72 h, without the test sleeping.

let env: TestWorkflowEnvironment;
let db: Database;
let worker: Worker;
/** A client with the worker's data converter: payloads are encrypted, so it must decode them. */
let client: Client;
let running: Promise<void>;
const taskQueue = unique('casework-timers');

before(async () => {
  const path = process.env.TEMPORAL_TEST_SERVER;
  assert.ok(path, 'TEMPORAL_TEST_SERVER is set by scripts/test.ts');
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
  await registerSearchAttributes(env.connection, env.namespace ?? 'default');
  db = await openTestDatabase({ seed: true });
  const config = loadConfig({ ...process.env, TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await createWorker({ config, connection: env.nativeConnection, pool: db.app, model: createOfflineModel(), workflowBundlePath: process.env.CASEWORK_WORKFLOW_BUNDLE });
  running = worker.run();
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default', dataConverter: dataConverterFor(config, db.app) });
});
after(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await db?.close();
  await env?.teardown();
});

async function until(workflowId: string, ok: (s: InvestigationStatus) => boolean): Promise<InvestigationStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await readStatus(client, workflowId).catch(() => undefined);
    if (status && ok(status)) return status;
    if (Date.now() > deadline) throw new Error(`timed out; last status ${JSON.stringify(status?.status)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a waiting refund request is reminded after 24 h and denied automatically after 72 h', async () => {
  const event = example('dana-5102');
  // Batches only every 50 steps here, so the clearing after the wait can only be the cold-cache rule.
  const { workflowId } = await deliverEvent(client, null, event, { taskQueue, settings: settingsWith({ CASEWORK_CLEAR_EVERY: '50' }) });
  const waiting = await until(workflowId, (s) => s.status === 'awaiting_approval');
  assert.equal(waiting.pendingApproval!.reminded, false);

  await env.sleep('25 hours');
  const reminded = await until(workflowId, (s) => s.pendingApproval?.reminded === true);
  assert.equal(reminded.status, 'awaiting_approval', 'a reminder does not decide anything');
  assert.equal(reminded.decisions.length, 0);

  await env.sleep('48 hours');
  const done = await until(workflowId, (s) => s.status === 'waiting_for_customer');
  const [decision] = done.decisions;
  assert.ok(decision && done.decisions.length === 1, `one decision, not ${done.decisions.length}`);
  assert.equal(decision.decision, 'denied');
  assert.equal(decision.approver, 'casework-timer');
  assert.match(decision.reason ?? '(no reason)', /no decision within 72 h/);
  assert.ok(!done.steps.some((s) => s.tools.includes('issue_refund')));
  assert.match(done.lastReply!, /not approved/);
  // Three days of workflow time since the last model call: the cache is cold, so clearing runs for free.
  const resumed = done.steps.find((s) => s.step === waiting.step + 1)!;
  assert.match(resumed.context_event ?? '', /cold_cache/);
});
