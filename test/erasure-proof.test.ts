import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describeCase } from '../src/client/case-status';
import { eraseCustomer } from '../src/client/erasure';
import { decideRefund, readStatus } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { startDevServer } from '../src/dev/env/dev-server';
import { findTemporalCli } from '../src/dev/env/temporal-cli';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { investigationId, type TicketEvent } from '../src/schemas/event';
import { startCodecServer, type RunningCodecServer } from '../src/server/codec-server';
import { customerKeysOf } from '../src/temporal/codec/body-codec';
import { codecFor, dataConverterFor } from '../src/temporal/data-converter';
import { openTestDatabase, unique } from './support/db';
import { settingsWith, ticket } from './support/investigate';
import { freePort } from './support/net';
import { answer, calls, json, scriptedModel, toolUse } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// The proof that an erasure reaches every copy (docs/payload-privacy.md, "Erasure"): a customer
// with a closed case, an open one with a refund a person approved, memory and stored payloads
// is erased, and then every store is searched raw for her distinctive words — every text, jsonb
// and bytea column of every Postgres table, the stored payloads decoded with the deployment's
// keys, the Temporal history through `temporal workflow show` with and without the codec
// server, every payload of it posted to the codec server, Temporal's own database file, and
// what this process (the worker) logged — and none is found; while another customer's cases
// still decode and replay. Each search is first shown to find the words while they are there.
// Real Temporal dev server (its own, on a database file), real Postgres; the scripted model is
// the one double.

const run = promisify(execFile);
const model = scriptedModel();
const HER = 'cust_dana';
const OTHER = 'cust_priya';
/** Words only she wrote (messages), that the model and compaction carried on (a remembered fact, case notes, the refund's reason), and the approver typed. */
const HER_WORDS = ['Quillfeather', 'Brambleton', 'Vexworthy'];
const OTHER_WORD = 'Fennimore';
/** How her history reaches her key: encrypted under it inline (the default), or stored by reference (CASEWORK_CUSTOMER_PAYLOADS=true in the environment). */
const MODE = process.env.CASEWORK_CUSTOMER_PAYLOADS === 'true' ? 'true' : 'inline';

let dir: string;
let dbFile: string;
let stopServer: () => Promise<void>;
let address: string;
let db: Database;
let tw: TestWorker;
let codecServer: RunningCodecServer;
const logged: string[] = [];
let restoreLogs: () => void;

before(async () => {
  // What the worker (this process) writes to stdout and stderr is searched too.
  const [out, err] = [process.stdout.write.bind(process.stdout), process.stderr.write.bind(process.stderr)];
  process.stdout.write = (chunk: unknown, ...rest: never[]) => (logged.push(String(chunk)), out(chunk as string, ...rest));
  process.stderr.write = (chunk: unknown, ...rest: never[]) => (logged.push(String(chunk)), err(chunk as string, ...rest));
  restoreLogs = () => {
    process.stdout.write = out;
    process.stderr.write = err;
  };
  dir = mkdtempSync(join(tmpdir(), 'erasure-proof-'));
  dbFile = join(dir, 'temporal.db');
  const port = await freePort();
  const server = await startDevServer({ port, uiPort: await freePort(), dbFile, headless: true });
  assert.ok(server.startedHere, 'the proof runs its own dev server on its own database file');
  address = server.address;
  stopServer = () => server.stop();
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app, model, env: { TEMPORAL_ADDRESS: address, CASEWORK_LOG_LEVEL: 'debug', CASEWORK_CUSTOMER_PAYLOADS: MODE } });
  const converter = dataConverterFor(tw.config, db.app);
  codecServer = await startCodecServer(tw.config, { codecs: converter.payloadCodecs!, externalStorage: converter.externalStorage, port: 0 });
});
after(async () => {
  restoreLogs?.();
  await codecServer?.close();
  await tw?.stop();
  await stopServer?.();
  await db?.close();
});

/** Closes a ticket as its desk would: the run records the case and ends. */
async function close(opened: TicketEvent): Promise<void> {
  await deliver(tw, model, { ...opened, eventId: unique('evt'), type: 'ticket.closed', message: '', receivedAt: new Date().toISOString() });
}

