import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { decideRefund, waitUntilSettled } from '../src/client/investigations';
import { dataConverterFor } from '../src/temporal/data-converter';
import { example, send } from './support/investigate';
import { seededWorker } from './support/temporal';

// Determinism: a recorded history must replay against today's workflow code without a
// nondeterminism error. One history is recorded now; one is committed (test/fixtures) so a
// change that would break running investigations fails here before it ships.

const FIXTURE = join(__dirname, 'fixtures', 'dispute-history.json');
// Written and read with @temporalio/proto's own codec, the one the client and worker use.
const History = temporal.api.history.v1.History;
// Replays with the data converter the worker uses: a recorded history is encrypted, and its
// large payloads are stored by reference. The committed fixture predates encryption: payloads
// without the codec's metadata pass through decode unchanged, as running investigations' do.
const bundle = () => ({
  ...(process.env.CASEWORK_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE } } : { workflowsPath: require.resolve('../src/workflows') }),
  dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app),
});

const ctx = seededWorker();

test('a whole dispute, approval included, replays deterministically', async () => {
  const paused = await send(ctx.tw, example('dana-5102'));
  await decideRefund(ctx.tw.client, paused.workflowId, { requestId: paused.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
  await waitUntilSettled(ctx.tw.client, paused.workflowId, { afterStep: paused.step });
  const history = await ctx.tw.client.workflow.getHandle(paused.workflowId).fetchHistory();
  assert.ok((history.events ?? []).length > 50);
  await Worker.runReplayHistory(bundle(), history, paused.workflowId);
  // CASEWORK_RECORD_HISTORY=1 npm test -- test/replay.test.ts refreshes the committed fixture.
  if (process.env.CASEWORK_RECORD_HISTORY === '1') {
    writeFileSync(FIXTURE, JSON.stringify(History.toObject(History.create(history), { longs: String, enums: String, bytes: String }), null, 1));
  }
});

test('the committed dispute history replays against the current code', { skip: !existsSync(FIXTURE) && 'no fixture recorded yet (CASEWORK_RECORD_HISTORY=1)' }, async () => {
  const history = History.fromObject(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  await Worker.runReplayHistory(bundle(), history, 'investigation-fixture');
});
