import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { createToolActivities } from '../src/activities/tools';
import { deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { historySizes } from '../src/dev/bench/workflow';
import { transcriptCommand } from '../src/main/commands/transcript';
import type { InvestigationInput } from '../src/schemas/investigation';
import type { ToolCall } from '../src/schemas/tool-call';
import { dataConverterFor } from '../src/temporal/data-converter';
import { decodeHistoryPayloads } from '../src/temporal/history-payloads';
import { settingsWith, ticket } from './support/investigate';
import { seededWorker } from './support/temporal';

// History by reference: a long investigation with ~4,000-token tool results keeps every result
// word for word in the transcript log (read back with `casework transcript`), while its history
// grows by a few KB a step and what it carries into each continuation stays small.

const ctx = seededWorker();

/** The carried state's bound at continue-as-new (issue #12). */
const CARRIED_LIMIT = 64 * 1024;
/**
 * History bytes per step, on average over every run of the investigation: the target.
 * Measured here at 3,040 bytes a step over 121 steps with a continuation every 40 (compact step
 * plans; 4,374 before them, and ~22 KB a step before the transcript log, when the run grew with
 * its context).
 */
const HISTORY_PER_STEP_LIMIT = 4 * 1024;

test('a long run with large results keeps every result word for word across continue-as-new, within its history and carried-state bounds', async () => {
  // Tracking pages of order 5102 become ~4,000 tokens each (five events of ~3,150 characters), in this file's own database.
  await ctx.db.admin.query(
    `UPDATE tracking_events SET description = left(description || ' ' || repeat('Sorting-centre scan ' || event_id || ', conveyor belt read, bag sealed. ', 80), 3150) WHERE order_id = '5102'`,
  );
  const settings = settingsWith({ CASEWORK_MAX_STEPS: '150', CASEWORK_MAX_STEPS_PER_RUN: '40' });
  const event = ticket('cust_dana', 'Scripted long investigation of order 5102. #drill:120');
  const workflowId = `investigation-${event.ticketId}`;
  await deliverEvent(ctx.tw.client, ctx.db.app, event, { taskQueue: ctx.tw.taskQueue, settings });
  const done = await waitUntilSettled(ctx.tw.client, workflowId, { afterStep: 120, timeoutMs: 600_000 });
  assert.match(done.lastReply ?? '', /Drill finished after 120 tool calls/);
  assert.ok(done.continuedAsNew >= 2, `continued as new ${done.continuedAsNew} times`);

  // Every tracking result, read back through `casework transcript --json`, is what the tool answers for that call.
  const lines: string[] = [];
  assert.equal(await transcriptCommand([workflowId, '--json'], { ...ctx.tw.config, DATABASE_URL: ctx.db.url }, (l) => lines.push(l)), 0);
  const entries = JSON.parse(lines.join('\n')) as { seq: number; block: { type: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: string } }[];
  const tools = createToolActivities({ pool: ctx.db.app });
  const inputs = new Map(entries.filter((e) => e.block.type === 'tool_use' && e.block.name === 'get_tracking_events').map((e) => [e.block.id!, e.block.input]));
  const results = entries.filter((e) => e.block.type === 'tool_result' && inputs.has(e.block.tool_use_id!));
  assert.equal(results.length, inputs.size, 'every tracking call has its result in the log');
  assert.ok(results.length >= 90, `${results.length} tracking results`);
  for (const { block } of results) {
    const call: ToolCall = {
      name: 'get_tracking_events',
      input: inputs.get(block.tool_use_id!),
      context: { workflowId, ticketId: event.ticketId, customerId: 'cust_dana', toolUseId: block.tool_use_id! },
    };
    const fresh = await tools.get_tracking_events(call);
    assert.equal(block.content, fresh.content, `result ${block.tool_use_id} word for word`);
    assert.ok(fresh.content.length > 12_000, 'a result of about 4,000 tokens');
  }
  assert.deepEqual(
    entries.map((e) => e.seq),
    [...entries.map((e) => e.seq)].sort((a, b) => a - b),
    'in order',
  );

  // The bounds, from the server's own figures.
  const runs = await historySizes(ctx.tw.client, workflowId);
  const bytes = runs.reduce((n, r) => n + r.bytes, 0);
  assert.ok(bytes / done.step <= HISTORY_PER_STEP_LIMIT, `history ${bytes} bytes over ${done.step} steps: ${Math.round(bytes / done.step)} bytes a step`);
  const converter = ctx.tw.client.options.loadedDataConverter;
  for (const run of runs.slice(1)) {
    const history = await ctx.tw.client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes as temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes;
    const [input] = (await decodeHistoryPayloads(converter, started.input?.payloads)) as InvestigationInput[];
    const carried = Buffer.byteLength(JSON.stringify(input?.carried));
    assert.ok(carried <= CARRIED_LIMIT, `run ${run.runId} started with ${carried} bytes of carried state`);
    assert.ok((input?.carried?.transcript.length ?? 0) < 40, 'only the live tail is carried');
  }

  // A history recorded by reference replays against the code that recorded it.
  const last = runs[runs.length - 1]!;
  const history = await ctx.tw.client.workflow.getHandle(workflowId, last.runId).fetchHistory();
  await Worker.runReplayHistory(
    {
      ...(process.env.CASEWORK_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE } } : { workflowsPath: require.resolve('../src/workflows') }),
      dataConverter: dataConverterFor(ctx.tw.config, ctx.db.app),
    },
    history,
    workflowId,
  );
});

test('the status counts every step: the latest records in the answer, older ones in the transcript log', async () => {
  const settings = settingsWith({ CASEWORK_MAX_STEPS: '80' });
  const event = ticket('cust_dana', 'Scripted long investigation of order 5102. #drill:60');
  const workflowId = `investigation-${event.ticketId}`;
  await deliverEvent(ctx.tw.client, ctx.db.app, event, { taskQueue: ctx.tw.taskQueue, settings });
  const done = await waitUntilSettled(ctx.tw.client, workflowId, { afterStep: 60, timeoutMs: 300_000 });
  assert.equal(done.steps.length, 50);
  assert.equal(done.steps.length + (done.stepsInLog ?? 0), done.step);
  assert.equal(done.steps.at(-1)?.step, done.step);
  const { rows } = await ctx.db.admin.query("SELECT count(*)::int AS n FROM transcript_log WHERE workflow_id = $1 AND kind = 'step'", [workflowId]);
  // The record moved out by the last step waits in the carried state for the next activity to write it.
  assert.ok(rows[0].n >= (done.stepsInLog ?? 0) - 1 && rows[0].n <= (done.stepsInLog ?? 0), `${rows[0].n} step records in the log, ${done.stepsInLog} moved`);
});