/** A case the customer opens, in which the model remembers a fact and answers; closed when `closed`. */
async function rememberingCase(customerId: string, words: string, closed: boolean): Promise<TicketEvent> {
  const opened = ticket(customerId, `My parcel never arrived. ${words}`);
  const id = investigationId(opened.ticketId);
  model.script(id, {
    replies: [calls(toolUse('remember', { fact: `Leaves parcels by the ${words}` })), answer('Thank you, I have noted where parcels go and I am looking into it.')],
    purposes: { compact: () => json({ ...emptyCaseNotes(), customer_problem: `Parcel never arrived; ${words}.` }) },
  });
  assert.equal((await deliver(tw, model, opened)).status, 'waiting_for_customer');
  if (closed) await close(opened);
  return opened;
}

/** A case with a refund: the model asks for it, a person approves it with a reason, the model tells the customer; left open. */
async function refundCase(): Promise<TicketEvent> {
  const opened = ticket(HER, 'Order 3388 never came; it was left at Brambleton lodge, which is not my address.');
  const id = investigationId(opened.ticketId);
  model.script(id, {
    replies: [
      calls(toolUse('request_refund', { order_id: '3388', amount_cents: 500, reason: 'Left at Brambleton lodge, not her address.', kind: 'not_received' })),
      answer('A colleague is reviewing a refund for you.'),
      answer('Your refund has been approved and is on its way.'),
    ],
    purposes: { compact: () => json({ ...emptyCaseNotes(), customer_problem: 'Parcel left at Brambleton lodge.' }) },
  });
  const waiting = await deliver(tw, model, opened, settingsWith());
  assert.equal(waiting.status, 'awaiting_approval');
  await decideRefund(tw.client, id, {
    requestId: waiting.pendingApproval!.request_id,
    decision: 'approved',
    approver: 'support-lead',
    reason: 'Vexworthy courier photo confirms it',
  });
  const answered = await settle(tw, model, id, waiting.step);
  assert.equal(answered.refunds.length, 1, 'the approved refund was paid');
  return opened;
}

/** Every text, varchar, jsonb and bytea value of every table in the database, as one string per table (bytea as latin1 bytes). */
async function everyColumn(): Promise<Map<string, string>> {
  const { rows } = await db.admin.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
      WHERE c.table_schema = 'public' AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea', 'ARRAY', 'tsvector')`,
  );
  const tables = new Map<string, string>();
  for (const { table_name, column_name, data_type } of rows) {
    const { rows: values } = await db.admin.query(`SELECT ${data_type === 'bytea' ? '' : '('}"${column_name}"${data_type === 'bytea' ? '' : ')::text'} AS v FROM "${table_name}"`);
    const text = values.map((r: { v: unknown }) => (Buffer.isBuffer(r.v) ? r.v.toString('latin1') : typeof r.v === 'string' ? r.v : '')).join('\n');
    tables.set(table_name, (tables.get(table_name) ?? '') + text);
  }
  return tables;
}

/** The tables whose raw values mention `word`. */
async function tablesMentioning(word: string): Promise<string[]> {
  const found: string[] = [];
  for (const [table, text] of await everyColumn()) if (text.toLowerCase().includes(word.toLowerCase())) found.push(table);
  return found;
}

/** Every stored payload (customer_payloads, payload_blobs) that decodes with the deployment's keys, as text; the ones that no longer decode are counted. */
async function storedPayloadTexts(): Promise<{ texts: string; undecodable: number; rows: number }> {
  const converter = dataConverterFor(tw.config, db.app);
  const [codec] = converter.payloadCodecs!;
  let texts = '';
  let undecodable = 0;
  let rows = 0;
  for (const table of ['customer_payloads', 'payload_blobs']) {
    const { rows: stored } = await db.admin.query<{ sha256: string }>(`SELECT sha256 FROM ${table}`);
    for (const { sha256 } of stored) {
      rows++;
      const driver = converter.externalStorage!.drivers.find((d) => d.name === (table === 'payload_blobs' ? 'casework-postgres' : 'casework-customer'))!;
      try {
        const { StorageDriverClaim } = await import('@temporalio/common');
        const [payload] = await driver.retrieve({}, [new StorageDriverClaim({ sha256 })]);
        const [decoded] = await codec!.decode([payload!]);
        texts += Buffer.from(decoded!.data ?? []).toString('utf8') + '\n';
      } catch {
        undecodable++;
      }
    }
  }
  return { texts, undecodable, rows };
}

