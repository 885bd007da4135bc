import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { defaultPayloadConverter, type ExternalStorage, StorageDriverClaim } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { EncryptionCodec } from '../src/temporal/codec/encryption-codec';

import { dataConverterFor } from '../src/temporal/data-converter';
import { toBlob } from '../src/temporal/storage/blob';
import { MissingPayloadError, PostgresStorageDriver } from '../src/temporal/storage/postgres-driver';
import { awsObjectStore, S3StorageDriver, type ObjectStore } from '../src/temporal/storage/s3-driver';
import { openTestDatabase } from './support/db';

// Payloads stored by reference (the SDK's External Storage) in Postgres and in an
// S3-compatible bucket: content-addressed, written once, encrypted before they are stored.

const json = (value: unknown) => defaultPayloadConverter.toPayload<unknown>(value);
const ctx = { target: { kind: 'workflow' as const, namespace: 'default', id: 'investigation-T-1' } };
const big = (tag: string) => json({ tool_result: `${tag} `.repeat(2_000) });

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db?.close();
});

async function rowCount(): Promise<number> {
  return Number((await db.admin.query('SELECT count(*) AS n FROM payload_blobs')).rows[0].n);
}

describe('Postgres storage driver', () => {
  test('stores a payload under the SHA-256 of its bytes and retrieves it unchanged', async () => {
    const driver = new PostgresStorageDriver(db.app);
    const payload = big('order A-1');
    const [claim] = await driver.store(ctx, [payload]);
    assert.equal(claim!.claimData.sha256, toBlob(payload).sha256);
    const [back] = await driver.retrieve({}, [claim!]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(back!), defaultPayloadConverter.fromPayload(payload));
    const row = (await db.admin.query('SELECT workflow_id, namespace FROM payload_blobs WHERE sha256 = $1', [claim!.claimData.sha256])).rows[0];
    assert.deepEqual(row, { workflow_id: 'investigation-T-1', namespace: 'default' });
  });

  test('storing the same payload again, or twice in one batch, writes no second row', async () => {
    const driver = new PostgresStorageDriver(db.app);
    const payload = big('retried activity result');
    const before = await rowCount();
    const first = await driver.store(ctx, [payload, payload]);
    const retry = await driver.store(ctx, [payload]);
    assert.equal(await rowCount(), before + 1);
    assert.equal(first[0]!.claimData.sha256, retry[0]!.claimData.sha256);
    assert.equal(first.length, 2);
  });

  test('storing equal bytes again refreshes an old blob for retention, and within the hour touches nothing', async () => {
    const driver = new PostgresStorageDriver(db.app);
    const payload = big('kept alive by a newer run');
    const [claim] = await driver.store(ctx, [payload]);
    const stamp = async () => (await db.admin.query('SELECT last_stored_at, xmin::text AS version FROM payload_blobs WHERE sha256 = $1', [claim!.claimData.sha256])).rows[0];
    const first = await stamp();
    await driver.store(ctx, [payload]);
    assert.deepEqual(await stamp(), first, 'a retry within the hour does not write the row');
    await db.admin.query("UPDATE payload_blobs SET last_stored_at = now() - interval '40 days' WHERE sha256 = $1", [claim!.claimData.sha256]);
    await driver.store(ctx, [payload]);
    const refreshed = await stamp();
    assert.ok(Date.now() - new Date(refreshed.last_stored_at).getTime() < 60_000, 'the old blob is marked as stored now');
  });

  test('a reference to a blob that is gone fails naming its hash', async () => {
    const driver = new PostgresStorageDriver(db.app);
    const missing = new StorageDriverClaim({ sha256: 'f'.repeat(64) });
    await assert.rejects(driver.retrieve({}, [missing]), (e: Error) => e instanceof MissingPayloadError && e.message.includes('f'.repeat(64)));
  });

  test('a blob whose bytes were altered in the database is refused, not decoded', async () => {
    const driver = new PostgresStorageDriver(db.app);
    const [claim] = await driver.store(ctx, [big('tamper me')]);
    await db.admin.query("UPDATE payload_blobs SET bytes = bytes || '\\x00'::bytea, size_bytes = size_bytes + 1 WHERE sha256 = $1", [claim!.claimData.sha256]);
    await assert.rejects(driver.retrieve({}, [claim!]), /is corrupt/);
  });

  test('through the data converter, what is stored is ciphertext and the history keeps a small reference', async () => {
    // The size rule alone: investigations' payloads go to their customer's store (test/customer-payloads.test.ts).
    const config = loadConfig({
      CASEWORK_CODEC_KEYS: `k1:${Buffer.alloc(32, 3).toString('base64')}`,
      CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES: '1024',
      CASEWORK_CUSTOMER_PAYLOADS: 'false',
    });
    const converter = dataConverterFor(config, db.app);
    const runner = new ExternalStorageRunner(converter.externalStorage!);
    const secret = 'card 4111 1111 1111 1111 '.repeat(200);
    // The SDK's order: codecs encode first, then External Storage offloads.
    const encrypted = await converter.payloadCodecs![0]!.encode([json({ secret }), json('small')]);
    const [reference, small] = await runner.store(encrypted, { target: ctx.target });
    const referenceBytes = temporal.api.common.v1.Payload.encode(reference!).finish().length;
    assert.ok(referenceBytes < 300, `the reference is small (${referenceBytes} bytes)`);
    assert.equal(small, encrypted[1], 'a payload below the threshold stays inline');
    const stored = (await db.admin.query("SELECT bytes FROM payload_blobs WHERE position('4111'::bytea IN bytes) > 0")).rows;
    assert.equal(stored.length, 0, 'no stored blob holds the card number in clear');
    const [back] = await converter.payloadCodecs![0]!.decode(await runner.retrieve([reference!]));
    assert.deepEqual(defaultPayloadConverter.fromPayload(back!), { secret });
  });
});

