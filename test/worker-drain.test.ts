import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { loadConfig, type Config } from '../src/config';
import type { Database } from '../src/db/pool';
import { createOfflineModel } from '../src/model/offline';
import type { Model } from '../src/model/port';
import { connectClient } from '../src/temporal/client';
import { startMetricsEndpoint } from '../src/observability/endpoint';
import { connectWorker, createWorker, startInProcessWorker, workerProbes } from '../src/worker';
import { openTestDatabase, unique } from './support/db';
import { settingsWith, ticket } from './support/investigate';

// A rolling restart of the workers while a model call is in flight: the worker told to stop
// (worker.shutdown(), what SIGTERM does) stops taking tasks but lets the call it holds finish,
// and reports its result, so the investigation goes on on the next worker without paying for
// that call twice. The model is the offline investigator (a test double) with its first call
// held open until the worker is already draining.

let db: Database;
let config: Config;
before(async () => {
  db = await openTestDatabase({ seed: true });
  config = loadConfig({ ...process.env, TEMPORAL_TASK_QUEUE: unique('casework-drain') });
});
after(async () => {
  await db?.close();
});

// Remote model calls: the draining worker finishes the call it holds and takes no other. Local
// ones (the default) run inside the workflow task the worker holds, so it finishes that task's
// steps before it stops. Either way each step's call is made once, across both workers.
const modes: { calls: string; env: Record<string, string>; local: boolean }[] = [
  { calls: 'remote model calls', env: { CASEWORK_LOCAL_MODEL_CALLS: 'false' }, local: false },
  { calls: 'local model calls, the default', env: {}, local: true },
];

for (const mode of modes)
  test(`a draining worker is alive but not ready; a model call in flight when it was told to stop completes, is recorded once, and the case goes on on another worker (${mode.calls})`, async () => {
    const offline = createOfflineModel();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let heldCallStarted!: () => void;
    const started = new Promise<void>((r) => (heldCallStarted = r));
    let calls = 0;
    let stepCalls = 0;
    const held: Model = {
      label: 'offline investigator, first call held open (test double)',
      offline: true,
      async create(request) {
        calls += 1;
        if (request.purpose === 'investigate') stepCalls += 1;
        if (calls === 1) {
          heldCallStarted();
          await gate;
        }
        return offline.create(request);
      },
    };
    const connection = await connectWorker(config);
    const { client, close } = await connectClient(config, { pool: db.app });
    let second: Awaited<ReturnType<typeof startInProcessWorker>> | undefined;
    try {
      const first = await createWorker({ config, connection, pool: db.app, model: held, workflowBundlePath: process.env.CASEWORK_WORKFLOW_BUNDLE, shutdownGraceMs: 60_000 });
      const running = first.run();
      const probes = await startMetricsEndpoint({
        config: { ...config, CASEWORK_METRICS_PORT: 0, CASEWORK_METRICS_HOST: '127.0.0.1' },
        ...workerProbes(first, { config, pool: db.app, client, bundle: 'prebuilt' }),
      });
      const probe = async (path: string) => {
        const res = await fetch(`${probes.url}${path}`);
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const event = ticket('cust_dana', 'My parcel never arrived. Can you check where it is?');
      const { workflowId } = await deliverEvent(client, db.app, event, { taskQueue: config.TEMPORAL_TASK_QUEUE, settings: settingsWith(mode.env) });
      await started;
      const ready = await probe('/readyz');
      assert.deepEqual(
        { status: ready.status, worker: ready.body.worker, temporal: ready.body.temporal, postgres: ready.body.postgres },
        { status: 200, worker: 'RUNNING', temporal: 'ok', postgres: 'ok' },
      );

      first.shutdown();
      assert.ok(['STOPPING', 'DRAINING'].includes(first.getState()), `the worker drains (${first.getState()})`);
      const draining = await probe('/readyz');
      assert.equal(draining.status, 503, 'a draining worker is not ready for work');
      assert.match(String(draining.body.error), /^not ready: the worker is (STOPPING|DRAINING), not polling/);
      assert.equal((await probe('/healthz')).status, 200, 'but alive: it is finishing what it holds');
      release();
      await running;
      await probes.close();
      assert.equal(first.getState(), 'STOPPED');
      if (!mode.local) assert.equal(calls, 1, 'the draining worker took no new model call');

      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const completed = events.filter((e) => (mode.local ? e.markerRecordedEventAttributes : e.activityTaskCompletedEventAttributes));
      const lost = events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes || e.activityTaskCanceledEventAttributes);
      assert.ok(completed.length >= 1, 'the held model call reported its result before the worker stopped');
      assert.deepEqual(lost, [], 'no activity failed, timed out or was cancelled by the stop');

      second = await startInProcessWorker({ config, pool: db.app, model: held, workflowBundlePath: process.env.CASEWORK_WORKFLOW_BUNDLE });
      const status = await waitUntilSettled(client, workflowId, { timeoutMs: 120_000 });
      assert.notEqual(status.status, 'needs_human', 'the restart cost the case nothing');
      assert.equal(stepCalls, status.step, `each of the ${status.step} steps asked the model once, across both workers`);
      const attempts = (await client.workflow.getHandle(workflowId).fetchHistory()).events
        ?.map((e) => e.activityTaskStartedEventAttributes?.attempt)
        .filter((a): a is number => a !== undefined && a !== null);
      assert.ok(
        attempts?.every((a) => a === 1),
        `every activity ran once: attempts ${JSON.stringify(attempts)}`,
      );
    } finally {
      release();
      await second?.stop();
      await close();
      await connection.close().catch(() => undefined);
    }
  });
