import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure, type Payload } from '@temporalio/common';
import { isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { createMemoryActivities } from '../src/activities/memory';
import { TranscriptLog } from '../src/db/transcript-log';
import { investigationId } from '../src/schemas/event';
import { bodyCodecOf } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { decodeHistoryPayloads } from '../src/temporal/history-payloads';
import { settingsWith, ticket } from './support/investigate';
import { calls, scriptedModel, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { seededWorker } from './support/temporal';

// Whoever reads Temporal's database (or its backups, or `temporal workflow show` without the
// codec) must not read the conversation. One investigation carries a card number, a home
// address and order details in the customer's message, order and tracking details in its tool
// results, a memory note in its context and a model failure quoting the customer's address;
// its raw history, read by a client with no codec, holds none of them, and neither do the
// stored blobs. The same history through the worker's converter holds every one, so the check
// is not vacuous. Kept by reference (the default), the conversation leaves history for the
// transcript log, whose rows are ciphertext too; read through the log with the keys, it is whole.

const model = scriptedModel();
const ctx = seededWorker({ model });

const CARD = '4111 1111 1111 1111';
const HOME = '27 Quarry Road, Leeds LS6 2AB';
const TYPED_ORDER = 'QUARRY-27-LS6';
const NOTE = 'Dana prefers parcels left at the Marigold Lane lockers';
/** What the customer wrote, what the tools answered and what memory held: none may show in clear. */
const SECRETS = {
  'card number': CARD,
  'home address': HOME,
  'order number the customer typed (in a tool result and a summary)': TYPED_ORDER,
  "customer's words": 'charged twice for my trail shoes',
  'order item (get_order)': 'Trailpeak GTX trail running shoes',
  'delivery instructions (get_order)': 'leave with the neighbour at number 16',
  'tracking event (get_tracking_events)': 'Delivery van LS6-14, Leeds Kirkstall',
  'memory note': 'Marigold Lane lockers',
};

type Walked = { text: string[]; payloads: Payload[] };

/** Every string and every byte field (as latin1) of a raw history, and every payload in it. */
function walk(value: unknown, into: Walked = { text: [], payloads: [] }): Walked {
  if (typeof value === 'string') into.text.push(value);
  else if (value instanceof Uint8Array) into.text.push(Buffer.from(value).toString('latin1'));
  else if (Array.isArray(value)) for (const v of value) walk(v, into);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (o.data instanceof Uint8Array && o.metadata && typeof o.metadata === 'object') into.payloads.push(o);
    for (const v of Object.values(o)) walk(v, into);
  }
  return into;
}

/** Every value held under `key` anywhere in `value` (e.g. every memo of a history). */
function under(value: unknown, key: string, into: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) under(v, key, into);
  else if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && v) into.push(v);
      else under(v, key, into);
    }
  }
  return into;
}

const encodingOf = (p: Payload) => Buffer.from(p.metadata?.encoding ?? []).toString();

const count = (haystack: string[], needle: string) => haystack.reduce((n, h) => n + h.split(needle).length - 1, 0);

/** Runs the investigation that handles every secret, with `env`; returns its workflow id and its raw history read without the codec. */
async function investigateSecrets(env: Record<string, string>): Promise<{ id: string; history: unknown; raw: Walked }> {
  const customerId = 'cust_dana';
  const memory = createMemoryActivities({ pool: ctx.db.app });
  await memory.remember({ name: 'remember', input: { fact: NOTE }, context: { customerId, ticketId: 'T0', workflowId: 'investigation-T0', toolUseId: 'toolu_0' } });
  const event = ticket(customerId, `I was charged twice for my trail shoes, order 5102, on card ${CARD}. It never reached ${HOME}. Or was it order ${TYPED_ORDER}?`);
  const id = investigationId(event.ticketId);
  model.script(id, [
    calls(toolUse('get_order', { order_id: '5102' }), toolUse('get_tracking_events', { order_id: '5102' })),
    calls(toolUse('get_order', { order_id: TYPED_ORDER })),
    // An API error that quotes the request back: its message lands in a failure, the hand-off reason and the memo.
    () => {
      throw ApplicationFailure.create({ type: 'invalid_request_error', nonRetryable: true, message: `400 (scripted model): cannot parse "${HOME}"` });
    },
  ]);
  const settled = await deliver(ctx.tw, model, event, settingsWith(env));
  assert.equal(settled.status, 'needs_human');
  const sent = JSON.stringify(model.requests(id, 'investigate'));
  for (const [what, secret] of Object.entries(SECRETS)) assert.ok(sent.includes(secret), `the run did handle the ${what}`);

  // What the server holds, read the way someone without the keys would: a plain client.
  const connection = await Connection.connect({ address: ctx.tw.config.TEMPORAL_ADDRESS });
  try {
    const plain = new Client({ connection, namespace: ctx.tw.config.TEMPORAL_NAMESPACE });
    const history = await plain.workflow.getHandle(id).fetchHistory();
    return { id, history, raw: walk(history) };
  } finally {
    await connection.close();
  }
}

