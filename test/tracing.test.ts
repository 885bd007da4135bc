import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { waitUntilSettled } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { startTracing, type Tracing } from '../src/observability/tracing';
import { tracingActivityInterceptors, tracingClientInterceptors } from '../src/observability/worker-tracing';
import { startServer, type RunningServer } from '../src/server/start';
import { openTestDatabase, unique } from './support/db';
import { ticket } from './support/investigate';
import { startTestWorker, type TestWorker } from './support/temporal';

// One trace per customer message: the event's HTTP request, the ticket gate, signal-with-start,
// the workflow run, every activity it schedules and each model call, recorded by the SDK's
// in-memory exporter while a real worker (real Temporal, real Postgres, the offline
// investigator) handles a real request. The context crosses Temporal in headers, so the
// workflow's and the activities' spans are in the request's trace, under their parents; the
// model call has the GenAI attributes; no attribute or event holds what the customer wrote.

const KEY = 'tk_tracing_0123456789abcdef';
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let db: Database;
let tw: TestWorker;
let server: RunningServer;

// Words no span may carry: the customer's own.
const SECRET = `Zebra quartz ${unique('phrase')}`;
const MESSAGE = `Hello, where is my order 99999? It has not arrived. ${SECRET}`;

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** Waits until a span matching `name` has been exported (workflow spans leave through a sink after their activation). */
async function spanNamed(name: RegExp): Promise<ReadableSpan> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await tracing.flush();
    const found = exporter.getFinishedSpans().find((s) => name.test(s.name));
    if (found) return found;
    if (Date.now() > deadline)
      assert.fail(
        `no span ${name} among: ${exporter
          .getFinishedSpans()
          .map((s) => s.name)
          .join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

const parentOf = (span: ReadableSpan) => span.parentSpanId;

describe('tracing one customer message', () => {
  before(async () => {
    // Off unless configured: no provider, no interceptors.
    assert.equal(startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: undefined }, { serviceName: 'casework-test' }), undefined);
    assert.deepEqual(tracingActivityInterceptors(undefined), []);
    assert.equal(tracingClientInterceptors(undefined), undefined);
    tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: undefined }, { serviceName: 'casework-test', exporter })!;
    assert.ok(tracing);
    db = await openTestDatabase({ seed: true });
    tw = await startTestWorker({ pool: db.app });
    server = await startServer({ client: tw.client, pool: db.app, config: { ...tw.config, CASEWORK_API_KEYS: `${KEY}:*` }, log: () => undefined }, 0);
  });
  after(async () => {
    await server?.close();
    await tw?.stop();
    await db?.close();
    await tracing?.shutdown();
  });

  test('is one trace from the HTTP request through the gate, signal-with-start, the workflow and its activities to the model call', async () => {
    const event = ticket('cust_dana', MESSAGE);
    const sent = await post('/events', event);
    assert.equal(sent.status, 202);
    const workflowId = sent.body.workflowId!;
    const settled = await waitUntilSettled(tw.client, workflowId);
    assert.equal(settled.status, 'waiting_for_customer');
    // Closing the ticket ends the run, so its own span is exported too.
    assert.equal((await post('/events', { ...event, type: 'ticket.closed', eventId: unique('evt'), message: '' })).status, 202);
    await tw.client.workflow.getHandle(workflowId).result();

    const run = await spanNamed(/^RunWorkflow:investigation$/);
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === run.spanContext().traceId);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const named = (pattern: RegExp) => spans.filter((s) => pattern.test(s.name));
    const one = (pattern: RegExp) => {
      const found = named(pattern);
      assert.equal(found.length, 1, `one ${pattern} in the trace, got ${found.map((s) => s.name).join(', ') || 'none'}`);
      return found[0]!;
    };

    const http = one(/^POST \/events$/);
    assert.equal(parentOf(http), undefined, 'the HTTP request is the root');
    assert.equal(http.attributes['http.response.status_code'], 202);
    const gate = one(/^casework\.ticket_gate$/);
    assert.equal(parentOf(gate), http.spanContext().spanId);
    assert.equal(gate.attributes['casework.gate.admission'], 'deliver');
    const start = one(/^SignalWithStartWorkflow:investigation$/);
    assert.equal(parentOf(start), http.spanContext().spanId);
    assert.equal(parentOf(run), start.spanContext().spanId, 'the workflow run continues the request’s trace across Temporal');

    const scheduled = named(/^StartActivity:/);
    for (const s of scheduled) assert.equal(parentOf(s), run.spanContext().spanId, `${s.name} is scheduled by the run`);
    const types = new Set(scheduled.map((s) => s.name.slice('StartActivity:'.length)));
    for (const type of ['loadMemory', 'get_order', 'recordCase']) assert.ok(types.has(type), `the run scheduled ${type} (scheduled: ${[...types].join(', ')})`);
    assert.ok(types.has('callModel') || types.has('callModelOnPlan'), 'the run scheduled the model step');

    const executed = named(/^RunActivity:/);
    assert.ok(executed.length >= scheduled.length, 'every scheduled activity ran in a span');
    for (const s of executed) {
      const parent = byId.get(parentOf(s)!);
      assert.ok(parent && parent.name === `StartActivity:${s.name.slice('RunActivity:'.length)}`, `${s.name} runs under its StartActivity span`);
      assert.equal(s.attributes['temporal.activity.attempt'], 1);
    }

    const chats = named(/^chat /);
    assert.ok(chats.length >= 1, 'the model calls are spans');
    for (const chat of chats) {
      assert.match(byId.get(parentOf(chat)!)?.name ?? '', /^RunActivity:(callModel|callModelOnPlan|compactConversation|compactFromLog)$/, 'a model call runs inside its activity');
      const a = chat.attributes;
      assert.equal(a['gen_ai.operation.name'], 'chat');
      assert.equal(typeof a['gen_ai.request.model'], 'string');
      assert.equal(chat.name, `chat ${String(a['gen_ai.request.model'])}`);
      assert.equal(typeof a['gen_ai.response.model'], 'string');
      assert.ok((a['gen_ai.usage.input_tokens'] as number) > 0);
      assert.ok((a['gen_ai.usage.output_tokens'] as number) > 0);
      assert.equal(typeof a['gen_ai.usage.cache_read.input_tokens'], 'number');
      assert.equal(typeof a['gen_ai.usage.cache_creation.input_tokens'], 'number');
      assert.ok(Array.isArray(a['gen_ai.response.finish_reasons']) && (a['gen_ai.response.finish_reasons'] as string[]).length === 1);
    }
    // The closing event is a trace of its own: its request, the gate, the signal, and the run handling it.
    const closing = exporter
      .getFinishedSpans()
      .filter((s) => s.name === 'POST /events' && s.spanContext().traceId !== http.spanContext().traceId && s.attributes['http.response.status_code'] === 202);
    assert.equal(closing.length, 1, 'the closing event has its own trace');
    const closingTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === closing[0]!.spanContext().traceId);
    const closingStart = closingTrace.find((s) => /^Signal(WithStart)?Workflow:/.test(s.name));
    assert.ok(closingStart, `the closing event signals the run (${closingTrace.map((s) => s.name).join(', ')})`);
    const handled = closingTrace.filter((s) => s.name.startsWith('HandleSignal:'));
    assert.equal(handled.length, 1, `the run handles the closing signal in that trace (${closingTrace.map((s) => s.name).join(', ')})`);
    assert.equal(parentOf(handled[0]!), closingStart.spanContext().spanId);

    const stepTokens = chats
      .filter((c) => c.attributes['casework.model.purpose'] === 'investigate')
      .reduce((sum, c) => sum + (c.attributes['gen_ai.usage.output_tokens'] as number), 0);
    assert.equal(stepTokens, settled.totals.output_tokens, 'the spans count the tokens the case reports');
  });

  test('no span carries what the customer wrote, in an attribute, an event or a status', () => {
    const spans = exporter.getFinishedSpans();
    assert.ok(spans.length > 10);
    const words = [SECRET, MESSAGE, 'has not arrived'];
    for (const span of spans) {
      const carried = JSON.stringify({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
        resource: span.resource.attributes,
        links: span.links,
      });
      for (const text of words) assert.ok(!carried.includes(text), `${span.name} carries customer text: ${carried.slice(0, 400)}`);
    }
    // Nor the workflow's memo and search attributes, which the SDK would copy onto workflow spans.
    for (const span of spans.filter((s) => s.name.startsWith('RunWorkflow'))) {
      assert.deepEqual(
        Object.keys(span.attributes).filter((k) => /memo|searchAttributes|customer/i.test(k)),
        [],
      );
    }
  });
});
