import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { applyRetentionSchedule, RETENTION_SCHEDULE_ID } from '../src/client/schedules';
import type { Database } from '../src/db/pool';
import { processMetrics } from '../src/observability/metrics';
import type { RetentionReport } from '../src/schemas/retention';
import { openTranscriptLog } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { EMBEDDED_SHARED_SESSION, openTestDatabase, unique } from './support/db';
import { ticket } from './support/investigate';
import { answer, scriptedModel } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// Retention as a Temporal Schedule: `casework schedules apply` creates the schedule once and
// updates it after; each run deletes, in batches and as the retention role, what is past its
// retention in every store, keeps what is not (and a running investigation's transcript however
// old), and reports the rows removed per store. Real dev server, real Postgres.

const model = scriptedModel();
let db: Database;
let tw: TestWorker;
// Batches of 2 rows, so every store is emptied over several batches.
const env = {
  CASEWORK_RETENTION_TRANSCRIPT_DAYS: '30',
  CASEWORK_RETENTION_PAYLOAD_DAYS: '40',
  CASEWORK_RETENTION_CASE_MEMORY_DAYS: '365',
  CASEWORK_RETENTION_BATCH: '2',
  CASEWORK_CUSTOMER_PAYLOADS: 'true',
};
before(async () => {
  db = await openTestDatabase();
  tw = await startTestWorker({ pool: db.app, model, env });
  await tw.client.schedule
    .getHandle(RETENTION_SCHEDULE_ID)
    .delete()
    .catch(() => undefined);
});
after(async () => {
  await tw?.client.schedule
    .getHandle(RETENTION_SCHEDULE_ID)
    .delete()
    .catch(() => undefined);
  await tw?.stop();
  await db?.close();
});

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
const count = async (sql: string, params: unknown[] = []) => (await db.admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0]!.n;

/** Transcript entries (and a kept reply) for `workflowId`, written `age` days ago. */
async function entries(workflowId: string, n: number, age: number): Promise<void> {
  const log = openTranscriptLog(db.app, codecFor(tw.config));
  await log.write(
    workflowId,
    Array.from({ length: n }, (_, i) => ({ seq: i + 1, kind: 'message' as const, role: 'user' as const, body: { type: 'text', text: `entry ${i}` }, tokens: 1 })),
  );
  await log.keepReply({ workflowId, runId: 'r1', activityId: '1' }, 1, { content: [] });
  await db.admin.query('UPDATE transcript_log SET created_at = $2 WHERE workflow_id = $1', [workflowId, daysAgo(age)]);
  await db.admin.query('UPDATE model_replies SET created_at = $2 WHERE workflow_id = $1', [workflowId, daysAgo(age)]);
}

/** A stored payload in `table`, last stored `age` days ago. */
async function payload(table: 'customer_payloads' | 'payload_blobs', age: number): Promise<void> {
  const sha = Buffer.from(unique('p')).toString('hex').padEnd(64, '0').slice(0, 64);
  await db.admin.query(`INSERT INTO ${table} (sha256, bytes, size_bytes, last_stored_at) VALUES ($1, '\\x00', 1, $2)`, [sha, daysAgo(age)]);
}

