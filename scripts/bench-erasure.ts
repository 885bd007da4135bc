import { performance } from 'node:perf_hooks';
import { Client as PgClient } from 'pg';
import { eraseCustomer } from '../src/client/erasure';
import { loadConfig } from '../src/config';
import { migrate } from '../src/db/migrate';
import { openDatabase } from '../src/db/pool';
import { startDevServer } from '../src/dev/env/dev-server';
import { createMemoryActivities } from '../src/activities/memory';
import { rememberNote } from '../src/memory/remember';
import type { LogEntry } from '../src/schemas/transcript-log';
import { bodyCodecOf, customerBodyCodec, customerKeysOf, openTranscriptLog } from '../src/temporal/codec/body-codec';
import { CustomerKeys } from '../src/temporal/codec/customer-keys';
import { connectClient } from '../src/temporal/client';
import { codecFor, dataConverterFor, historyCodecFor } from '../src/temporal/data-converter';
import { defaultPayloadConverter } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';

// `DATABASE_URL=postgres://… npx tsx scripts/bench-erasure.ts [--customers 3] [--payloads 2000] [--rounds 5]`
// Four measures, in one run, on a database of its own (created and dropped here) and a Temporal
// dev server (CASEWORK_BENCH_TEMPORAL_PORT, default 7335; reused when one listens there):
//  1. erasing a customer with 50 notes, 20 closed cases and 2,000 transcript entries (100 on
//     each of their 20 tickets): the whole eraseCustomer, its running-investigation check
//     (one describe per ticket) included;
//  2. the per-payload decode cost of transcript bodies under a customer's data key (cached, as
//     a worker holds it) and under the deployment key, the same bodies, rounds interleaved;
//  3. what an investigation's history payload costs by reference under its customer's key
//     (stored on completion, fetched and decrypted on activation: one payload per batch, the
//     worst case) beside staying inline (encrypted and decrypted only), rounds interleaved;
//  4. what the same history payload costs inline under its customer's key (the history codec of
//     CASEWORK_CUSTOMER_PAYLOADS=inline, key cached) beside under the deployment key, decode and
//     encode apart, rounds interleaved.

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive whole number`);
  return value;
}

const NOTES = 50;
const CASES = 20;
const ENTRIES = 2_000;

async function admin(url: string, sql: string): Promise<void> {
  const client = new PgClient({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A tool result of about 1.5 KB, as an investigation's entries are. */
function entry(seq: number, customerId: string): LogEntry {
  const text = `Tracking for order ${seq} of ${customerId}: scanned at hub ${seq % 17}, bag ${seq % 91}, out for delivery. `.repeat(14);
  return { seq, kind: 'message', role: 'user', body: { type: 'tool_result', tool_use_id: `toolu_${seq}`, content: text }, tokens: Math.ceil(text.length / 4) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const customers = flag('customers', 3);
  const payloads = flag('payloads', 2_000);
  const rounds = flag('rounds', 5);
  const base = loadConfig();
  if (!base.DATABASE_URL) throw new Error('set DATABASE_URL to a Postgres server this bench may create a database on');
  const name = `casework_bench_erasure_${process.pid}`;
  await admin(base.DATABASE_URL, `CREATE DATABASE ${name}`);
  const url = new URL(base.DATABASE_URL);
  url.pathname = `/${name}`;
  const port = Number(process.env.CASEWORK_BENCH_TEMPORAL_PORT ?? 7335);
  const server = await startDevServer({ port, uiPort: port + 1000, headless: true });
  const config = loadConfig({ ...process.env, DATABASE_URL: url.toString(), TEMPORAL_ADDRESS: server.address });
  const db = await openDatabase(config);
  const { client, close } = await connectClient(config, { pool: db.app });
  try {
    await migrate(db.admin);
    const codec = codecFor(config);
    const log = openTranscriptLog(db.app, codec);
    const memory = createMemoryActivities({ pool: db.app });
    const now = new Date().toISOString();

    // 1. Erase time.
    const eraseMs: number[] = [];
    for (let c = 0; c < customers; c++) {
      const customerId = `bench-erase-${c}`;
      for (let t = 0; t < CASES; t++) {
        const ticketId = `BE-${c}-${t}`;
        await db.admin.query('INSERT INTO ticket_owners (ticket_id, customer_id, first_event_id) VALUES ($1, $2, $3)', [ticketId, customerId, `e-${ticketId}`]);
        const perTicket = ENTRIES / CASES;
        await log.write(
          `investigation-${ticketId}`,
          Array.from({ length: perTicket }, (_, i) => entry(i + 1, customerId)),
        );
        await memory.recordCase({
          customerId,
          workflowId: `investigation-${ticketId}`,
          ticketId,
          orderIds: [`${4000 + t}`],
          summary: `Parcel ${t} was left at the wrong door`,
          resolution: 'refunded',
          closedOn: now.slice(0, 10),
        });
      }
      for (let n = 0; n < NOTES; n++) {
        await rememberNote(db.app, { customerId, fact: `Prefers deliveries to locker number ${100 + n} at the station`, sourceRun: `investigation-BE-${c}-0`, now, ttlMonths: 12 });
      }
      const counts = await db.admin.query<{ notes: number; cases: number; entries: number }>(
        `SELECT (SELECT count(*)::int FROM memory_notes WHERE customer_id = $1) AS notes, (SELECT count(*)::int FROM memory_cases WHERE customer_id = $1) AS cases,
                (SELECT count(*)::int FROM transcript_log WHERE workflow_id LIKE $2) AS entries`,
        [customerId, `investigation-BE-${c}-%`],
      );
      const t0 = performance.now();
      const report = await eraseCustomer({ pool: db.app, keys: customerKeysOf(db.app, codec), client }, { customerId, by: 'bench' });
      eraseMs.push(performance.now() - t0);
      const row = counts.rows[0]!;
      console.log(
        `erased ${customerId}: ${row.notes} notes, ${row.cases} cases, ${row.entries} transcript entries in ${eraseMs.at(-1)!.toFixed(1)} ms (deleted ${report.deleted.notes} notes, ${report.deleted.cases} cases)`,
      );
    }

    // 2. Per-payload decode, customer key vs deployment key, the same bodies.
    const customerKeys = new CustomerKeys(db.app, codec.keyring);
    const perCustomer = customerBodyCodec(codec, customerKeys);
    const deployment = bodyCodecOf(codec);
    const bodies = Array.from({ length: payloads }, (_, i) => entry(i + 1, 'bench-decode').body);
    const underCustomer = await Promise.all(bodies.map((b) => perCustomer.encode(b, { customerId: 'bench-decode' })));
    const underDeployment = await Promise.all(bodies.map((b) => deployment.encode(b)));
    const time = async (codecToUse: typeof deployment, all: Buffer[]) => {
      const t0 = performance.now();
      for (const bytes of all) await codecToUse.decode(bytes);
      return ((performance.now() - t0) * 1000) / all.length;
    };
    await time(perCustomer, underCustomer);
    await time(deployment, underDeployment);
    const cust: number[] = [];
    const dep: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Interleaved, alternating which goes first, so drift and warm-up fall on both alike.
      if (r % 2 === 0) {
        cust.push(await time(perCustomer, underCustomer));
        dep.push(await time(deployment, underDeployment));
      } else {
        dep.push(await time(deployment, underDeployment));
        cust.push(await time(perCustomer, underCustomer));
      }
    }
    // 3. A history payload by reference under the customer's key vs inline.
    await db.admin.query("INSERT INTO ticket_owners (ticket_id, customer_id, first_event_id) VALUES ('BH-1', 'bench-history', 'e-BH-1') ON CONFLICT DO NOTHING");
    const converter = dataConverterFor({ ...config, CASEWORK_CUSTOMER_PAYLOADS: 'true' }, db.app, { codec });
    const runner = new ExternalStorageRunner(converter.externalStorage!);
    const target = { kind: 'workflow' as const, namespace: 'default', id: 'investigation-BH-1' };
    const historyPayloads = Array.from({ length: Math.min(payloads, 500) }, (_, i) =>
      defaultPayloadConverter.toPayload({ step: i, preview: `Tracking for order ${i}: out for delivery`, usage: { input_tokens: 1200 + i } }),
    );
    const roundTrip = async (byReference: boolean) => {
      const t0 = performance.now();
      for (const payload of historyPayloads) {
        const [encrypted] = await codec.encode([payload]);
        const [inHistory] = byReference ? await runner.store([encrypted!], { target }) : [encrypted!];
        const [resolved] = byReference ? await runner.retrieve([inHistory!]) : [inHistory!];
        await codec.decode([resolved!]);
      }
      return ((performance.now() - t0) * 1000) / historyPayloads.length;
    };
    await roundTrip(true);
    await roundTrip(false);
    const byRef: number[] = [];
    const inline: number[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        byRef.push(await roundTrip(true));
        inline.push(await roundTrip(false));
      } else {
        inline.push(await roundTrip(false));
        byRef.push(await roundTrip(true));
      }
    }
    // 4. The same history payloads inline under the customer's key vs the deployment key: decode
    // (what reading a history costs) and encode (what a workflow task completion costs), apart.
    const underCustomerInline = historyCodecFor({ ...config, CASEWORK_CUSTOMER_PAYLOADS: 'inline' }, db.app);
    const context = { type: 'workflow' as const, namespace: 'default', workflowId: target.id };
    const encodeAll = async (codecToUse: typeof codec) => {
      const t0 = performance.now();
      const out = [];
      for (const payload of historyPayloads) out.push(...(await codecToUse.encode([payload], context)));
      return { encoded: out, us: ((performance.now() - t0) * 1000) / historyPayloads.length };
    };
    const decodeAll = async (codecToUse: typeof codec, encoded: typeof historyPayloads) => {
      const t0 = performance.now();
      for (const payload of encoded) await codecToUse.decode([payload]);
      return ((performance.now() - t0) * 1000) / encoded.length;
    };
    const inlineRound = async (codecToUse: typeof codec) => {
      const { encoded, us } = await encodeAll(codecToUse);
      return { encode: us, decode: await decodeAll(codecToUse, encoded) };
    };
    await inlineRound(underCustomerInline);
    await inlineRound(codec);
    const custInline: { encode: number; decode: number }[] = [];
    const depInline: { encode: number; decode: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        custInline.push(await inlineRound(underCustomerInline));
        depInline.push(await inlineRound(codec));
      } else {
        depInline.push(await inlineRound(codec));
        custInline.push(await inlineRound(underCustomerInline));
      }
    }
    console.log('');
    console.log('| measure | value |');
    console.log('| --- | --- |');
    console.log(
      `| erase: ${NOTES} notes, ${CASES} cases, ${ENTRIES} transcript entries (median of ${customers}) | ${median(eraseMs).toFixed(1)} ms (min ${Math.min(...eraseMs).toFixed(1)}, max ${Math.max(...eraseMs).toFixed(1)}) |`,
    );
    console.log(`| decode per payload, deployment key (median of ${rounds} rounds × ${payloads}) | ${median(dep).toFixed(1)} µs |`);
    console.log(`| decode per payload, customer key, cached (same) | ${median(cust).toFixed(1)} µs |`);
    console.log(`| ratio customer / deployment | ${(median(cust) / median(dep)).toFixed(3)} |`);
    console.log(`| history payload inline: encrypt + decrypt (median of ${rounds} rounds × ${historyPayloads.length}) | ${median(inline).toFixed(1)} µs |`);
    console.log(`| history payload by reference under the customer's key: + store + fetch (same) | ${median(byRef).toFixed(1)} µs |`);
    console.log(`| ratio by reference / inline | ${(median(byRef) / median(inline)).toFixed(1)} |`);
    const of = (xs: { encode: number; decode: number }[], part: 'encode' | 'decode') => median(xs.map((x) => x[part]));
    for (const part of ['decode', 'encode'] as const) {
      console.log(`| history payload ${part}, deployment key (median of ${rounds} rounds × ${historyPayloads.length}) | ${of(depInline, part).toFixed(1)} µs |`);
      console.log(`| history payload ${part}, customer key inline, cached (same) | ${of(custInline, part).toFixed(1)} µs |`);
      console.log(`| ratio customer inline / deployment, ${part} | ${(of(custInline, part) / of(depInline, part)).toFixed(3)} |`);
    }
  } finally {
    await close();
    await db.close();
    await server.stop();
    await admin(base.DATABASE_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