/** Every payload anywhere in a history (events' inputs, results, signals, updates, failures, memo, user metadata). */
function payloadsOf(value: unknown, into: temporal.api.common.v1.IPayload[] = []): temporal.api.common.v1.IPayload[] {
  if (!value || typeof value !== 'object') return into;
  if (Array.isArray(value)) {
    for (const v of value) payloadsOf(v, into);
    return into;
  }
  const record = value as Record<string, unknown>;
  if (record.metadata && typeof record.metadata === 'object' && 'data' in record) into.push(record);
  else for (const v of Object.values(record)) payloadsOf(v, into);
  return into;
}

/** Every payload of `workflowId`'s history (all runs) posted to the codec server's /decode: the decoded texts, and how many it refused to decode. */
async function throughCodecServer(workflowId: string): Promise<{ text: string; refused: number; payloads: number }> {
  const history = await tw.client.workflow.getHandle(workflowId).fetchHistory();
  const payloads = payloadsOf(history.events);
  let text = '';
  let refused = 0;
  for (const p of payloads) {
    const body = {
      payloads: [
        {
          metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
          data: Buffer.from(p.data ?? []).toString('base64'),
        },
      ],
    };
    const res = await fetch(`${codecServer.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default' }, body: JSON.stringify(body) });
    if (res.status !== 200) {
      refused++;
      await res.text();
      continue;
    }
    const decoded = (await res.json()) as { payloads: { data?: string }[] };
    text += decoded.payloads.map((d) => Buffer.from(d.data ?? '', 'base64').toString('utf8')).join('\n') + '\n';
  }
  return { text, refused, payloads: payloads.length };
}

/** `temporal workflow show --output json` of every run of the workflow, with the codec server when asked; stdout and stderr, base64 payload fields decoded to bytes too. */
async function cliShow(workflowId: string, withCodec: boolean): Promise<string> {
  const args = ['workflow', 'show', '--workflow-id', workflowId, '--address', address, '--namespace', 'default', '--output', 'json'];
  if (withCodec) args.push('--codec-endpoint', codecServer.url);
  const shown = await run(findTemporalCli(), args, { maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? '',
  }));
  const raw = `${shown.stdout}\n${shown.stderr}`;
  const base64 = raw.match(/"[A-Za-z0-9+/]{16,}={0,2}"/g) ?? [];
  return raw + base64.map((b) => Buffer.from(b.slice(1, -1), 'base64').toString('latin1')).join('\n');
}

/** Temporal's database file and its write-ahead log, raw. */
function temporalFile(): string {
  return readdirSync(dir)
    .filter((f) => f.startsWith('temporal.db'))
    .map((f) => readFileSync(join(dir, f)).toString('latin1'))
    .join('\n');
}

const mentions = (text: string, words: readonly string[]) => words.filter((w) => text.toLowerCase().includes(w.toLowerCase()));

describe('the erasure proof', () => {
  test("after erasing a customer with closed and open cases, memory, a paid refund and stored payloads, no store holds her words, and another customer's cases still decode and replay", async () => {
    const closedCase = await rememberingCase(HER, 'Quillfeather gate', true);
    const openCase = await refundCase();
    const other = await rememberingCase(OTHER, `${OTHER_WORD} balcony`, true);
    const herIds = [closedCase, openCase].map((e) => investigationId(e.ticketId));
    const otherId = investigationId(other.ticketId);

    // Before: each search finds her words where they are, so finding none later means something.
    assert.ok((await tablesMentioning('Quillfeather')).includes('memory_notes'), 'her remembered fact is in memory, in clear');
    assert.ok((await tablesMentioning('Vexworthy')).includes('refund_decisions'), "the approver's reason is on the refund trail");
    const before = await throughCodecServer(herIds[1]!);
    assert.deepEqual(mentions(before.text, ['Brambleton', 'Vexworthy']), ['Brambleton', 'Vexworthy'], 'the codec server decodes her history while her key lives');
    assert.equal(before.refused, 0);
    if (MODE === 'true') assert.ok((await storedPayloadTexts()).texts.includes('Quillfeather'), 'her stored payloads decode while her key lives');
    assert.ok(temporalFile().includes(herIds[0]!), "Temporal's database file holds her investigations");
    assert.ok(existsSync(dbFile));
    assert.ok(mentions(await cliShow(herIds[0]!, true), HER_WORDS).length > 0, '`temporal workflow show` through the codec server shows her words while her key lives');

    // The open case is closed first, through its own close, and waited for; then she is erased.
    const keys = customerKeysOf(db.app, codecFor(tw.config));
    const report = await eraseCustomer({ pool: db.app, keys, client: tw.client }, { customerId: HER, by: 'alice' });
    assert.deepEqual(
      report.closed.map((c) => c.workflowId),
      [herIds[1]],
    );
    assert.equal((await describeCase(tw.client, herIds[1]!)).state, 'completed', 'closed through its own close path');
    assert.ok(report.deleted.notes >= 1 && report.deleted.cases === 2 && report.keyVersionsDestroyed.length >= 1);

    // Postgres, every column of every table.
    for (const word of HER_WORDS) {
      const found = await tablesMentioning(word);
      // The refund trail is a financial record, kept and exported, never erased (docs/payload-privacy.md).
      assert.deepEqual(
        found.filter((t) => !['refund_requests', 'refund_decisions', 'refunds'].includes(t)),
        [],
        `"${word}" is still in ${found.join(', ')}`,
      );
    }
    assert.deepEqual(await tablesMentioning(OTHER_WORD).then((t) => t.includes('memory_notes')), true, "the other customer's memory stays");

    // Stored payloads: hers no longer decode; what decodes holds none of her words.
    const stored = await storedPayloadTexts();
    assert.deepEqual(mentions(stored.texts, HER_WORDS), []);
    if (MODE === 'true') {
      assert.ok(stored.undecodable > 0, 'her stored payloads are there, undecodable');
      assert.ok(stored.texts.includes(OTHER_WORD), "the other customer's stored payloads still decode");
    } else {
      // Inline: no rows of hers at all; her history's payloads carry her key's id.
      assert.equal((await db.admin.query('SELECT count(*)::int AS n FROM customer_payloads')).rows[0].n, 0);
      // Search attributes are never encoded (no key id); every encrypted payload is under her key.
      const keyIds = payloadsOf(
        (
          await tw.client.workflow
            .getHandle(herIds[0]!)
            .fetchHistory()
            .catch(() => ({ events: [] }))
        ).events,
      )
        .map((p) => Buffer.from(p.metadata?.['encryption-key-id'] ?? []).toString())
        .filter(Boolean);
      assert.ok(keyIds.length > 0 && keyIds.every((id) => id.startsWith(`cust:${HER}:`)), `her history is under her key: ${[...new Set(keyIds)].join(', ')}`);
    }

    // The Temporal history: through the CLI, raw and with the codec server, and every payload through the codec server.
    for (const id of herIds) {
      assert.deepEqual(mentions(await cliShow(id, false), HER_WORDS), [], `${id} raw through the CLI`);
      assert.deepEqual(mentions(await cliShow(id, true), HER_WORDS), [], `${id} through the CLI and the codec server`);
      const decoded = await throughCodecServer(id);
      assert.deepEqual(mentions(decoded.text, HER_WORDS), [], `${id} payload by payload through the codec server`);
      assert.equal(decoded.refused, 0, 'her references are answered, not refused');
      assert.ok(decoded.text.includes(`erased on ${new Date().toISOString().slice(0, 10)}`), 'the codec server shows her payloads as erased on the date');
    }
    const otherDecoded = await throughCodecServer(otherId);
    assert.equal(otherDecoded.refused, 0);
    assert.ok(otherDecoded.text.includes(OTHER_WORD), "the other customer's history still decodes");

    // Temporal's own database file, and what the worker logged.
    assert.deepEqual(mentions(temporalFile(), HER_WORDS), []);
    assert.deepEqual(mentions(logged.join(''), HER_WORDS), [], 'the worker logged none of her words');

    // The other customer's history replays with the worker's data converter.
    const history = await tw.client.workflow.getHandle(otherId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE! }, dataConverter: dataConverterFor(tw.config, db.app) }, history, otherId);
    assert.equal((await readStatus(tw.client, otherId)).status, 'closed');
  });
});
