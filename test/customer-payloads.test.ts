import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultPayloadConverter, type ExternalStorage } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { startCodecServer } from '../src/server/codec-server';
import { customerKeysOf } from '../src/temporal/codec/body-codec';
import { CustomerErasedError } from '../src/temporal/codec/customer-keys';
import type { EncryptionCodec } from '../src/temporal/codec/encryption-codec';
import { dataConverterFor } from '../src/temporal/data-converter';
import { CUSTOMER_DRIVER_NAME } from '../src/temporal/storage/customer-driver';
import { openTestDatabase, unique } from './support/db';

// An investigation's history by reference under its customer's key: every payload of
// `investigation-<ticketId>`, however small, is stored in customer_payloads encrypted under the
// ticket owner's data key, and history keeps a reference; destroying the key makes that
// customer's payloads undecodable while another customer's still decode.

const json = (value: unknown) => defaultPayloadConverter.toPayload<unknown>(value);
const env = { CASEWORK_CODEC_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`, CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES: '4096', CASEWORK_CUSTOMER_PAYLOADS: 'true' };
const config = loadConfig(env);
const target = (id: string) => ({ kind: 'workflow' as const, namespace: 'default', id });

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db?.close();
});

/** A ticket owned by `customerId`, as the gate records it; returns its investigation's workflow id. */
async function ownedTicket(customerId: string): Promise<string> {
  const ticketId = unique('T');
  await db.admin.query('INSERT INTO ticket_owners (ticket_id, customer_id, first_event_id) VALUES ($1, $2, $3)', [ticketId, customerId, unique('evt')]);
  return `investigation-${ticketId}`;
}

describe("investigations' payloads under their customer's key", () => {
  test("a customer's message, however short, leaves history as a reference; the stored bytes hold none of it and decode back", async () => {
    const converter = dataConverterFor(config, db.app);
    const runner = new ExternalStorageRunner(converter.externalStorage!);
    const workflowId = await ownedTicket('cust_olwen');
    const encrypted = await converter.payloadCodecs![0]!.encode([json({ message: 'Zorblatt' })]);
    const [reference] = await runner.store(encrypted, { target: target(workflowId) });
    const decodedRef = temporal.api.common.v1.Payload.encode(reference!).finish();
    assert.ok(!Buffer.from(decodedRef).includes('Zorblatt'), 'the reference carries no content');
    assert.ok(Buffer.from(decodedRef).toString('latin1').includes(CUSTOMER_DRIVER_NAME), 'it names the customer store');
    const { rows } = await db.admin.query('SELECT customer_id, workflow_id, bytes FROM customer_payloads WHERE workflow_id = $1', [workflowId]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].customer_id, 'cust_olwen');
    assert.ok((rows[0].bytes as Buffer).includes(Buffer.from('cust:cust_olwen:')), 'the stored bytes name the customer key they are under');
    const [back] = await converter.payloadCodecs![0]!.decode(await runner.retrieve([reference!]));
    assert.deepEqual(defaultPayloadConverter.fromPayload(back!), { message: 'Zorblatt' });
  });

  test("after the customer's key is destroyed their payloads fail as erased, and another customer's still decode", async () => {
    const converter = dataConverterFor(config, db.app);
    const runner = new ExternalStorageRunner(converter.externalStorage!);
    const [codec] = converter.payloadCodecs! as [EncryptionCodec];
    const erased = await ownedTicket('cust_ysolde');
    const kept = await ownedTicket('cust_kofi');
    const [gone] = await runner.store(await codec.encode([json('Ysolde wrote this')]), { target: target(erased) });
    const [stays] = await runner.store(await codec.encode([json('Kofi wrote this')]), { target: target(kept) });
    await customerKeysOf(db.app, codec).destroy('cust_ysolde');
    await assert.rejects(runner.retrieve([gone!]), (error: unknown) => error instanceof CustomerErasedError || (error as Error).cause instanceof CustomerErasedError);
    const [back] = await codec.decode(await runner.retrieve([stays!]));
    assert.equal(defaultPayloadConverter.fromPayload(back!), 'Kofi wrote this');
  });

  test("the codec server's /decode shows an erased customer's stored payload as erased on the date, beside another customer's that still decodes", async () => {
    const converter = dataConverterFor(config, db.app);
    const runner = new ExternalStorageRunner(converter.externalStorage!);
    const [codec] = converter.payloadCodecs! as [EncryptionCodec];
    const erased = await ownedTicket('cust_wendeline');
    const kept = await ownedTicket('cust_amadou');
    const [gone] = await runner.store(await codec.encode([json('Wendeline wrote Brisketmoor')]), { target: target(erased) });
    const [stays] = await runner.store(await codec.encode([json('Amadou wrote this')]), { target: target(kept) });
    const server = await startCodecServer(config, { codecs: converter.payloadCodecs!, externalStorage: converter.externalStorage, port: 0 });
    const decode = async () => {
      const payloads = [gone!, stays!].map((p) => ({
        metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(p.data ?? []).toString('base64'),
      }));
      const res = await fetch(`${server.url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-namespace': 'default' },
        body: JSON.stringify({ payloads }),
      });
      const body = (await res.json()) as { payloads?: { data: string }[] };
      return { status: res.status, texts: (body.payloads ?? []).map((p) => JSON.parse(Buffer.from(p.data, 'base64').toString('utf8')) as unknown) };
    };
    try {
      assert.deepEqual(await decode(), { status: 200, texts: ['Wendeline wrote Brisketmoor', 'Amadou wrote this'] }, 'both decode while her key lives');
      await customerKeysOf(db.app, codec).destroy('cust_wendeline');
      const { rows } = await db.admin.query("SELECT destroyed_at FROM customer_keys WHERE customer_id = 'cust_wendeline'");
      const erasedOn = (rows[0].destroyed_at as Date).toISOString().slice(0, 10);
      // The erasure ran in this process, which shares the server's customer keys: they are forgotten at once.
      assert.deepEqual(await decode(), { status: 200, texts: [`erased on ${erasedOn}`, 'Amadou wrote this'] });
    } finally {
      await server.close();
    }
  });

  test('payloads of other workflows keep the size rule: small ones inline, large ones in payload_blobs', async () => {
    const converter = dataConverterFor(config, db.app);
    const storage = converter.externalStorage as ExternalStorage;
    assert.deepEqual(
      storage.drivers.map((d) => d.name),
      ['casework-postgres', CUSTOMER_DRIVER_NAME],
    );
    const runner = new ExternalStorageRunner(storage);
    const [codec] = converter.payloadCodecs!;
    const [small, large] = await codec!.encode([json('small'), json('x'.repeat(10_000))]);
    const [keptSmall, storedLarge] = await runner.store([small!, large!], { target: target('casework-retention-1') });
    assert.equal(keptSmall, small, 'below the threshold it stays inline');
    assert.ok(Buffer.from(temporal.api.common.v1.Payload.encode(storedLarge!).finish()).toString('latin1').includes('casework-postgres'));
  });

  test('an investigation with no owner recorded stores its payloads under the deployment key alone, and they decode', async () => {
    const converter = dataConverterFor(config, db.app);
    const runner = new ExternalStorageRunner(converter.externalStorage!);
    const [codec] = converter.payloadCodecs!;
    const workflowId = `investigation-${unique('T')}`;
    const [reference] = await runner.store(await codec!.encode([json('no owner')]), { target: target(workflowId) });
    const { rows } = await db.admin.query('SELECT customer_id FROM customer_payloads WHERE workflow_id = $1', [workflowId]);
    assert.equal(rows[0].customer_id, null);
    const [back] = await codec!.decode(await runner.retrieve([reference!]));
    assert.equal(defaultPayloadConverter.fromPayload(back!), 'no owner');
  });

  test('CASEWORK_CUSTOMER_PAYLOADS=false leaves only the size rule', () => {
    const off = loadConfig({ ...env, CASEWORK_CUSTOMER_PAYLOADS: 'false' });
    const storage = dataConverterFor(off, db.app).externalStorage as ExternalStorage;
    assert.deepEqual(
      storage.drivers.map((d) => d.name),
      ['casework-postgres'],
    );
  });
});
