import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NativeConnection, Worker } from '@temporalio/worker';
import { runningInvestigationsQuery, undrainedRuns } from '../src/client/drain-check';
import { patchMarkers, strandingPatches } from '../src/client/removed-patches';
import { investigationId } from '../src/schemas/event';
import type { InvestigationInput } from '../src/schemas/investigation';
import { dataConverterFor } from '../src/temporal/data-converter';
import { unique } from './support/db';
import { readFixture } from './support/history-fixtures';
import { settingsWith, ticket } from './support/investigate';
import { seededWorker } from './support/temporal';

// Before workers of a release that removed a way of running take over, a deployment finds the
// running investigations whose current run would not replay on it (docs/deploy.md, "Retiring
// old workflow code"): begun in the retired in-workflow transcript mode (their input's settings
// lack historyByReference), or on a build that said patched() for a patch this release removed
// (their history holds its marker without the deprecated flag). Both are started here as the
// builds before started them, beside a run started today.

const ctx = seededWorker();
const olderBuild = unique('casework-older-build');
/** Starts an investigation on `taskQueue` without a customer message: it stays open without a model step. */
async function start(taskQueue: string, message: string, settings: InvestigationInput['settings']): Promise<string> {
  const event = ticket('cust_dana', message);
  const workflowId = investigationId(event.ticketId);
  await ctx.tw.client.workflow.start('investigation', { taskQueue, workflowId, args: [{ ticketId: event.ticketId, customerId: event.customerId, settings }] });
  return workflowId;
}

/** Waits until visibility lists `count` running investigations on `taskQueue` (it is eventually consistent). */
async function listed(taskQueue: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await ctx.tw.client.workflow.count(runningInvestigationsQuery(taskQueue))).count < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} runs showed in visibility on ${taskQueue}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function terminate(ids: string[]): Promise<void> {
  for (const id of ids)
    await ctx.tw.client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
}

test('the drain check lists a running investigation whose input began in the in-workflow mode, and not one kept by reference', async () => {
  const { taskQueue } = ctx.tw;
  const { historyByReference, ...olderSettings } = settingsWith();
  assert.equal(historyByReference, true, 'runs started today say so in their settings');
  const today = await start(taskQueue, 'Where is order 5102?', settingsWith());
  const before = await start(taskQueue, 'Where is order 5102, please?', olderSettings);
  try {
    await listed(taskQueue, 2);
    const found = await undrainedRuns(ctx.tw.client, { taskQueue });
    assert.deepEqual(
      found.map((r) => [r.workflowId, r.inWorkflowTranscript, r.patches]),
      [[before, true, []]],
    );
    assert.ok(!found.some((r) => r.workflowId === today));
    assert.match(found[0]!.startedAt, /^\d{4}-\d\d-\d\dT/);
  } finally {
    await terminate([today, before]);
  }
});

test('the drain check lists a running investigation whose history recorded a removed patch through patched(), naming the patch', async () => {
  // A worker of the build before deprecation: its investigation records patched('order-ledger').
  const connection = await NativeConnection.connect({ address: ctx.tw.config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: olderBuild,
    workflowsPath: require.resolve('./fixtures/pre-deprecation-investigation'),
    dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app),
  });
  const running = worker.run();
  const stranded = await start(olderBuild, 'Refund order 5102, please.', settingsWith());
  try {
    await listed(olderBuild, 1);
    // The marker is in the history once the run's first workflow task completed.
    const deadline = Date.now() + 30_000;
    let found = await undrainedRuns(ctx.tw.client, { taskQueue: olderBuild });
    while (found.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      found = await undrainedRuns(ctx.tw.client, { taskQueue: olderBuild });
    }
    assert.deepEqual(
      found.map((r) => [r.workflowId, r.inWorkflowTranscript, r.patches]),
      [[stranded, false, ['order-ledger']]],
    );
  } finally {
    await terminate([stranded]);
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  }
});

test('the patches a history strands: every removed one the pre-versioning dispute recorded, none of those the deprecating build recorded', async () => {
  const converter = ctx.tw.client.options.loadedDataConverter;
  const markersOf = async (name: string) => patchMarkers(converter, readFixture(name).events ?? []);
  assert.deepEqual(strandingPatches(await markersOf('pre-versioning-dispute-history.json')), [
    'history-by-reference',
    'history-plan-compact',
    'cache-optimal-schedule',
    'desk-posts-worker-decides',
    'desk-posts',
    'local-read-tools',
    'desk-evidence-from-log',
    'order-ledger',
  ]);
  for (const name of ['dispute-history.json', 'desk-denied-history.json', 'held-reply-history.json']) {
    const markers = await markersOf(name);
    assert.ok(
      markers.some((m) => m.deprecated),
      `${name} holds deprecated markers`,
    );
    assert.deepEqual(strandingPatches(markers), [], name);
  }
});