describe('payload privacy', () => {
  test('a run’s raw history and stored blobs hold no customer text, order detail or memory note; decoded, the history holds what travels in it', async (t) => {
    const { history, raw } = await investigateSecrets({});
    // Only search attributes (ids, status, step, token counts) and stored references are in clear.
    const clear = raw.payloads.filter((p) => !isReferencePayload(p) && encodingOf(p) !== 'binary/encrypted');
    const clearKinds = [...new Set(clear.map(encodingOf))];
    assert.deepEqual(clearKinds, ['json/plain'], 'besides references, only JSON search attributes are unencrypted');
    for (const field of ['upsertedMemo', 'userMetadata', 'failure', 'input', 'result']) {
      const inside = walk(under(history, field)).payloads.filter((p) => !isReferencePayload(p));
      assert.ok(inside.length > 0, `the history has ${field} payloads`);
      assert.deepEqual([...new Set(inside.map(encodingOf))], ['binary/encrypted'], `every ${field} payload is encrypted`);
    }

    // The same history through the worker's converter: stored references fetched, then decrypted.
    const decoded: string[] = [];
    for (const payload of raw.payloads) {
      const [value] = await decodeHistoryPayloads(ctx.tw.client.options.loadedDataConverter, [payload]);
      decoded.push(typeof value === 'string' ? value : JSON.stringify(value));
    }

    // Large payloads (none may be left in a run whose transcript is in the log) are stored as ciphertext too.
    const blobs = (await ctx.db.admin.query<{ bytes: Buffer }>('SELECT bytes FROM payload_blobs')).rows;
    const blobText = blobs.map((b) => b.bytes.toString('latin1'));
    for (const blob of blobs) {
      assert.equal(encodingOf(temporal.api.common.v1.Payload.decode(blob.bytes)), 'binary/encrypted', 'every stored blob is a ciphertext payload');
    }

    const rows = Object.entries(SECRETS).map(([what, secret]) => ({
      what,
      'raw history': count(raw.text, secret),
      blobs: count(blobText, secret),
      decoded: count(decoded, secret),
    }));
    t.diagnostic(`history: ${raw.payloads.length} payloads, ${blobs.length} stored blobs`);
    for (const r of rows) t.diagnostic(`${r.what}: raw history ${r['raw history']}, blobs ${r.blobs}, decoded ${r.decoded}`);
    for (const r of rows) {
      assert.equal(r['raw history'], 0, `the raw history shows the ${r.what}`);
      assert.equal(r.blobs, 0, `a stored blob shows the ${r.what}`);
    }
    // The conversation's words are in the transcript log (the next test); the memory note and the failure travel in history.
    assert.ok(rows.find((r) => r.what === 'memory note')!.decoded > 0, 'decoded, the history holds the memory note');
    assert.equal(count(raw.text, CARD.replace(/ /g, '')), 0, 'nor the card number without its spaces');
    assert.ok(
      decoded.some((d) => d.includes(`cannot parse \\"${HOME}`) || d.includes(`cannot parse "${HOME}`)),
      'the failure message is among the decoded payloads',
    );
  });
  test('the raw history and the transcript log hold none of it in clear; read through the log, every word is there', async (t) => {
    const { id, raw } = await investigateSecrets({});
    const clear = raw.payloads.filter((p) => !isReferencePayload(p) && encodingOf(p) !== 'binary/encrypted');
    assert.deepEqual([...new Set(clear.map(encodingOf))], ['json/plain'], 'besides references, only JSON search attributes are unencrypted');

    // What the transcript log's table holds, read the way someone with the database and without the keys would.
    const stored = (await ctx.db.admin.query<{ body: Buffer }>('SELECT body FROM transcript_log WHERE workflow_id = $1', [id])).rows;
    assert.ok(stored.length > 0, 'the run wrote its conversation to the transcript log');
    const kept = (await ctx.db.admin.query<{ body: Buffer }>('SELECT body FROM model_replies WHERE workflow_id = $1', [id])).rows;
    assert.ok(kept.length > 0, 'the run kept the model replies it paid for');
    const storedText = [...stored, ...kept].map((r) => r.body.toString('latin1'));
    // Through the log with the worker's keys, as `casework transcript` reads it.
    const log = new TranscriptLog(ctx.db.app, bodyCodecOf(codecFor(ctx.tw.config)));
    const read = (await log.all(id)).map((e) => JSON.stringify(e.body));

    t.diagnostic(`history: ${raw.payloads.length} payloads; transcript log: ${stored.length} entries; kept replies: ${kept.length}`);
    for (const [what, secret] of Object.entries(SECRETS)) {
      t.diagnostic(`${what}: raw history ${count(raw.text, secret)}, log rows ${count(storedText, secret)}, read through the log ${count(read, secret)}`);
      assert.equal(count(raw.text, secret), 0, `the raw history shows the ${what}`);
      assert.equal(count(storedText, secret), 0, `a transcript_log or model_replies row shows the ${what}`);
    }
    assert.equal(count([...raw.text, ...storedText], CARD.replace(/ /g, '')), 0, 'nor the card number without its spaces');
    // The tool results and the customer's message are whole in the log (the memory note and the failure travel in history, checked above).
    for (const secret of [CARD, HOME, TYPED_ORDER, SECRETS["customer's words"], SECRETS['order item (get_order)'], SECRETS['tracking event (get_tracking_events)']]) {
      assert.ok(count(read, secret) > 0, `read through the log, the conversation holds ${secret}`);
    }
  });
});
