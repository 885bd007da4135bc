import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { startMetricsEndpoint, type MetricsEndpoint } from '../src/observability/endpoint';
import { installTelemetry } from '../src/observability/logging';
import { METRIC } from '../src/observability/metrics';
import { TEMPORAL_RUNTIME_METRICS } from '../src/observability/metric-catalog';
import { WORKFLOW_METRIC } from '../src/schemas/workflow-metrics';
import type { TicketEvent } from '../src/schemas/event';
import { ApplicationFailure } from '@temporalio/common';
import type { Model } from '../src/model/port';
import { createOfflineModel } from '../src/model/offline';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { approvalAgesFrom } from '../src/observability/approval-ages';
import { EMBEDDED_SHARED_SESSION, openTestDatabase, unique } from './support/db';
import { example, send } from './support/investigate';
import { startTestWorker, type TestWorker } from './support/temporal';
import { freePort } from './support/net';

// What an operator scrapes and reads: the worker's /metrics (casework's counters, Node's
// defaults and the Temporal runtime's own) moves by exactly what the investigation reports
// about itself, and its log lines name the workflow and customer but never quote them.

/** One sample of a Prometheus text exposition, 0 when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return 0;
}

/** The sum of a metric's samples over every value of `over`, among `values`. */
function sumOver(text: string, name: string, over: string, values: string[], labels: Record<string, string> = {}): number {
  return values.reduce((sum, value) => sum + sample(text, name, { ...labels, [over]: value }), 0);
}

/** Marks a message whose model call the test double below rejects, as the API rejects a request it can never pass. */
const REJECT_MARKER = '#metrics-test-reject';

/**
 * A test double in front of the offline investigator: a conversation carrying REJECT_MARKER is
 * answered with the non-retryable failure the model port maps an API 400 to; every other call
 * goes through.
 */
function rejectingOnMarker(inner: Model): Model {
  return {
    label: inner.label,
    offline: inner.offline,
    create(request) {
      if (JSON.stringify(request.messages).includes(REJECT_MARKER)) {
        return Promise.reject(
          ApplicationFailure.create({ type: 'ModelRequestRejected', nonRetryable: true, message: 'invalid_request_error: the test double rejects this request' }),
        );
      }
      return inner.create(request);
    },
  };
}

const lines: string[] = [];
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
// Purposes whose usage the workflow adds to its own totals (bulk-read helpers report theirs in the tool result).
const ACCOUNTED = ['investigate', 'compact'];

let db: Database;
let tw: TestWorker;
let endpoint: MetricsEndpoint;
const sent: TicketEvent[] = [];