describe('S3 storage driver', () => {
  /** An in-memory ObjectStore: a test double for a bucket. */
  function memoryBucket(): ObjectStore & { objects: Map<string, Buffer>; writes: number } {
    const objects = new Map<string, Buffer>();
    const bucket = {
      objects,
      writes: 0,
      async putIfAbsent(key: string, bytes: Buffer) {
        if (objects.has(key)) return 'exists' as const;
        bucket.writes++;
        objects.set(key, bytes);
        return 'created' as const;
      },
      async get(key: string) {
        return objects.get(key);
      },
    };
    return bucket;
  }

  test('names objects prefix + SHA-256 and writes each distinct payload once', async () => {
    const bucket = memoryBucket();
    const driver = new S3StorageDriver(bucket, 'casework/payloads/');
    const payload = big('bucket');
    const [claim] = await driver.store(ctx, [payload, payload]);
    await driver.store(ctx, [payload]);
    assert.equal(bucket.writes, 1);
    assert.deepEqual([...bucket.objects.keys()], [`casework/payloads/${claim!.claimData.sha256}`]);
    assert.deepEqual(defaultPayloadConverter.fromPayload((await driver.retrieve({}, [claim!]))[0]!), defaultPayloadConverter.fromPayload(payload));
    await assert.rejects(driver.retrieve({}, [new StorageDriverClaim({ sha256: '0'.repeat(64) })]), MissingPayloadError);
  });

  describe('over the AWS SDK against an S3-compatible HTTP test double', () => {
    // A few lines of S3's REST protocol (path-style PUT with If-None-Match, GET, XML errors),
    // standing in for MinIO, which cannot run here.
    const objects = new Map<string, Buffer>();
    const requests: { method: string; url: string; ifNoneMatch?: string; signed: boolean }[] = [];
    let server: Server;
    let endpoint: string;
    before(async () => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          requests.push({ method: req.method!, url: req.url!, ifNoneMatch: req.headers['if-none-match'], signed: /^AWS4-HMAC-SHA256 /.test(req.headers.authorization ?? '') });
          const path = decodeURIComponent(new URL(req.url!, 'http://s3').pathname);
          const error = (status: number, code: string) => {
            res.writeHead(status, { 'content-type': 'application/xml' });
            res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
          };
          if (req.method === 'PUT') {
            if (req.headers['if-none-match'] === '*' && objects.has(path)) return error(412, 'PreconditionFailed');
            objects.set(path, Buffer.concat(chunks));
            res.writeHead(200, { etag: '"x"' });
            return res.end();
          }
          if (req.method === 'GET') {
            const body = objects.get(path);
            if (!body) return error(404, 'NoSuchKey');
            res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/x-protobuf' });
            return res.end(body);
          }
          error(405, 'MethodNotAllowed');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test('puts with If-None-Match: *, treats "already there" as stored, and reads it back', async () => {
      process.env.AWS_ACCESS_KEY_ID ??= 'test-double-access-key';
      process.env.AWS_SECRET_ACCESS_KEY ??= 'test-double-secret-key';
      const config = loadConfig({ CASEWORK_S3_BUCKET: 'casework', CASEWORK_S3_ENDPOINT: endpoint, CASEWORK_S3_FORCE_PATH_STYLE: 'true' });
      const driver = new S3StorageDriver(awsObjectStore(config), config.CASEWORK_S3_PREFIX);
      const payload = big('minio');
      const [claim] = await driver.store(ctx, [payload]);
      await driver.store(ctx, [payload]);
      const puts = requests.filter((r) => r.method === 'PUT');
      assert.equal(puts.length, 2);
      assert.ok(puts.every((r) => r.ifNoneMatch === '*' && r.signed));
      assert.equal(objects.size, 1);
      assert.ok(objects.has(`/casework/casework/payloads/${claim!.claimData.sha256}`));
      assert.deepEqual(defaultPayloadConverter.fromPayload((await driver.retrieve({}, [claim!]))[0]!), defaultPayloadConverter.fromPayload(payload));
      await assert.rejects(driver.retrieve({}, [new StorageDriverClaim({ sha256: '1'.repeat(64) })]), MissingPayloadError);
    });
  });
});

describe('data converter', () => {
  test('offloads to no store when CASEWORK_PAYLOAD_STORE=off and CASEWORK_CUSTOMER_PAYLOADS=false, and always encrypts', () => {
    const config = loadConfig({ CASEWORK_CODEC_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`, CASEWORK_PAYLOAD_STORE: 'off', CASEWORK_CUSTOMER_PAYLOADS: 'false' });
    const converter = dataConverterFor(config, db.app);
    assert.equal(converter.externalStorage, undefined);
    assert.ok(converter.payloadCodecs?.[0] instanceof EncryptionCodec);
  });

  test('uses the configured size threshold', () => {
    const config = loadConfig({
      CASEWORK_CODEC_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES: '777',
      CASEWORK_CUSTOMER_PAYLOADS: 'false',
    });
    const storage = dataConverterFor(config, db.app).externalStorage as ExternalStorage;
    assert.equal(storage.payloadSizeThreshold, 777);
    assert.equal(storage.drivers[0]!.name, 'casework-postgres');
  });
});
