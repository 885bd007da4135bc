import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { PREVIEW_CUT } from '../src/context/references';
import { SYSTEM_PROMPT_SHOWN } from '../src/context/display-expansion';
import { transcriptLines } from '../src/client/transcript-text';
import { DisplayExpander } from '../src/server/codec-expansion';
import { createCodecHandler } from '../src/server/codec-server';
import { customerKeysOf, openTranscriptLog } from '../src/temporal/codec/body-codec';
import { WORKFLOW_ID_METADATA } from '../src/temporal/codec/encryption-codec';
import { codecFor, dataConverterFor } from '../src/temporal/data-converter';
import { findTemporalCli } from '../src/dev/env/temporal-cli';
import { example, send, settingsWith } from './support/investigate';
import { seededWorker } from './support/temporal';

// Decoding for display: the codec server shows a by-reference investigation's history whole —
// each tool result in full as `casework transcript` prints it, each model step as the messages
// it sent — while the payloads the worker reads stay the previews and plans they are. Real dev
// server, real Postgres, the offline investigator (the model's double).

const ctx = seededWorker();
let server: Server;
let base: string;
let workflowId: string;
let expander: DisplayExpander;

type JsonPayload = { metadata: Record<string, string>; data: string };
const toJson = (p: temporal.api.common.v1.IPayload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(p.data, 'base64')),
});

/** Every payload of every event of the history, in order, with the event type it came from. */
async function historyPayloads(): Promise<{ type: string; payload: temporal.api.common.v1.IPayload }[]> {
  const history = await ctx.tw.client.workflow.getHandle(workflowId).fetchHistory();
  const found: { type: string; payload: temporal.api.common.v1.IPayload }[] = [];
  for (const event of history.events ?? []) {
    const type = Object.keys(event).find((k) => k.endsWith('EventAttributes'))!;
    const walk = (value: unknown): void => {
      if (!value || typeof value !== 'object') return;
      if (Array.isArray(value)) return value.forEach(walk);
      const record = value as Record<string, unknown>;
      if ('data' in record && 'metadata' in record && record.metadata && typeof record.metadata === 'object') {
        found.push({ type, payload: record });
        return;
      }
      Object.values(record).forEach(walk);
    };
    walk((event as Record<string, unknown>)[type]);
  }
  return found;
}

