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
// the workflow's handling of it, every activity it causes and each model call, for the first
// message, a follow-up to the same run and the closing event alike, recorded by the SDK's
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
const FOLLOW_UP = `Any news? I checked with the neighbours again. ${SECRET}`;

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

  test('each customer message is one trace, from its HTTP request through the gate, the signal and the workflow to every activity and model call it causes', async () => {
    const event = ticket('cust_dana', MESSAGE);
    const sent = await post('/events', event);
    assert.equal(sent.status, 202);
    const workflowId = sent.body.workflowId!;
    const first = await waitUntilSettled(tw.client, workflowId);
    assert.equal(first.status, 'waiting_for_customer');
    // The customer writes again: the run is the same, the trace is the follow-up's own.
    const followUp = await post('/events', { ...event, type: 'ticket.message', eventId: unique('evt'), message: FOLLOW_UP });
    assert.equal(followUp.status, 202);
    const second = await waitUntilSettled(tw.client, workflowId, { afterStep: first.step });
    assert.equal(second.status, 'waiting_for_customer');
    assert.ok(second.totals.output_tokens > first.totals.output_tokens, 'the follow-up was answered by the model');
    // Closing the ticket ends the run, so its own span is exported too.
    assert.equal((await post('/events', { ...event, type: 'ticket.closed', eventId: unique('evt'), message: '' })).status, 202);
    await tw.client.workflow.getHandle(workflowId).result();

    const run = await spanNamed(/^RunWorkflow:investigation$/);
    const all = () => exporter.getFinishedSpans();
    const traceOf = (root: ReadableSpan) => all().filter((s) => s.spanContext().traceId === root.spanContext().traceId);
    const roots = all().filter((s) => s.name === 'POST /events' && s.attributes['http.response.status_code'] === 202);
    assert.equal(roots.length, 3, 'three events, three requests');
    assert.equal(new Set(roots.map((r) => r.spanContext().traceId)).size, 3, 'each request began a trace of its own');
    const [firstRoot, secondRoot, closingRoot] = roots.sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    assert.equal(firstRoot!.spanContext().traceId, run.spanContext().traceId, 'the run belongs to the first message’s trace');

    /** The tree of one message's trace, checked link by link; its investigate model calls' output tokens. */
    const checkMessageTrace = (root: ReadableSpan, signal: 'customerMessage' | 'closeTicket', label: string) => {
      const spans = traceOf(root);
      const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
      const named = (pattern: RegExp) => spans.filter((s) => pattern.test(s.name));
      const one = (pattern: RegExp) => {
        const found = named(pattern);
        assert.equal(found.length, 1, `${label}: one ${pattern} in the trace, got ${found.map((s) => s.name).join(', ') || 'none'}`);
        return found[0]!;
      };
      assert.equal(parentOf(root), undefined, `${label}: the HTTP request is the root`);
      const gate = one(/^casework\.ticket_gate$/);
      assert.equal(parentOf(gate), root.spanContext().spanId);
      assert.equal(gate.attributes['casework.gate.admission'], 'deliver');
      // A message signals with start (the run may have ended); closing signals the run it closes.
      const start = one(signal === 'closeTicket' ? /^SignalWorkflow:closeTicket$/ : /^SignalWithStartWorkflow:investigation$/);
      assert.equal(parentOf(start), root.spanContext().spanId);
      const handled = one(new RegExp(`^HandleSignal:${signal}$`));
      assert.equal(parentOf(handled), start.spanContext().spanId, `${label}: the run handles the message in the request’s trace, across Temporal`);
      // The activities this message caused: scheduled under its signal (or the run, for the first), run under their scheduling.
      const turn = new Set([handled.spanContext().spanId, ...(root === firstRoot ? [run.spanContext().spanId] : [])]);
      const scheduled = named(/^StartActivity:/);
      assert.ok(scheduled.length > 0, `${label}: the message caused activities in its trace`);
      for (const s of scheduled) assert.ok(turn.has(parentOf(s)!), `${label}: ${s.name} is scheduled by the message’s turn`);
      const executed = named(/^RunActivity:/);
      assert.ok(executed.length >= scheduled.length, `${label}: every scheduled activity ran in a span`);
      for (const s of executed) {
        const parent = byId.get(parentOf(s)!);
        assert.ok(parent && parent.name === `StartActivity:${s.name.slice('RunActivity:'.length)}`, `${label}: ${s.name} runs under its StartActivity span`);
        assert.equal(s.attributes['temporal.activity.attempt'], 1);
      }
      const chats = named(/^chat /);
      for (const chat of chats) {
        assert.match(
          byId.get(parentOf(chat)!)?.name ?? '',
          /^RunActivity:(callModel|callModelOnPlan|compactConversation|compactFromLog)$/,
          'a model call runs inside its activity',
        );
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
      const types = new Set(scheduled.map((s) => s.name.slice('StartActivity:'.length)));
      const tokens = chats
        .filter((c) => c.attributes['casework.model.purpose'] === 'investigate')
        .reduce((sum, c) => sum + (c.attributes['gen_ai.usage.output_tokens'] as number), 0);
      return { types, chats: chats.length, tokens };
    };

    const one = checkMessageTrace(firstRoot!, 'customerMessage', 'first message');
    for (const type of ['loadMemory', 'get_order']) assert.ok(one.types.has(type), `the first message’s turn scheduled ${type} (scheduled: ${[...one.types].join(', ')})`);
    assert.ok(one.types.has('callModel') || one.types.has('callModelOnPlan'), 'the first message’s turn called the model');
    assert.equal(one.tokens, first.totals.output_tokens, 'the first trace holds exactly the model calls the first message caused');

    const two = checkMessageTrace(secondRoot!, 'customerMessage', 'follow-up');
    assert.ok(two.types.has('callModel') || two.types.has('callModelOnPlan'), `the follow-up’s turn called the model in its own trace (scheduled: ${[...two.types].join(', ')})`);
    assert.ok(two.chats >= 1, 'the follow-up’s model calls are spans of its trace');
    assert.equal(two.tokens, second.totals.output_tokens - first.totals.output_tokens, 'the follow-up’s trace holds exactly the model calls it caused, none of the first’s');

    const closing = checkMessageTrace(closingRoot!, 'closeTicket', 'closing event');
    assert.ok(closing.types.has('recordCase'), `closing the ticket records the case in the closing event’s trace (scheduled: ${[...closing.types].join(', ')})`);
    assert.equal(closing.tokens, 0);
  });

  test('no span carries what the customer wrote, in an attribute, an event or a status', () => {
    const spans = exporter.getFinishedSpans();
    assert.ok(spans.length > 10);
    const words = [SECRET, MESSAGE, FOLLOW_UP, 'has not arrived', 'checked with the neighbours'];
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