async function scrape(): Promise<string> {
  const response = await fetch(`${endpoint.url}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
  return response.text();
}

async function run(event: TicketEvent): Promise<InvestigationStatus> {
  sent.push(event);
  return send(tw, event);
}

describe('worker metrics and logs', () => {
  before(async () => {
    const env = {
      CASEWORK_METRICS_PORT: String(await freePort()),
      CASEWORK_TEMPORAL_METRICS_PORT: String(await freePort()),
      CASEWORK_METRICS_VISIBILITY_SECONDS: '0',
      CASEWORK_LOG_LEVEL: 'info',
      CASEWORK_LOG_FORMAT: 'json',
    };
    // Before any connection, as connectWorker does it, but keeping the lines to read them.
    const telemetry = installTelemetry(loadConfig({ ...process.env, ...env }), { write: (line) => lines.push(line) });
    assert.ok(telemetry.installed, 'this test process installs the Temporal runtime itself');
    db = await openTestDatabase({ seed: true });
    // The worker bundles its workflows as `casework worker` does, so the workflow interceptors
    // (customer, ticket and step on workflow log lines) are in the bundle.
    delete process.env.CASEWORK_WORKFLOW_BUNDLE;
    tw = await startTestWorker({ pool: db.app, env, model: rejectingOnMarker(createOfflineModel()) });
    endpoint = await startMetricsEndpoint({
      config: tw.config,
      temporalMetricsPort: telemetry.temporalMetricsPort,
      client: tw.client,
      health: () => ({ ok: tw.worker.getState() === 'RUNNING', worker: tw.worker.getState() }),
      admin: { pool: db.admin, approvalReminderSeconds: tw.config.CASEWORK_APPROVAL_REMINDER_HOURS * 3600 },
    });
  });
  after(async () => {
    await endpoint?.close();
    await tw?.stop();
    await db?.close();
  });

  let paused: InvestigationStatus;

  test('the model-call and token counters move by exactly what the run reports about itself', async () => {
    const before = await scrape();
    paused = await run(example('dana-5102'));
    assert.equal(paused.status, 'awaiting_approval');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);

    assert.equal(delta(METRIC.modelCalls, { purpose: 'investigate', outcome: 'ok' }), paused.steps.length, 'one counted call per step');
    assert.equal(paused.steps.length, paused.step);
    const tokens = (kind: string) =>
      sumOver(after, METRIC.modelInputTokens, 'purpose', ACCOUNTED, { kind }) - sumOver(before, METRIC.modelInputTokens, 'purpose', ACCOUNTED, { kind });
    assert.equal(tokens('uncached'), paused.totals.input_tokens);
    assert.equal(tokens('cache_write'), paused.totals.cache_creation_input_tokens);
    assert.equal(tokens('cache_read'), paused.totals.cache_read_input_tokens);
    assert.ok(paused.totals.input_tokens + paused.totals.cache_read_input_tokens > 0, 'the run used tokens');
    const output = sumOver(after, METRIC.modelOutputTokens, 'purpose', ACCOUNTED) - sumOver(before, METRIC.modelOutputTokens, 'purpose', ACCOUNTED);
    assert.equal(output, paused.totals.output_tokens);
    // The cost counter, at the same prices, says what the run says it cost.
    const cost = sumOver(after, METRIC.modelCost, 'purpose', ACCOUNTED) - sumOver(before, METRIC.modelCost, 'purpose', ACCOUNTED);
    assert.ok(paused.totals.cost_usd > 0);
    assert.ok(Math.abs(cost - paused.totals.cost_usd) < 1e-9, `counted $${cost}, the run says $${paused.totals.cost_usd}`);
    // Every activity attempt is timed by type: the memory recall at the start of the turn and each model call.
    assert.ok(delta(`${METRIC.activitySeconds}_count`, { activity: 'loadMemory', outcome: 'ok' }) >= 1, 'the memory recall is timed');
    const modelSteps = ['callModel', 'callModelOnPlan'].reduce((sum, activity) => sum + delta(`${METRIC.activitySeconds}_count`, { activity, outcome: 'ok' }), 0);
    assert.equal(modelSteps, paused.steps.length, 'one timed model activity per step');

    // The hit ratio is what the counters say it is.
    const kinds = ['uncached', 'cache_write', 'cache_read'].map((kind) => sample(after, METRIC.modelInputTokens, { purpose: 'investigate', kind }));
    const ratio = sample(after, METRIC.cacheHitRatio, { purpose: 'investigate' });
    const [uncached = 0, cacheWrite = 0, cacheRead = 0] = kinds;
    assert.ok(Math.abs(ratio - cacheRead / (uncached + cacheWrite + cacheRead)) < 1e-9, `hit ratio ${ratio}`);

    // Every tool the run called is counted by name.
    for (const tool of new Set(paused.steps.flatMap((s) => s.tools))) {
      if (tool === 'write_notes' || tool === 'read_notes') continue; // run in the workflow, not as activities
      assert.ok(delta(METRIC.toolCalls, { tool, outcome: 'ok' }) >= 1, `${tool} counted`);
    }
  });

  test('the approvals-waiting gauge counts the paused run from Temporal visibility', async () => {
    const deadline = Date.now() + 15_000;
    let waiting = 0;
    while (Date.now() < deadline) {
      waiting = sample(await scrape(), METRIC.approvalsWaiting);
      if (waiting === 1) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.equal(waiting, 1, 'exactly the one investigation on this test task queue awaits approval');
    assert.equal(sample(await scrape(), METRIC.investigationsOpen, { status: 'awaiting_approval' }), 1);
  });

  test('the approval gauges show the waiting request against the reminder and the automatic denial', async () => {
    const text = await scrape();
    const waited = sample(text, METRIC.approvalOldestWait);
    assert.ok(waited > 0 && waited < 3600, `the request has waited ${waited} s, since this run asked`);
    assert.equal(sample(text, METRIC.approvalsPastReminder), 0, 'nobody is late yet: the reminder is a day away');
    assert.equal(sample(text, METRIC.approvalReminder), tw.config.CASEWORK_APPROVAL_REMINDER_HOURS * 3600);
    assert.equal(sample(text, METRIC.approvalAutoDeny), tw.config.CASEWORK_APPROVAL_TIMEOUT_HOURS * 3600);
    assert.equal(sample(text, METRIC.caseBudget), tw.config.CASEWORK_CASE_BUDGET_USD);
    // With a reminder already due, the same request is one nobody acted on.
    const late = approvalAgesFrom(db.admin, { reminderSeconds: 0, refreshMs: 0 });
    assert.deepEqual(await late().then((a) => ({ waiting: a.waiting, pastReminder: a.pastReminder })), { waiting: 1, pastReminder: 1 });
  });

  test('the approval ages refuse to read under a role that row-level security would blind', async () => {
    // The app role sees no customer's rows without a customer set: a silent 0 would hide a queue.
    const blind = approvalAgesFrom(db.app, { reminderSeconds: 0, refreshMs: 0 });
    if (EMBEDDED_SHARED_SESSION) return; // the embedded server has one superuser session for both pools
    await assert.rejects(blind(), /row-level security|row_security|permission/i);
  });

  test('the worker reports itself polling and Postgres and Temporal reachable', async () => {
    const text = await scrape();
    assert.equal(sample(text, METRIC.workerPolling), 1);
    assert.equal(sample(text, METRIC.dependencyUp, { dependency: 'postgres' }), 1);
    assert.equal(sample(text, METRIC.dependencyUp, { dependency: 'temporal' }), 1);
  });

  test('a tool error the model reads is counted against its tool', async () => {
    const before = await scrape();
    const status = await run(example('dana-5102', { message: 'Hello, where is my order 99999? It has not arrived.' }));
    assert.equal(status.status, 'waiting_for_customer');
    const after = await scrape();
    const errors = sample(after, METRIC.toolErrors, { tool: 'get_order', kind: 'result' }) - sample(before, METRIC.toolErrors, { tool: 'get_order', kind: 'result' });
    assert.ok(errors >= 1, 'the unknown order is a get_order error');
    assert.equal(sample(after, METRIC.toolCalls, { tool: 'get_order', outcome: 'error' }) - sample(before, METRIC.toolCalls, { tool: 'get_order', outcome: 'error' }), errors);
    // A follow-up on the same ticket: its signal is logged with the step the run has reached.
    await run({ ...sent.at(-1)!, type: 'ticket.message', eventId: unique('evt'), message: 'Thanks, I will look for the right number.' });
  });

  test('a closed case is counted once, with what it cost', async () => {
    const before = await scrape();
    const last = sent.at(-1)!;
    const closed = await send(tw, { ...last, type: 'ticket.closed', eventId: unique('evt'), message: '' });
    assert.equal(closed.status, 'closed');
    const after = await scrape();
    assert.equal(sample(after, METRIC.casesRecorded) - sample(before, METRIC.casesRecorded), 1);
    // The workflow's own histogram (through the Temporal runtime) holds the case's cost as the case reports it.
    const labels = { taskQueue: tw.taskQueue, workflowType: 'investigation' };
    assert.equal(sample(after, `${WORKFLOW_METRIC.caseCost}_count`, labels) - sample(before, `${WORKFLOW_METRIC.caseCost}_count`, labels), 1);
    const cost = sample(after, `${WORKFLOW_METRIC.caseCost}_sum`, labels) - sample(before, `${WORKFLOW_METRIC.caseCost}_sum`, labels);
    assert.ok(Math.abs(cost - closed.totals.cost_usd) < 1e-6, `recorded $${cost}, the case says $${closed.totals.cost_usd}`);
    assert.match(after, new RegExp(`^${WORKFLOW_METRIC.caseCost}_bucket\\{[^}]*le="0\\.05"\\}`, 'm'), 'buckets in dollars, not the runtime’s millisecond defaults');
  });

  test('a case handed to a person is counted once, by its reason, and shows among the open statuses', async () => {
    const before = await scrape();
    const labels = { taskQueue: tw.taskQueue, workflowType: 'investigation', reason: 'model_failed' };
    const held = await send(tw, example('dana-5102', { message: `Where is my parcel? ${REJECT_MARKER}` }));
    assert.equal(held.status, 'needs_human');
    let after = await scrape();
    assert.equal(sample(after, WORKFLOW_METRIC.handOffs, labels) - sample(before, WORKFLOW_METRIC.handOffs, labels), 1);
    const deadline = Date.now() + 15_000;
    while (sample(after, METRIC.investigationsOpen, { status: 'needs_human' }) !== 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      after = await scrape();
    }
    assert.equal(sample(after, METRIC.investigationsOpen, { status: 'needs_human' }), 1);
  });

  test('one scrape carries the Temporal runtime metrics and Node defaults too, and /healthz reports the worker', async () => {
    const text = await scrape();
    assert.match(text, /^temporal_\w+/m, 'Temporal runtime metrics are merged into the same endpoint');
    assert.match(text, /^temporal_workflow_task_execution_latency\w*\{/m);
    // The runtime metrics the dashboard and alert rules read are there under these very names.
    for (const name of TEMPORAL_RUNTIME_METRICS) assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is exported`);
    assert.ok(sample(text, 'process_cpu_user_seconds_total') > 0, 'prom-client default metrics');
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    const health = await fetch(`${endpoint.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { worker: string }).worker, 'RUNNING');
  });

  test('info-level log lines carry workflow id and customer, and never a customer message', async () => {
    await new Promise((r) => setTimeout(r, 300)); // the runtime logger sorts lines in 100 ms batches
    const records = logged();
    const info = records.filter((r) => r.level === 'info');
    const modelLine = info.find((r) => r.msg === 'model call' && r.workflowId === paused.workflowId);
    assert.ok(modelLine, 'each model call is logged with its workflow id');
    assert.equal(typeof modelLine.input_tokens, 'number');
    assert.equal(modelLine.purpose, 'investigate');
    const toolLine = info.find((r) => r.msg === 'tool call' && r.workflowId === paused.workflowId);
    assert.ok(toolLine, 'each tool call is logged');
    assert.equal(toolLine.customerId, paused.customerId, 'tool lines name the authenticated customer');
    const followUp = info.find((r) => r.msg === 'signal received' && r.workflowId === `investigation-${sent.at(-1)!.ticketId}` && r.step !== undefined);
    assert.ok(followUp, 'workflow lines carry the step once the run has one');
    assert.equal(followUp.customerId, paused.customerId);
    assert.ok((followUp.step as number) >= 1);

    for (const event of sent) {
      const phrase = event.message.slice(0, 40);
      for (const line of lines) assert.ok(!line.includes(phrase), `a log line quotes the customer: ${line}`);
    }
    for (const record of info) {
      for (const key of ['message', 'content', 'memoryBlock', 'transcript']) {
        if (key in record) assert.match(String(record[key]), /^\[redacted/, `${key} is redacted at info level`);
      }
    }
  });
});
