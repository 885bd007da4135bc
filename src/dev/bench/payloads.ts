import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { defaultPayloadConverter, ExternalStorage, StorageDriverClaim, type Payload, type StorageDriver } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec, type NonceMode } from '../../temporal/codec/encryption-codec';
import { keyringOf } from '../../temporal/codec/keys';
import { Client as PgClient } from 'pg';
import { migrate } from '../../db/migrate';
import { openPool } from '../../db/pool';
import { toBlob } from '../../temporal/storage/blob';
import { PostgresStorageDriver } from '../../temporal/storage/postgres-driver';

// Payload codec and reference costs, measured on this machine: encode / decode throughput of
// the encryption codec for a 4 KB and a 200 KB payload, the bytes it adds per payload, and
// what a 4,000-token tool result costs the history inline versus by reference.
// Run: npx tsx src/dev/bench/payloads.ts

const protoSize = (p: Payload) => temporal.api.common.v1.Payload.encode(p).finish().length;

/** A JSON payload of about `bytes` bytes of text, like a tool result. */
function payloadOf(bytes: number): Payload {
  const line = 'order A-1042 shipped from Tilburg hub, bag 44, scanned at 09:14; ';
  return defaultPayloadConverter.toPayload<unknown>({ tool_result: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes) });
}

async function time(iterations: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(500, iterations); i++) await fn();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn();
  return (performance.now() - start) / iterations;
}

async function main(): Promise<void> {
  const ring = keyringOf([{ id: '2026-q2', key: randomBytes(32) }], 'environment');
  const rows: string[][] = [];
  for (const mode of ['derived', 'random'] as NonceMode[]) {
    const codec = new EncryptionCodec(ring, mode);
    for (const size of [4 * 1024, 200 * 1024]) {
      const payload = payloadOf(size);
      const encrypted = (await codec.encode([payload]))[0]!;
      const iterations = size > 10_000 ? 400 : 5_000;
      const encMs = await time(iterations, () => codec.encode([payload]));
      const decMs = await time(iterations, () => codec.decode([encrypted]));
      const mb = protoSize(payload) / 1e6;
      rows.push([
        mode,
        `${size / 1024} KB`,
        String(protoSize(payload)),
        String(protoSize(encrypted)),
        `+${protoSize(encrypted) - protoSize(payload)}`,
        (encMs * 1000).toFixed(1),
        (mb / (encMs / 1000)).toFixed(0),
        (decMs * 1000).toFixed(1),
        (mb / (decMs / 1000)).toFixed(0),
      ]);
    }
  }
  console.log('\nEncryption codec (AES-256-GCM, one payload per call, node', process.version + ')');
  table(['nonce', 'payload', 'bytes in', 'bytes out', 'added', 'encode µs', 'encode MB/s', 'decode µs', 'decode MB/s'], rows);

  // A 4,000-token tool result (16,000 characters, the project's 4-characters-a-token estimate).
  const codec = new EncryptionCodec(ring);
  const encrypted = (await codec.encode([payloadOf(16_000)]))[0]!;
  const memory: StorageDriver = {
    name: 'casework-postgres',
    type: 'bench',
    store: async (_c, ps) => ps.map((p) => new StorageDriverClaim({ sha256: toBlob(p).sha256 })),
    retrieve: async () => [],
  };
  const reference = (await new ExternalStorageRunner(new ExternalStorage({ drivers: [memory], payloadSizeThreshold: 4096 })).store([encrypted]))[0]!;
  console.log('\nA 4,000-token tool result in history (payload bytes, as the server stores them)');
  table(
    ['form', 'bytes'],
    [
      ['plain JSON (no codec)', String(protoSize(payloadOf(16_000)))],
      ['encrypted, inline', String(protoSize(encrypted))],
      ['encrypted, by reference (what history keeps)', String(protoSize(reference))],
      ['stored blob (payload_blobs.bytes)', String(toBlob(encrypted).bytes.length)],
    ],
  );
  if (process.env.DATABASE_URL) await postgresBench(process.env.DATABASE_URL, codec);
  else console.log('\n(set DATABASE_URL to measure the Postgres storage driver too)');
}

/** Store and retrieve latency of the Postgres driver, in a scratch database dropped afterwards. */
async function postgresBench(baseUrl: string, codec: EncryptionCodec): Promise<void> {
  const name = `casework_bench_payloads_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new PgClient({ connectionString: baseUrl });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const pool = openPool(url.toString(), 4);
  try {
    await migrate(pool);
    const driver = new PostgresStorageDriver(pool);
    const ctx = { target: { kind: 'workflow' as const, namespace: 'default', id: 'bench' } };
    const rows: string[][] = [];
    for (const size of [16_000, 200 * 1024]) {
      const n = size > 100_000 ? 100 : 300;
      // Distinct payloads, so each first store is a real insert.
      const fresh = await codec.encode(Array.from({ length: n }, (_, i) => defaultPayloadConverter.toPayload<unknown>({ i, tool_result: 'x'.repeat(size) })));
      let start = performance.now();
      const claims = [];
      for (const p of fresh) claims.push(...(await driver.store(ctx, [p])));
      const storeMs = (performance.now() - start) / n;
      start = performance.now();
      for (const p of fresh) await driver.store(ctx, [p]);
      const againMs = (performance.now() - start) / n;
      start = performance.now();
      for (const c of claims) await driver.retrieve({}, [c]);
      const retrieveMs = (performance.now() - start) / n;
      rows.push([`${Math.round(size / 1000)} KB`, String(n), storeMs.toFixed(2), againMs.toFixed(2), retrieveMs.toFixed(2)]);
    }
    console.log('\nPostgres storage driver (one payload per call, this machine, local Postgres)');
    table(['payload', 'calls', 'store ms', 'store again ms', 'retrieve ms'], rows);
  } finally {
    await pool.end();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