/** The codec server's /decode of these payloads, one request as the CLI sends them. */
async function decode(payloads: temporal.api.common.v1.IPayload[]): Promise<unknown[]> {
  const answer = await fetch(`${base}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payloads: payloads.map(toJson) }) });
  assert.equal(answer.status, 200, await answer.clone().text());
  const body = (await answer.json()) as { payloads: JsonPayload[] };
  return body.payloads.map((p) => defaultPayloadConverter.fromPayload(fromJson(p)));
}

// The worker is started by the file's own before hook; the investigation runs once, on first use.
let ready: Promise<void> | undefined;
const setUp = () => (ready ??= runInvestigation());

async function runInvestigation(): Promise<void> {
  const event = example('dana-5102');
  workflowId = `investigation-${event.ticketId}`;
  const status = await send(ctx.tw, event, settingsWith());
  assert.equal(status.status, 'awaiting_approval');
  const codec = codecFor(ctx.tw.config);
  const converter = dataConverterFor(ctx.tw.config, ctx.db.app, { codec });
  expander = new DisplayExpander(openTranscriptLog(ctx.db.app, codec));
  const handler = createCodecHandler({
    codecs: converter.payloadCodecs!,
    externalStorage: converter.externalStorage,
    customerKeys: customerKeysOf(ctx.db.app, codec),
    expander,
    allowedOrigins: [],
  });
  server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
after(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

test('every payload of the history carries the workflow it belongs to, in clear beside the key id', async () => {
  await setUp();
  const payloads = await historyPayloads();
  assert.ok(payloads.length > 20, `${payloads.length} payloads`);
  for (const { type, payload } of payloads) {
    const label = payload.metadata?.[WORKFLOW_ID_METADATA];
    // Stored references name a blob, not a workflow; the blob itself carries the label.
    if (!payload.metadata?.['encryption-key-id']) continue;
    assert.equal(label && Buffer.from(label).toString(), workflowId, `a payload of ${type}`);
  }
});

test('decoded through the codec server, a recorded by-reference history shows no preview: tool results whole, as `casework transcript` prints them', async () => {
  await setUp();
  const payloads = await historyPayloads();
  const decoded = await decode(payloads.map((p) => p.payload));
  const shown = JSON.stringify(decoded);
  assert.ok(!shown.includes(PREVIEW_CUT.trim()), `no preview marker in ${shown.length} characters of decoded history`);

  // The worker's own converter still reads the previews: the history is unchanged.
  const worker = ctx.tw.client.options.loadedDataConverter;
  const outcomes: { content: string; logged: { seq: number } }[] = [];
  for (const { payload } of payloads) {
    const value = await worker.payloadCodecs[0]!.decode([payload]).then(([p]) => defaultPayloadConverter.fromPayload(p!));
    if (value && typeof value === 'object' && 'logged' in value) outcomes.push(value as { content: string; logged: { seq: number } });
  }
  assert.ok(
    outcomes.some((o) => o.content.endsWith(PREVIEW_CUT)),
    'the worker reads previews',
  );

  // Each expanded result is the whole result `casework transcript` prints for that entry.
  const log = openTranscriptLog(ctx.db.app, codecFor(ctx.tw.config));
  const entries = await log.all(workflowId);
  const printed = transcriptLines(entries).join('\n');
  const expanded = decoded.filter((v): v is { content: string; logged: { seq: number } } => !!v && typeof v === 'object' && 'logged' in v);
  assert.equal(expanded.length, outcomes.length);
  for (const outcome of expanded) {
    assert.ok(outcome.content.length > 100, `entry ${outcome.logged.seq} is whole (${outcome.content.length} characters)`);
    assert.ok(printed.includes(`${outcome.content}\n`), `entry ${outcome.logged.seq} reads as casework transcript prints it`);
  }
});

test("a model step's input shows as the messages it sent: the rules by name, the memory block, the customer's words, the tool results", async () => {
  await setUp();
  const payloads = await historyPayloads();
  // A remote call's plan is its activity's input; a local call's (the default) goes back with its reply, in the marker.
  const recorded = payloads.filter((p) => p.type === 'activityTaskScheduledEventAttributes' || p.type === 'markerRecordedEventAttributes').map((p) => p.payload);
  const decoded = ((await decode(recorded)) as Record<string, unknown>[]).map((v) => (v && typeof v === 'object' && 'sent' in v ? (v.sent as Record<string, unknown>) : v));
  const steps = decoded.filter((v) => v && typeof v === 'object' && 'sent_to_the_model' in v) as {
    sent_to_the_model: { system: { text: string }[]; tools: string[]; messages: { role: string; content: { type: string; text?: string; content?: unknown }[] }[] };
    plan: { layout: string };
  }[];
  assert.ok(steps.length >= 3, `${steps.length} model steps`);
  const last = steps.at(-1)!;
  assert.equal(last.sent_to_the_model.system[0]!.text, SYSTEM_PROMPT_SHOWN);
  assert.ok(last.sent_to_the_model.tools.includes('get_order'));
  const text = JSON.stringify(last.sent_to_the_model.messages);
  assert.match(text, /parcel|arrived/i, "the customer's words");
  assert.match(text, /tool_result/);
  assert.ok(!text.includes(PREVIEW_CUT.trim()), 'every tool result whole');
  assert.equal(typeof last.plan.layout, 'string', 'the plan is kept beside the messages');
  assert.ok(expander.stats.logReads <= 3, `${expander.stats.logReads} reads of the log for ${expander.stats.expanded} expanded payloads`);
});

test('the Temporal CLI without --codec-auth prints the refusal and what to add, at once; with it, the whole results', async () => {
  await setUp();
  const token = 'cli-codec-token-0123456789';
  const refusals: string[] = [];
  const codec = codecFor(ctx.tw.config);
  const converter = dataConverterFor(ctx.tw.config, ctx.db.app, { codec });
  const guarded = createServer(
    createCodecHandler({
      codecs: converter.payloadCodecs!,
      externalStorage: converter.externalStorage,
      customerKeys: customerKeysOf(ctx.db.app, codec),
      expander,
      token,
      allowedOrigins: [],
      onRefused: (event) => refusals.push(event.reason),
    }),
  );
  await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(guarded.address() as AddressInfo).port}`;
  const show = (...extra: string[]) =>
    promisify(execFile)(
      findTemporalCli(),
      ['workflow', 'show', '--address', ctx.tw.config.TEMPORAL_ADDRESS, '-w', workflowId, '--codec-endpoint', endpoint, '--detailed', ...extra],
      {
        timeout: 60_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  try {
    // Answered 401, the CLI would retry until its deadline and print "context deadline exceeded".
    const refused = await show();
    assert.match(
      refused.stdout,
      /casework codec server refused this request \(401\): .*no Authorization header was sent: give the CLI --codec-auth "Bearer \$CASEWORK_CODEC_SERVER_TOKEN"/,
    );
    assert.doesNotMatch(refused.stdout + refused.stderr, /deadline exceeded/);
    assert.ok(refusals.length > 0 && refusals.every((r) => r === 'credential_missing'), refusals.join(', '));
    const shown = await show('--codec-auth', `Bearer ${token}`);
    assert.match(shown.stdout, /Tilburg|tracking|delivered/i);
    assert.ok(!shown.stdout.includes(PREVIEW_CUT.trim()), 'no preview in what the CLI prints');
  } finally {
    await new Promise<void>((resolve) => guarded.close(() => resolve()));
  }
});

test('once the customer is erased, the same payloads show "erased on <date>" in place of the content, not an error', async () => {
  await setUp();
  await customerKeysOf(ctx.db.app, codecFor(ctx.tw.config)).destroy('cust_dana');
  // A fresh expander: the erasure is seen at once by a process that has not read the log (others within the cache's few seconds).
  const codec = codecFor(ctx.tw.config);
  const fresh = new DisplayExpander(openTranscriptLog(ctx.db.app, codec));
  const converter = dataConverterFor(ctx.tw.config, ctx.db.app, { codec });
  const handler = createCodecHandler({
    codecs: converter.payloadCodecs!,
    externalStorage: converter.externalStorage,
    customerKeys: customerKeysOf(ctx.db.app, codec),
    expander: fresh,
    allowedOrigins: [],
  });
  const erasedServer = createServer(handler);
  await new Promise<void>((resolve) => erasedServer.listen(0, '127.0.0.1', resolve));
  try {
    const payloads = await historyPayloads();
    const answer = await fetch(`http://127.0.0.1:${(erasedServer.address() as AddressInfo).port}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: payloads.map((p) => toJson(p.payload)) }),
    });
    assert.equal(answer.status, 200);
    const decoded = ((await answer.json()) as { payloads: JsonPayload[] }).payloads.map((p) => defaultPayloadConverter.fromPayload(fromJson(p)));
    const erased = `erased on ${new Date().toISOString().slice(0, 10)}`;
    // Under her key inline (the default), each payload of hers shows whole as erased; under the
    // deployment key (CASEWORK_CUSTOMER_PAYLOADS=false), the references it holds do.
    const whole = decoded.filter((v) => typeof v === 'string' && v.includes(erased));
    const results = decoded.filter((v): v is { content: string } => !!v && typeof v === 'object' && 'logged' in v);
    for (const r of results) assert.equal(r.content, erased);
    const steps = decoded.filter((v): v is { sent_to_the_model: unknown } => !!v && typeof v === 'object' && 'sent_to_the_model' in v);
    for (const s of steps) assert.equal(s.sent_to_the_model, erased);
    assert.ok(whole.length > 0 || (results.length > 0 && steps.length > 0), 'her tool results and model steps show as erased');
    assert.doesNotMatch(
      JSON.stringify(decoded),
      new RegExp(
        example('dana-5102')
          .message.slice(0, 30)
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      ),
      'none of her words',
    );
  } finally {
    await new Promise<void>((resolve) => erasedServer.close(() => resolve()));
  }
});
