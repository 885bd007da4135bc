import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { decideRefund, deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { investigationId } from '../src/schemas/event';
import { dataConverterFor } from '../src/temporal/data-converter';
import { hasFixture, readFixture, recording, writeFixture } from './support/history-fixtures';
import { example, send, settingsWith, ticket } from './support/investigate';
import { answer, calls, json, scriptedModel, toolUse, type ScriptStep } from './support/scripted-model';
import { settle, untilStatus } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';
import { openTestDatabase } from './support/db';
import type { Database } from '../src/db/pool';
import { firstTicketIdOfFile, zendeskEnv } from './support/desk-stack';

// Determinism: a recorded history must replay against today's workflow code without a
// nondeterminism error. Each case below is run now and its history replayed; the same cases are
// committed (test/fixtures/*-history.json) as the build before recorded them, so a change that
// would break running investigations fails here before it ships. Between them they pass every
// place the workflow once had a patch: a dispute approved, paid and closed by casework after the
// follow-up window (read tools, the refund note's evidence, the order ledger, the closing
// summary); a desk ticket whose refund is denied and which casework closes (the denied note,
// the desk's close); a reply held back because it showed internals.
// CASEWORK_RECORD_HISTORY=1 on this file rewrites the committed fixtures from the runs.

const model = scriptedModel();
let db: Database;
let offline: TestWorker;
let zendesk: DeskStandin;
let desk: TestWorker;
// A short follow-up window: an answered case that hears nothing more is closed by casework.
const closesSoon = settingsWith({ CASEWORK_FOLLOW_UP_WINDOW_SECONDS: '2' });
// The committed histories before local model calls became the default were recorded with remote
// ones; re-recording them keeps that shape, and the dispute is recorded in both.
const closesSoonRemote = settingsWith({ CASEWORK_FOLLOW_UP_WINDOW_SECONDS: '2', CASEWORK_LOCAL_MODEL_CALLS: 'false' });

before(async () => {
  db = await openTestDatabase({ seed: true });
  offline = await startTestWorker({ pool: db.app });
  zendesk = await startDeskStandin({ firstTicketId: firstTicketIdOfFile() });
  desk = await startTestWorker({
    pool: db.app,
    model,
    env: {
      CASEWORK_DESKS: 'zendesk',
      CASEWORK_DESK_TIMEOUT_MS: '2000',
      ...zendeskEnv(zendesk),
      CASEWORK_ZENDESK_HANDOFF_GROUP_ID: '360001',
    },
  });
});
after(async () => {
  await offline?.stop();
  await desk?.stop();
  await zendesk?.close();
  await db?.close();
});

/** Replays with the data converter the worker uses: a recorded history is encrypted, and its large payloads are stored by reference. */
const replayOptions = (tw: TestWorker) => ({
  ...(process.env.CASEWORK_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE } } : { workflowsPath: require.resolve('../src/workflows') }),
  dataConverter: dataConverterFor(tw.config, db.app),
});

/** Replays `workflowId`'s history now, and writes it as fixture `name` when recording. */
async function replayAndKeep(tw: TestWorker, workflowId: string, name: string): Promise<void> {
  const history = await tw.client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory(replayOptions(tw), history, workflowId);
  if (recording()) await writeFixture(tw.client.options.loadedDataConverter, name, history);
}

/** Opens a Zendesk ticket on the stand-in and starts its investigation with `script`, as the desk's webhook would. */
async function deskCase(text: string, script: ScriptStep[]): Promise<string> {
  const id = zendesk.createTicket({ requesterId: 8447388090494, subject: 'Order', body: text }).ticketId;
  const event = ticket('cust_dana', text, { ticketId: `zendesk-${id}` });
  const workflowId = investigationId(event.ticketId);
  // Closing summarises the case into notes: the fake answers that with fixed notes.
  model.script(workflowId, { replies: script, purposes: { compact: () => json({ ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: text }) } });
  await deliverEvent(desk.client, desk.pool, event, { taskQueue: desk.taskQueue, settings: closesSoonRemote });
  return workflowId;
}

