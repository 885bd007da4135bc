import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { decideRefund } from '../src/client/investigations';
import { loadConfig, type Config } from '../src/config';
import type { Database } from '../src/db/pool';
import { dataConverterFor } from '../src/temporal/data-converter';
import { deploymentOptions } from '../src/temporal/deployment';
import { startInProcessWorker, writeWorkflowBundle } from '../src/worker';
import { pendingRefund } from './support/console-cases';
import { openTestDatabase, unique } from './support/db';
import { scriptedModel } from './support/scripted-model';
import { settle } from './support/scripted-run';
import type { TestWorker } from './support/temporal';

// Rolling out workflow code with Temporal Worker Versioning, on the suite's dev server: workers
// of build v1 run investigations; build v2 (the same code plus a change behind patched()) is
// deployed and made current; v1's workers are stopped. The investigation is AUTO_UPGRADE, so a
// case that was waiting for a refund decision on v1 completes on v2, and a new case runs on v2
// from its start. Both recorded histories replay against v2's code.

const deploymentName = unique('casework-rollout');
const taskQueue = unique('casework-rollout');
const model = scriptedModel();
const v2Bundle = join(mkdtempSync(join(tmpdir(), 'casework-rollout-')), 'workflow-bundle-v2.js');
let db: Database;
let v1: TestWorker | undefined;
let v2: TestWorker | undefined;

function configFor(buildId: string): Config {
  return loadConfig({
    ...process.env,
    TEMPORAL_TASK_QUEUE: taskQueue,
    CASEWORK_DEPLOYMENT_NAME: deploymentName,
    CASEWORK_BUILD_ID: buildId,
    CASEWORK_APPROVERS: 'support-lead:1000,duty-manager:200000',
  });
}

async function startVersion(buildId: string, bundle: string | undefined): Promise<TestWorker> {
  const config = configFor(buildId);
  const started = await startInProcessWorker({ config, pool: db.app, model, workflowBundlePath: bundle });
  return { ...started, config, model, taskQueue, pool: db.app };
}

/** Makes `buildId` the deployment's current version, once its worker has polled (the server knows it only then). */
async function makeCurrent(tw: TestWorker, buildId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await tw.client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: tw.config.TEMPORAL_NAMESPACE, deploymentName, buildId, identity: 'casework rollout test' });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The build a run's last workflow task ran on, and its versioning behaviour, as the server records them. */
async function versionOf(tw: TestWorker, workflowId: string): Promise<{ buildId?: string | null; behavior?: unknown; memo: Record<string, unknown> | undefined }> {
  const described = await tw.client.workflow.getHandle(workflowId).describe();
  const info = described.raw.workflowExecutionInfo?.versioningInfo;
  return { buildId: info?.deploymentVersion?.buildId, behavior: info?.behavior, memo: described.memo };
}

before(async () => {
  db = await openTestDatabase({ seed: true });
  await writeWorkflowBundle(v2Bundle, { extraInterceptorModules: [require.resolve('../src/dev/rollout-probe')] });
  v1 = await startVersion('v1', process.env.CASEWORK_WORKFLOW_BUNDLE);
  await makeCurrent(v1, 'v1');
});
after(async () => {
  await v1?.stop();
  await v2?.stop();
  await db?.close();
});

describe('rolling out workflow code with Worker Versioning', () => {
  it('a case waiting on v1 completes on v2 after the rollout; a new case runs on v2; both histories replay on v2', async () => {
    const waiting = await pendingRefund(v1!, model, 800, 'Marked delivered but never received.');
    const before = await versionOf(v1!, waiting.id);
    assert.equal(before.buildId, 'v1', 'the case started on v1');
    assert.equal(before.memo?.rolledOutTo, undefined);

    v2 = await startVersion('v2', v2Bundle);
    await makeCurrent(v2, 'v2');
    await v1!.stop();
    v1 = undefined;

    await decideRefund(v2.client, waiting.id, { requestId: waiting.status.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await settle(v2, model, waiting.id, waiting.status.step);
    assert.equal(done.refunds.length, 1, 'the approved refund was paid once');
    const moved = await versionOf(v2, waiting.id);
    assert.equal(moved.buildId, 'v2', 'AUTO_UPGRADE: the waiting case moved to the current build');
    assert.match(String(moved.behavior), /AUTO_UPGRADE|2/);
    assert.equal(moved.memo?.rolledOutTo, 'v2', 'v2 code handled the decision');

    const fresh = await pendingRefund(v2, model, 500, 'Parcel lost.');
    const started = await versionOf(v2, fresh.id);
    assert.deepEqual([started.buildId, started.memo?.rolledOutTo], ['v2', 'v2'], 'a new case runs v2 from its start');

    const replayOptions = { workflowBundle: { codePath: v2Bundle }, dataConverter: dataConverterFor(v2.config, db.app) };
    for (const id of [waiting.id, fresh.id]) {
      const history = await v2.client.workflow.getHandle(id).fetchHistory();
      await Worker.runReplayHistory(replayOptions, history, id);
    }
  });

  it('a worker given half of the versioning settings refuses to start, naming the missing variable', () => {
    assert.throws(() => deploymentOptions({ CASEWORK_DEPLOYMENT_NAME: 'casework', CASEWORK_BUILD_ID: undefined }), /CASEWORK_BUILD_ID is required/);
    assert.throws(() => deploymentOptions({ CASEWORK_DEPLOYMENT_NAME: undefined, CASEWORK_BUILD_ID: '2026.12.04' }), /CASEWORK_DEPLOYMENT_NAME is required/);
    assert.equal(deploymentOptions({ CASEWORK_DEPLOYMENT_NAME: undefined, CASEWORK_BUILD_ID: undefined }), undefined);
  });
});