describe('retention', () => {
  test('the application role may not delete what retention deletes', { skip: EMBEDDED_SHARED_SESSION }, async () => {
    await assert.rejects(db.app.query("DELETE FROM transcript_log WHERE workflow_id = 'none'"), /permission denied/);
    await assert.rejects(db.app.query("DELETE FROM customer_payloads WHERE sha256 = 'none'"), /permission denied/);
  });

  test('the schedule is created once and updated after; a run deletes, in batches, only what is past its retention, and counts it', async () => {
    const config = { ...tw.config, CASEWORK_RETENTION_CRON: '0 4 * * *' };
    assert.equal((await applyRetentionSchedule(tw.client, config)).action, 'created');
    const again = await applyRetentionSchedule(tw.client, { ...config, CASEWORK_RETENTION_CRON: '30 2 * * *' });
    assert.equal(again.action, 'updated');
    const described = await tw.client.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
    assert.deepEqual(
      described.spec.calendars?.map((c) => [c.hour, c.minute]),
      [[[{ start: 2, end: 2, step: 1 }], [{ start: 30, end: 30, step: 1 }]]],
    );
    assert.equal(described.action.type === 'startWorkflow' && described.action.taskQueue, tw.taskQueue);

    // A closed investigation idle for 60 days goes; one written yesterday stays; a running one stays however old its entries.
    const old = `investigation-${unique('old')}`;
    const recent = `investigation-${unique('recent')}`;
    await entries(old, 5, 60);
    await entries(recent, 3, 1);
    const running = ticket('cust_retained', 'Still waiting on my parcel.');
    const runningId = `investigation-${running.ticketId}`;
    model.script(runningId, [answer('Looking into it.')]);
    await deliver(tw, model, running);
    await db.admin.query('UPDATE transcript_log SET created_at = $2 WHERE workflow_id = $1', [runningId, daysAgo(60)]);
    await db.admin.query('UPDATE model_replies SET created_at = $2 WHERE workflow_id = $1', [runningId, daysAgo(60)]);
    // Its customer's payloads, however old, stay too: its history may be replayed and reads them.
    await db.admin.query("UPDATE customer_payloads SET last_stored_at = $1 WHERE customer_id = 'cust_retained'", [daysAgo(50)]);
    const runningPayloads = await count("customer_payloads WHERE customer_id = 'cust_retained'");
    assert.ok(runningPayloads > 0, 'the running investigation stored its payloads under its customer');
    const runningEntries = await count('transcript_log WHERE workflow_id = $1', [runningId]);
    assert.ok(runningEntries > 0);
    for (let i = 0; i < 3; i++) await payload('customer_payloads', 50);
    await payload('customer_payloads', 2);
    for (let i = 0; i < 5; i++) await payload('payload_blobs', 50);
    await db.admin.query(
      `INSERT INTO memory_cases (customer_id, source_run, ticket_id, problem, resolution, closed_on, recorded_at)
       VALUES ('cust_retained', 'run-old', 'T-old', 'late parcel', 'refunded', $1, now()), ('cust_retained', 'run-new', 'T-new', 'late parcel', 'resent', $2, now())`,
      [daysAgo(400).slice(0, 10), daysAgo(10).slice(0, 10)],
    );
    const customerPayloadsBefore = await count('customer_payloads');

    const handle = tw.client.schedule.getHandle(RETENTION_SCHEDULE_ID);
    await handle.trigger();
    let workflowId: string | undefined;
    for (let i = 0; i < 100 && !workflowId; i++) {
      workflowId = (await handle.describe()).info.recentActions.at(-1)?.action.workflow.workflowId;
      if (!workflowId) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(workflowId, 'the trigger started a retention run');
    const report = (await tw.client.workflow.getHandle(workflowId).result()) as RetentionReport;

    assert.equal(report.stores.transcript_log?.rows, 5);
    assert.equal(report.stores.model_replies?.rows, 1);
    assert.equal(report.stores.payload_blobs?.rows, 5);
    assert.equal(report.stores.memory_cases?.rows, 1);
    assert.ok(report.stores.customer_payloads!.rows >= 3, 'the old customer payloads went');
    assert.ok(Object.values(report.stores).every((s) => s.seconds >= 0));
    assert.equal(await count('transcript_log WHERE workflow_id = $1', [old]), 0);
    assert.equal(await count('model_replies WHERE workflow_id = $1', [old]), 0);
    assert.equal(await count('transcript_log WHERE workflow_id = $1', [recent]), 3, "a recent investigation's entries stay");
    assert.equal(await count('transcript_log WHERE workflow_id = $1', [runningId]), runningEntries, "a running investigation's entries stay, however old");
    assert.equal(await count("customer_payloads WHERE last_stored_at < now() - interval '40 days' AND customer_id IS DISTINCT FROM 'cust_retained'"), 0);
    // Rows only ever go by deletion, so as many or more (its status queries store theirs) means none of hers went.
    assert.ok((await count("customer_payloads WHERE customer_id = 'cust_retained'")) >= runningPayloads, "a running investigation's customer keeps every stored payload");
    assert.ok((await count('customer_payloads')) >= customerPayloadsBefore - report.stores.customer_payloads!.rows);
    assert.equal(await count("memory_cases WHERE source_run = 'run-new'"), 1, 'memory of a recent case stays');
    const scrape = await processMetrics().registry.metrics();
    assert.match(scrape, /casework_retention_rows_removed_total\{store="transcript_log"\} [5-9]/);
    assert.match(scrape, /casework_retention_duration_seconds_count\{store="memory_cases"\} [1-9]/);
  });
});