// Before the dispute: both are on order 5102, which the dispute refunds in full.
test('a desk case whose refund is denied, closed by casework, replays deterministically', async () => {
  const workflowId = await deskCase('Order 5102 never arrived, I want my money back.', [
    calls(toolUse('get_order', { order_id: '5102' })),
    calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Marked delivered but never received.' })),
    answer('I have asked a colleague to look at a refund of £10.00 for order 5102.'),
    answer('A colleague could not approve the refund; the courier has been asked to trace the parcel.'),
  ]);
  const waiting = await settle(desk, model, workflowId);
  assert.equal(waiting.status, 'awaiting_approval');
  await decideRefund(desk.client, workflowId, {
    requestId: waiting.pendingApproval!.request_id,
    decision: 'denied',
    approver: 'support-lead',
    reason: 'Proof of delivery is strong.',
  });
  const done = await desk.client.workflow.getHandle(workflowId).result();
  assert.equal(done.status, 'closed');
  assert.equal(done.decisions[0]?.decision, 'denied');
  await replayAndKeep(desk, workflowId, 'desk-denied-history.json');
});

test('a reply held back because it showed internals replays deterministically', async () => {
  const workflowId = await deskCase('Refund order 5102 please.', [answer('Your refund req_0123456789abcdef of 1099 cents failed with ToolError: refused.')]);
  const held = await untilStatus(desk, model, workflowId, 'the hand-off', (s) => s.status === 'needs_human');
  assert.match(held.handOff!.reason, /held back/);
  try {
    await replayAndKeep(desk, workflowId, 'held-reply-history.json');
  } finally {
    await desk.client.workflow.getHandle(workflowId).terminate('test over');
  }
});

const disputes = [
  { calls: 'remote model calls', example: 'dana-5102', settings: closesSoonRemote, fixture: 'dispute-history.json' },
  // Another order: the first dispute refunds order 5102 in full, and the ledger refuses a second refund of it.
  { calls: 'local model calls, the default', example: 'double-charge', settings: closesSoon, fixture: 'dispute-local-history.json' },
];

for (const { calls, example: name, settings, fixture } of disputes)
  test(`a whole dispute, approved, paid and closed by casework after the follow-up window, replays deterministically (${calls})`, async () => {
    const paused = await send(offline, example(name), settings);
    await decideRefund(offline.client, paused.workflowId, { requestId: paused.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
    await waitUntilSettled(offline.client, paused.workflowId, { afterStep: paused.step });
    const done = await offline.client.workflow.getHandle(paused.workflowId).result();
    assert.equal(done.status, 'closed');
    assert.equal(done.refunds.length, 1);
    await replayAndKeep(offline, paused.workflowId, fixture);
  });

for (const name of ['dispute-history.json', 'dispute-local-history.json', 'desk-denied-history.json', 'held-reply-history.json']) {
  test(`the committed ${name} replays against the current code`, { skip: !hasFixture(name) && 'not recorded yet (CASEWORK_RECORD_HISTORY=1)' }, async () => {
    await Worker.runReplayHistory(replayOptions(offline), readFixture(name), 'investigation-fixture');
  });
}

// Recorded by the build before the deprecating one: its markers say patched(), not deprecatePatch().
// A run like it must have closed before this release rolls out; the drain check names such runs
// (test/drain-check.test.ts reads this very history).
test('the pre-versioning dispute history does not replay on this release: such a run must drain first', async () => {
  await assert.rejects(Worker.runReplayHistory(replayOptions(offline), readFixture('pre-versioning-dispute-history.json'), 'investigation-fixture'), (error: Error) => {
    assert.match(`${error.name}: ${error.message}`, /DeterminismViolation|nondetermin/i);
    return true;
  });
});
