import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/server/app';
import { after, before, describe, test } from 'node:test';
import { eraseCustomer, erasureDepsOf } from '../src/client/erasure';
import { exportCustomer, SUBJECT_EXPORT_SCHEMA, type SubjectExport } from '../src/client/subject-export';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCase } from '../src/server/console/cases';
import { timelinePage } from '../src/server/console/timeline';
import { transcriptCommand } from '../src/main/commands/transcript';
import { eraseCommand, exportCommand } from '../src/main/commands/erasure';
import type { TicketEvent } from '../src/schemas/event';
import { customerBodyCodec, customerKeysOf, openTranscriptLog } from '../src/temporal/codec/body-codec';
import { TranscriptLog } from '../src/db/transcript-log';
import { CustomerErasedError, CustomerKeys } from '../src/temporal/codec/customer-keys';
import { codecFor } from '../src/temporal/data-converter';
import { openTestDatabase, unique } from './support/db';
import { settingsWith, ticket } from './support/investigate';
import { consoleAgent, visibleText } from './support/console-agent';
import { rememberNote } from '../src/memory/remember';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { answer, calls, json, scriptedModel, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';
import type { Database } from '../src/db/pool';
import { describeCase } from '../src/client/case-status';

// Erasure reaches every copy casework controls: after a customer is erased, their memory rows
// are gone, and their transcript entries and kept model replies, still in Postgres, are
// ciphertext under a destroyed key that no process can decrypt; another customer's case still
// reads. Real Temporal dev server, real Postgres, the scripted model (the one double).

const model = scriptedModel();
let db: Database;
let tw: TestWorker;
before(async () => {
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app, model });
});
after(async () => {
  await tw?.stop();
  await db?.close();
});

/** A case the customer opens with `words`, in which the model remembers a fact, answers, and the ticket is closed. */
async function closedCase(customerId: string, words: string, fact: string): Promise<string> {
  const opened = ticket(customerId, `My parcel never arrived. ${words}`);
  const workflowId = `investigation-${opened.ticketId}`;
  const notes = { ...emptyCaseNotes(), customer_problem: `Parcel never arrived; ${words}.` };
  model.script(workflowId, {
    replies: [calls(toolUse('remember', { fact })), answer(`Thank you, I have noted it. ${words.split(' ')[0]} is in hand.`)],
    purposes: { compact: () => json(notes) },
  });
  const status = await deliver(tw, model, opened);
  assert.equal(status.status, 'waiting_for_customer');
  const closing: TicketEvent = { ...opened, eventId: unique('evt'), type: 'ticket.closed', message: '', receivedAt: new Date().toISOString() };
  await deliver(tw, model, closing);
  return workflowId;
}

/** Every row of every memory table and both content stores, as text, that mentions `word`. */
async function rawMentions(word: string): Promise<string[]> {
  const { rows } = await db.admin.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND (table_name LIKE 'memory%' OR table_name IN ('transcript_log', 'model_replies', 'parked_deliveries', 'customer_erasures', 'customer_keys'))",
  );
  const found: string[] = [];
  for (const { table_name } of rows) {
    // bytea columns render as hex in row_to_json; encode(…, 'escape') shows any clear bytes too.
    const hits = await db.admin
      .query(
        `SELECT 1 FROM ${table_name} t WHERE row_to_json(t)::text ILIKE $1 OR convert_from(decode(replace(replace(row_to_json(t)::text, '\\\\x', ''), '"', ''), 'escape'), 'SQL_ASCII') ILIKE $1 LIMIT 1`,
        [`%${word}%`],
      )
      .catch(() => db.admin.query(`SELECT 1 FROM ${table_name} t WHERE row_to_json(t)::text ILIKE $1 LIMIT 1`, [`%${word}%`]));
    if (hits.rowCount) found.push(table_name);
  }
  const bytes = await db.admin.query("SELECT 'transcript_log' AS t, body FROM transcript_log UNION ALL SELECT 'model_replies', body FROM model_replies");
  for (const row of bytes.rows as { t: string; body: Buffer }[]) if (row.body.includes(Buffer.from(word))) found.push(`${row.t} (bytes)`);
  return found;
}

