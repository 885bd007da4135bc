import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { decideRefund, waitUntilSettled } from '../src/client/investigations';
import { defaultPayloadConverter } from '@temporalio/common';
import { dataConverterFor } from '../src/temporal/data-converter';
import { decodeHistoryPayloads } from '../src/temporal/history-payloads';
import { example, send } from './support/investigate';
import { seededWorker } from './support/temporal';

// Determinism: a recorded history must replay against today's workflow code without a
// nondeterminism error. One history is recorded now; one is committed (test/fixtures) so a
// change that would break running investigations fails here before it ships. The committed one
// was recorded by the build before the pre-versioning branches were retired (docs/deploy.md,
// "Retiring old workflow code"): it carries that build's patch markers, as the histories still
// running when the retiring build rolls out do, and must replay without them.

const FIXTURE = join(__dirname, 'fixtures', 'dispute-history.json');
// Written and read with @temporalio/proto's own codec, the one the client and worker use.
const History = temporal.api.history.v1.History;
// Replays with the data converter the worker uses: a recorded history is encrypted, and its
// large payloads are stored by reference. The committed fixture is written decoded (its keys and
// payload store are the test's own, gone after it): payloads without the codec's metadata pass
// through decode unchanged.
const bundle = () => ({
  ...(process.env.CASEWORK_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE } } : { workflowsPath: require.resolve('../src/workflows') }),
  dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app),
});

const ctx = seededWorker();

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The history object with every encrypted or stored payload replaced by its plain JSON payload. */
async function decodedHistory(value: Json): Promise<Json> {
  if (Array.isArray(value)) return Promise.all(value.map(decodedHistory));
  if (value === null || typeof value !== 'object') return value;
  const metadata = value.metadata as Record<string, string> | undefined;
  if (metadata?.encoding && typeof value.data === 'string' && Buffer.from(metadata.encoding, 'base64').toString() !== 'json/plain') {
    const payload = temporal.api.common.v1.Payload.fromObject(value);
    const [decoded] = await decodeHistoryPayloads(ctx.tw.client.options.loadedDataConverter, [payload]);
    const plain = defaultPayloadConverter.toPayload(decoded);
    return temporal.api.common.v1.Payload.toObject(temporal.api.common.v1.Payload.create(plain), { bytes: String });
  }
  const out: { [key: string]: Json } = {};
  for (const [key, inner] of Object.entries(value)) out[key] = await decodedHistory(inner);
  return out;
}

test('a whole dispute, approval included, replays deterministically', async () => {
  const paused = await send(ctx.tw, example('dana-5102'));
  await decideRefund(ctx.tw.client, paused.workflowId, { requestId: paused.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
  await waitUntilSettled(ctx.tw.client, paused.workflowId, { afterStep: paused.step });
  const history = await ctx.tw.client.workflow.getHandle(paused.workflowId).fetchHistory();
  assert.ok((history.events ?? []).length > 50);
  await Worker.runReplayHistory(bundle(), history, paused.workflowId);
  // CASEWORK_RECORD_HISTORY=1 npm test -- test/replay.test.ts refreshes the committed fixture.
  if (process.env.CASEWORK_RECORD_HISTORY === '1') {
    const plain = await decodedHistory(History.toObject(History.create(history), { longs: String, enums: String, bytes: String }));
    writeFileSync(FIXTURE, JSON.stringify(plain, null, 1));
  }
});

test('the committed dispute history replays against the current code', { skip: !existsSync(FIXTURE) && 'no fixture recorded yet (CASEWORK_RECORD_HISTORY=1)' }, async () => {
  const history = History.fromObject(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  await Worker.runReplayHistory(bundle(), history, 'investigation-fixture');
});
