import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { investigationId } from '../src/schemas/event';
import { decodeHistoryPayloads, localActivityOf } from '../src/temporal/history-payloads';
import { dataConverterFor } from '../src/temporal/data-converter';
import { attemptsWithin } from '../src/workflows/activities';
import { LOCAL_READ_TOOLS, sideBySideGroups } from '../src/workflows/tool-dispatch';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, scriptedModel, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { seededWorker } from './support/temporal';

// How one reply's tool calls run. Read-only shop tools are local activities (one marker event
// each, in the workflow task that scheduled it) and consecutive ones run side by side; writes
// stay remote activities and run alone, in the reply's order. The model sees every result in
// the order it asked, and the web UI still shows each call with its one-line summary. A run
// with localReadTools: false (CASEWORK_LOCAL_READ_TOOLS=false) runs as before the patch.

type Event = temporal.api.history.v1.IHistoryEvent;

const model = scriptedModel();
const ctx = seededWorker({ model });
const REVIEWING = 'A colleague is reviewing your refund; I will write again once it is decided.';

/** Every tool call of a run as the history shows it: local (marker) or remote, its summary and the workflow task that scheduled it. */
async function toolCallsIn(events: Event[]) {
  const converter = ctx.tw.client.options.loadedDataConverter;
  const calls: { type: string; local: boolean; summary: string; task: string; seq: number }[] = [];
  for (const event of events) {
    const summary = event.userMetadata?.summary ? String((await decodeHistoryPayloads(converter, [event.userMetadata.summary]))[0]) : '';
    const local = await localActivityOf(converter, event);
    if (local)
      calls.push({
        type: local.activity_type!,
        local: true,
        summary,
        task: String(event.markerRecordedEventAttributes!.workflowTaskCompletedEventId),
        seq: Number(local.activity_id),
      });
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled)
      calls.push({ type: scheduled.activityType!.name!, local: false, summary, task: String(scheduled.workflowTaskCompletedEventId), seq: Number(scheduled.activityId) });
  }
  // Markers are recorded as the calls finish; the activity's sequence number is the order they were made in.
  // The model call is callModel, or callModelOnPlan for a run kept by reference (the default): neither is a tool.
  // Nor are the desk's posts and the refund note's evidence, read for it (the worker decides whether a desk takes them).
  const notTools = new Set(['callModel', 'callModelOnPlan', 'loadMemory', 'postToDesk', 'toolEvidenceFromLog']);
  return calls.filter((c) => !notTools.has(c.type)).sort((a, b) => a.seq - b.seq);
}

async function runReply(env: Record<string, string>) {
  const event = ticket('cust_dana', 'My order 5102 never arrived; I would like a refund.');
  const id = investigationId(event.ticketId);
  const uses = [
    toolUse('get_order', { order_id: '5102' }),
    toolUse('get_tracking_events', { order_id: '5102' }),
    toolUse('request_refund', { order_id: '5102', amount_cents: 300, reason: 'Marked delivered, never received.' }),
    toolUse('get_payments', { order_id: '5102' }),
    toolUse('lookup_policy', { topic: 'parcel marked delivered but not received' }),
  ];
  model.script(id, [calls(...uses), answer(REVIEWING)]);
  const settled = await deliver(ctx.tw, model, event, settingsWith(env));
  assert.equal(settled.status, 'awaiting_approval');
  const results = lastToolResults(model.requests(id, 'investigate')[1]!);
  assert.deepEqual(
    results.map((r) => r.tool_use_id),
    uses.map((u) => u.id),
    'the model gets every result in the order it asked',
  );
  assert.match(results[0]!.content, /Trailpeak GTX/, 'get_order answers with the order');
  assert.match(results[1]!.content, /NX4100510200|Delivered/, 'get_tracking_events answers with the tracking');
  assert.match(results[2]!.content, /awaiting_approval/, 'request_refund files the request');
  const history = await ctx.tw.client.workflow.getHandle(id).fetchHistory();
  return { id, history, events: history.events ?? [] };
}

describe('one reply’s tool calls', () => {
  test('group consecutive read-only calls; writes and notes run alone, in order', () => {
    const names = (...n: string[]) => n.map((name) => ({ name }));
    const grouped = sideBySideGroups(
      names('get_order', 'get_tracking_events', 'request_refund', 'get_payments', 'recall', 'write_notes', 'read_notes', 'review_tickets', 'nonsense'),
    );
    assert.deepEqual(
      grouped.map((g) => g.map((u) => u.name)),
      [['get_order', 'get_tracking_events'], ['request_refund'], ['get_payments', 'recall'], ['write_notes'], ['read_notes'], ['review_tickets'], ['nonsense']],
    );
    for (const never of ['request_refund', 'issue_refund', 'remember', 'review_tickets', 'write_notes']) assert.ok(!LOCAL_READ_TOOLS.has(never), `${never} is never local`);
  });

  test('a local tool gets the attempts the backoff (1 s doubling to 30 s) fits in the outage budget', () => {
    assert.equal(attemptsWithin(0), 1);
    assert.equal(attemptsWithin(4_000), 3, 'at 0, 1 and 3 s; the next would start at 7 s');
    assert.equal(attemptsWithin(600_000), 24, '1+2+4+8+16 s, then 18 waits of 30 s: 571 s');
  });

  test('read-only tools run locally, side by side, each with its summary; the refund request stays a remote activity', async (t) => {
    const { id, history, events } = await runReply({});
    const seen = await toolCallsIn(events);
    t.diagnostic(`${events.length} events`);
    assert.deepEqual(
      seen.map((c) => [c.type, c.local, c.summary]),
      [
        ['get_order', true, 'get_order: order 5102'],
        ['get_tracking_events', true, 'get_tracking_events: order 5102'],
        ['request_refund', false, 'request_refund: order 5102'],
        ['get_payments', true, 'get_payments: order 5102'],
        ['lookup_policy', true, 'lookup_policy: topic parcel marked delivered but not received'],
      ],
    );
    assert.equal(seen[0]!.task, seen[1]!.task, 'the first two reads ran in one workflow task, side by side');
    assert.equal(seen[3]!.task, seen[4]!.task, 'so did the two after the refund request');
    assert.notEqual(seen[1]!.task, seen[3]!.task, 'the reads after the request waited for it');
    await Worker.runReplayHistory({ workflowsPath: require.resolve('../src/workflows'), dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app) }, history, id);
  });

  test('with CASEWORK_LOCAL_READ_TOOLS=false every call is a remote activity, each after the one before', async (t) => {
    const { id, history, events } = await runReply({ CASEWORK_LOCAL_READ_TOOLS: 'false' });
    const seen = await toolCallsIn(events);
    t.diagnostic(`${events.length} events`);
    assert.deepEqual(
      seen.map((c) => [c.type, c.local]),
      [
        ['get_order', false],
        ['get_tracking_events', false],
        ['request_refund', false],
        ['get_payments', false],
        ['lookup_policy', false],
      ],
    );
    assert.equal(new Set(seen.map((c) => c.task)).size, seen.length, 'each was scheduled by a workflow task of its own');
    assert.ok(
      seen.every((c) => c.summary.startsWith(`${c.type}: `)),
      'each shows its summary',
    );
    await Worker.runReplayHistory({ workflowsPath: require.resolve('../src/workflows'), dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app) }, history, id);
  });
});