describe('erasing a customer', () => {
  test('closes a running investigation first, says when no desk could be told, then erases', async () => {
    const customerId = 'cust_marco';
    const opened = ticket(customerId, 'Where is my order? Ask for Zebulon at the gate.');
    const workflowId = `investigation-${opened.ticketId}`;
    model.script(workflowId, [answer('Looking into it now.')]);
    await deliver(tw, model, opened);
    const log = openTranscriptLog(db.app, codecFor(tw.config));
    assert.ok(JSON.stringify(await log.all(workflowId, ['message'])).includes('Zebulon'), 'the running case reads before');
    const report = await eraseCustomer(erasureDepsOf(tw.config, db.app, tw.client), { customerId, by: 'alice' });
    assert.deepEqual(report.closed, [{ workflowId, runId: report.closed[0]?.runId, refundWithdrawn: null, told: 'not posted: no desk is configured in this process' }]);
    assert.equal((await describeCase(tw.client, workflowId)).state, 'completed');
    assert.equal((await db.admin.query('SELECT count(*)::int AS n FROM customer_erasures WHERE customer_id = $1', [customerId])).rows[0].n, 1);
    const fresh = new TranscriptLog(db.app, customerBodyCodec(codecFor(tw.config), new CustomerKeys(db.app, codecFor(tw.config).keyring)));
    await assert.rejects(fresh.all(workflowId, ['message']), CustomerErasedError);
  });

  test("after an erasure no store holds the customer's words, nothing of theirs decodes, and another customer's case still reads", async () => {
    const erased = await closedCase('cust_dana', 'Quagmorrow gate code 7731', 'Leaves parcels with neighbour Quagmorrow');
    const kept = await closedCase('cust_priya', 'Fennimore balcony drop', 'Leaves parcels at the Fennimore balcony');
    const config = { ...tw.config, DATABASE_URL: db.url };
    const log = openTranscriptLog(db.app, codecFor(tw.config));
    assert.ok(JSON.stringify(await log.all(erased, ['message'])).includes('Quagmorrow'), 'decodes before the erasure');
    const memoryBefore = await db.admin.query("SELECT count(*)::int AS n FROM memory_notes WHERE customer_id = 'cust_dana'");
    assert.ok(memoryBefore.rows[0].n >= 1, 'the remembered fact is in memory');
    assert.ok((await rawMentions('Quagmorrow')).includes('memory_notes'), 'the raw scan finds her words where they are in clear');
    const file = join(mkdtempSync(join(tmpdir(), 'export-')), 'dana.json');
    assert.equal(await exportCommand(['--customer', 'cust_dana', '--out', file], { ...tw.config, DATABASE_URL: db.url }, () => undefined), 0);
    const exported = JSON.parse(readFileSync(file, 'utf8')) as SubjectExport;
    assert.equal(exported.schema, SUBJECT_EXPORT_SCHEMA);
    assert.ok(JSON.stringify(exported).includes('Quagmorrow gate code 7731') && exported.notes.some((n) => n.text.includes('Quagmorrow')));

    const lines: string[] = [];
    assert.equal(await eraseCommand(['--customer', 'cust_dana', '--by', 'alice'], config, (l) => lines.push(l)), 2, 'without --yes it only asks');
    assert.equal(await eraseCommand(['--customer', 'cust_dana', '--by', 'alice', '--yes'], config, (l) => lines.push(l)), 0);
    assert.match(lines.at(-1)!, /^Erased customer cust_dana on \d{4}-\d{2}-\d{2} \(by alice\): [1-9]\d* notes, 1 cases/);

    // Raw Postgres: nothing of hers in clear anywhere, her memory rows gone, her key destroyed.
    assert.deepEqual(await rawMentions('Quagmorrow'), []);
    for (const table of ['memory_notes', 'memory_cases']) {
      assert.equal((await db.admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE customer_id = 'cust_dana'`)).rows[0].n, 0, table);
    }
    const key = await db.admin.query("SELECT wrapped_key, destroyed_at FROM customer_keys WHERE customer_id = 'cust_dana'");
    assert.ok(key.rows.length >= 1 && key.rows.every((r: { wrapped_key: Buffer | null; destroyed_at: Date | null }) => r.wrapped_key === null && r.destroyed_at !== null));
    const rows = await db.admin.query('SELECT count(*)::int AS n FROM transcript_log WHERE workflow_id = $1', [erased]);
    assert.ok(rows.rows[0].n > 0, 'the ciphertext is still there; only the key is gone');

    // Not decodable by any process that reads the key after the erasure, nor through `casework transcript`.
    // (This file's own cache, warmed above, is another process to the CLI's: the bound test below covers it.)
    const codec = codecFor(tw.config);
    const fresh = new TranscriptLog(db.app, customerBodyCodec(codec, new CustomerKeys(db.app, codec.keyring)));
    await assert.rejects(fresh.all(erased), CustomerErasedError);
    const replies = await db.admin.query<{ run_id: string; activity_id: string }>('SELECT run_id, activity_id FROM model_replies WHERE workflow_id = $1', [erased]);
    assert.ok(replies.rows.length > 0);
    for (const r of replies.rows) await assert.rejects(fresh.replyOf({ workflowId: erased, runId: r.run_id, activityId: r.activity_id }), CustomerErasedError);
    const printed: string[] = [];
    assert.equal(await transcriptCommand([erased], config, (l) => printed.push(l)), 0);
    assert.deepEqual(printed, [`${erased}: erased on ${new Date().toISOString().slice(0, 10)}`]);

    // The console's case page says so too, in place of the conversation.
    const view = await readCase({ client: tw.client, log: fresh }, erased);
    assert.equal(view.erasedOn, new Date().toISOString().slice(0, 10));
    assert.match(
      timelinePage(view, {
        session: {
          id: 's',
          person: 'Sam',
          csrf: 'c',
          lastSeen: 0,
          expiresAt: Date.now() + 60_000,
          principal: { label: 'key:test', anyCustomer: false, customers: new Set(), approvers: new Set(), support: true },
        },
        settings: settingsWith(),
        refs: { refOf: () => 'r' } as never,
        temporalUiUrl: 'http://ui',
        namespace: 'default',
      }),
      /The conversation was erased on \d{4}-\d{2}-\d{2}/,
    );

    // The audit row says who, whom and when, and nothing else of hers.
    const audit = await db.admin.query("SELECT erased_by, detail::text AS detail FROM customer_erasures WHERE customer_id = 'cust_dana'");
    assert.equal(audit.rows.length, 1);
    assert.equal(audit.rows[0].erased_by, 'alice');
    assert.ok(!/Quagmorrow/.test(audit.rows[0].detail));

    // The other customer is untouched.
    assert.ok(JSON.stringify(await fresh.all(kept, ['message'])).includes('Fennimore balcony drop'));
    assert.ok((await db.admin.query("SELECT count(*)::int AS n FROM memory_notes WHERE customer_id = 'cust_priya'")).rows[0].n >= 1);

    // Her export now says what was erased and when, with no content.
    const after = await exportCustomer({ pool: db.app, log: fresh }, { customerId: 'cust_dana', actor: 'test' });
    assert.deepEqual(after.notes, []);
    assert.ok(after.investigations.some((i) => i.workflow_id === erased && i.transcript === null && i.erased_on !== null));
    assert.equal(after.erasures.length, 1);
  });

  test('a process that cached the key stops decoding within the recheck bound', async () => {
    const workflowId = await closedCase('cust_leila', 'Ottoline side door', 'Leaves parcels at the Ottoline side door');
    let clock = 0;
    const codec = codecFor(tw.config);
    const other = new CustomerKeys(db.app, codec.keyring, { recheckMs: 10_000, now: () => clock });
    const otherLog = new TranscriptLog(db.app, customerBodyCodec(codec, other));
    assert.ok(JSON.stringify(await otherLog.all(workflowId, ['message'])).includes('Ottoline'));
    await eraseCustomer({ pool: db.app, keys: customerKeysOf(db.app, codec), client: tw.client }, { customerId: 'cust_leila', by: 'bob' });
    clock += 10_000;
    await assert.rejects(otherLog.all(workflowId, ['message']), CustomerErasedError);
  });

  test('over HTTP: support may erase with a confirmation naming the customer, a customer-scoped key may not; parked deliveries of theirs are emptied', async () => {
    const SUPPORT = 'support-key-0123456789abcdef';
    const CUSTOMER = 'customer-key-0123456789abcdef';
    const customerId = unique('cust-http');
    const app = createApp({ client: tw.client, pool: db.app, config: { ...tw.config, CASEWORK_API_KEYS: `${SUPPORT}:support,${CUSTOMER}:${customerId}` }, log: () => undefined });
    const server = createServer((req, res) => void app.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (key: string, body: unknown) =>
      fetch(`${base}/customers/${customerId}/erase`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
    try {
      await db.admin.query("INSERT INTO ticket_owners (ticket_id, customer_id, first_event_id) VALUES ($1, $2, 'e-http')", [`${customerId}-T`, customerId]);
      await db.admin.query(
        "INSERT INTO parked_deliveries (desk, event_id, ticket_id, requester, reason, body) VALUES ('zendesk', $1, $2, 'someone@example.com', 'ticket_owner', $3)",
        [unique('evt'), `${customerId}-T`, Buffer.from('ciphertext of Wolverhampton words')],
      );
      assert.equal((await post(CUSTOMER, { confirm: customerId })).status, 403);
      const unconfirmed = await post(SUPPORT, {});
      assert.equal(unconfirmed.status, 400);
      assert.match(((await unconfirmed.json()) as { error: string }).error, /confirm/);
      const done = await post(SUPPORT, { confirm: customerId });
      assert.equal(done.status, 200);
      const report = (await done.json()) as { parkedDeliveriesEmptied: number; erasure: { erasedBy: string } };
      assert.equal(report.parkedDeliveriesEmptied, 1);
      assert.match(report.erasure.erasedBy, /^key:/);
      const parked = await db.admin.query('SELECT octet_length(body) AS n, discarded_at FROM parked_deliveries WHERE ticket_id = $1', [`${customerId}-T`]);
      assert.equal(parked.rows[0].n, 0);
      assert.ok(parked.rows[0].discarded_at, 'a waiting delivery of an erased customer is discarded, never delivered later');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('in the console: support erases a customer from their memory page after typing their id', async () => {
    const SUPPORT = 'sk_support_erasure_0123456789';
    const customerId = unique('cust-console');
    await rememberNote(db.app, { customerId, fact: 'Prefers parcels at the Wexcombe kiosk', sourceRun: 'investigation-X', now: new Date().toISOString(), ttlMonths: 12 });
    const app = createApp({ client: tw.client, pool: db.app, config: { ...tw.config, CASEWORK_API_KEYS: `${SUPPORT}:support` }, log: () => undefined });
    const server = createServer((req, res) => void app.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const sam = consoleAgent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const signIn = await sam.signIn(SUPPORT, 'Sam');
      assert.equal(signIn.status, 303);
      await sam.follow(signIn);
      const page = await sam.follow(await sam.post('/console/customers/lookup', { customerId }));
      assert.ok(page.text.includes('data-erase') && page.text.includes('Wexcombe'));
      const path = page.headers.get('content-location') ?? (/action="(\/console\/customers\/[^/"]+)\/erase"/.exec(page.text)?.[1] as string);
      const refused = await sam.follow(await sam.post(`${path}/erase`, { confirm: 'yes' }));
      assert.match(visibleText(refused.text), new RegExp(`Nothing was erased: type the customer id ${customerId} to confirm`));
      assert.ok(refused.text.includes('Wexcombe'), 'nothing went');
      const erased = await sam.follow(await sam.post(`${path}/erase`, { confirm: customerId }));
      assert.match(visibleText(erased.text), /Erased on \d{4}-\d{2}-\d{2}: memory deleted, data key destroyed/);
      assert.ok(!erased.text.includes('Wexcombe'));
      const audit = await db.admin.query('SELECT erased_by FROM customer_erasures WHERE customer_id = $1', [customerId]);
      assert.match(audit.rows[0].erased_by, /^Sam via console/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
