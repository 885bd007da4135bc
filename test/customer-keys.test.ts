import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { TranscriptLog } from '../src/db/transcript-log';
import { bodyCodecOf, customerBodyCodec } from '../src/temporal/codec/body-codec';
import { CustomerErasedError, CustomerKeys } from '../src/temporal/codec/customer-keys';
import { DecryptionError, EncryptionCodec } from '../src/temporal/codec/encryption-codec';
import { customerKeyId, newDataKey, parseCustomerKeyId, unwrapKey, wrapKey } from '../src/temporal/codec/key-wrap';
import { keyringOf, type CodecKey } from '../src/temporal/codec/keys';
import { codecFor } from '../src/temporal/data-converter';
import { openTestDatabase, unique } from './support/db';

// Per-customer data keys: each wrapped by the deployment's master key, created once under
// concurrency, re-wrapped on rotation without touching data, and gone for good once destroyed.

const masterA: CodecKey = { id: 'master-a', key: randomBytes(32) };
const masterB: CodecKey = { id: 'master-b', key: randomBytes(32) };
let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db?.close();
});

const customerIdArb = fc.string({ minLength: 1, maxLength: 100 }).filter((s) => s.trim().length > 0);

describe('key wrap (properties)', () => {
  test('a wrapped key unwraps to itself, and only for the same customer, version and master key', () => {
    fc.assert(
      fc.property(customerIdArb, fc.integer({ min: 1, max: 1_000_000 }), customerIdArb, (customerId, version, other) => {
        const dataKey = newDataKey();
        const name = { customerId, version };
        const wrapped = wrapKey(dataKey, name, masterA);
        assert.deepEqual(unwrapKey(wrapped, name, masterA), dataKey);
        assert.throws(() => unwrapKey(wrapped, { customerId, version: version + 1 }, masterA), DecryptionError);
        assert.throws(() => unwrapKey(wrapped, name, { id: masterA.id, key: masterB.key }), DecryptionError);
        if (other !== customerId) assert.throws(() => unwrapKey(wrapped, { customerId: other, version }, masterA), DecryptionError);
        assert.deepEqual(parseCustomerKeyId(customerKeyId(name)), name);
      }),
      { numRuns: 200 },
    );
  });

  test('a master key id is not a customer key id', () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/), (id) => assert.equal(parseCustomerKeyId(id), undefined)));
  });

  test('any content encrypted under a customer key decodes until the key is destroyed, and never after', async () => {
    const keys = new CustomerKeys(db.app, keyringOf([masterA], 'environment'));
    const codec = customerBodyCodec(new EncryptionCodec(keyringOf([masterA], 'environment')), keys);
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const customerId = unique('prop');
        const bytes = await codec.encode(value, { customerId });
        assert.deepEqual(await codec.decode(bytes), JSON.parse(JSON.stringify(value ?? null)));
        assert.ok(!bytes.includes(Buffer.from(JSON.stringify(value))) || JSON.stringify(value).length < 4);
        await keys.destroy(customerId);
        await assert.rejects(codec.decode(bytes), CustomerErasedError);
        // Another process, with a cold cache, cannot read it either.
        const cold = customerBodyCodec(new EncryptionCodec(keyringOf([masterA], 'environment')), new CustomerKeys(db.app, keyringOf([masterA], 'environment')));
        await assert.rejects(cold.decode(bytes), CustomerErasedError);
      }),
      { numRuns: 25 },
    );
  });
});

describe('customer keys in Postgres', () => {
  test('concurrent first uses by many processes create one key, and all of them encrypt under it', async () => {
    const customerId = unique('cust');
    const processes = Array.from({ length: 8 }, () => new CustomerKeys(db.app, keyringOf([masterA], 'environment')));
    const codecs = await Promise.all(processes.map((k) => k.encoderFor(customerId)));
    assert.deepEqual(new Set(codecs.map((c) => c.currentKeyId)), new Set([`cust:${customerId}:1`]));
    const { rows } = await db.admin.query('SELECT count(*)::int AS n FROM customer_keys WHERE customer_id = $1', [customerId]);
    assert.equal(rows[0].n, 1);
    // Each process unwrapped the same data key: one's ciphertext is another's plaintext.
    const a = customerBodyCodec(codecs[0]!, processes[0]!);
    const b = customerBodyCodec(codecs[1]!, processes[1]!);
    assert.equal(await b.decode(await a.encode('the parcel never came', { customerId })), 'the parcel never came');
  });

  test('rotating the master key re-wraps data keys; data written before decodes with the new ring only', async () => {
    const customerId = unique('rot');
    const oldRing = keyringOf([masterA], 'environment');
    const before = customerBodyCodec(new EncryptionCodec(oldRing), new CustomerKeys(db.app, oldRing));
    const bytes = await before.encode({ note: 'my address is 4 Elm Road' }, { customerId });
    const rotated = keyringOf([masterA, masterB], 'environment');
    const { rewrapped } = await new CustomerKeys(db.app, rotated).rewrapAll();
    assert.ok(rewrapped >= 1);
    const { rows } = await db.admin.query('SELECT wrapping_key_id FROM customer_keys WHERE customer_id = $1', [customerId]);
    assert.deepEqual(rows, [{ wrapping_key_id: 'master-b' }]);
    // masterA is gone from the ring: the data is still readable, through the re-wrapped key.
    const onlyB = keyringOf([masterB], 'environment');
    const after = customerBodyCodec(new EncryptionCodec(onlyB), new CustomerKeys(db.app, onlyB));
    assert.deepEqual(await after.decode(bytes), { note: 'my address is 4 Elm Road' });
    assert.deepEqual(await new CustomerKeys(db.app, rotated).rewrapAll(), { rewrapped: 0 }, 'a second re-wrap finds nothing to do');
  });

  test('a destroyed key is refused by another process within the recheck bound, and cannot be restored', async () => {
    const customerId = unique('bound');
    let clock = 1_000;
    const ring = keyringOf([masterA], 'environment');
    const reader = new CustomerKeys(db.app, ring, { recheckMs: 5_000, now: () => clock });
    const codec = customerBodyCodec(new EncryptionCodec(ring), reader);
    const bytes = await codec.encode('call me on 0612345678', { customerId });
    assert.equal(await codec.decode(bytes), 'call me on 0612345678');
    await new CustomerKeys(db.app, ring).destroy(customerId);
    clock += 5_000;
    await assert.rejects(codec.decode(bytes), (error: unknown) => error instanceof CustomerErasedError && /was erased on \d{4}-\d{2}-\d{2}/.test(error.message));
    await assert.rejects(
      db.app.query("UPDATE customer_keys SET wrapped_key = '\\x00', wrapping_key_id = 'x', destroyed_at = NULL WHERE customer_id = $1", [customerId]),
      /cannot be restored/,
    );
    // A customer who comes back after an erasure gets a new key; the old content stays unreadable.
    const next = await reader.encoderFor(customerId);
    assert.equal(next.currentKeyId, `cust:${customerId}:2`);
    await assert.rejects(codec.decode(bytes), CustomerErasedError);
  });

  test('the transcript log encrypts an owned ticket under its customer key and still reads entries written under the deployment key', async () => {
    const config = loadConfig();
    const ticketId = unique('T');
    const workflowId = `investigation-${ticketId}`;
    const customerId = unique('owner');
    const entry = (seq: number, text: string) => ({ seq, kind: 'message' as const, role: 'user' as const, body: { type: 'text', text }, tokens: 3 });
    await new TranscriptLog(db.app, bodyCodecOf(codecFor(config))).write(workflowId, [entry(1, 'written before customer keys')]);
    await db.admin.query("INSERT INTO ticket_owners (ticket_id, customer_id, first_event_id) VALUES ($1, $2, 'e1')", [ticketId, customerId]);
    const codec = codecFor(config);
    const log = new TranscriptLog(db.app, customerBodyCodec(codec, new CustomerKeys(db.app, codec.keyring)));
    await log.write(workflowId, [entry(2, 'written under the customer key')]);
    await log.keepReply({ workflowId, runId: 'r1', activityId: '1' }, 3, { content: 'a kept reply' });
    assert.deepEqual(
      (await log.all(workflowId)).map((e) => (e.body as { text: string }).text),
      ['written before customer keys', 'written under the customer key'],
    );
    assert.deepEqual(await log.replyOf({ workflowId, runId: 'r1', activityId: '1' }), { content: 'a kept reply' });
    const keyIds = async (table: string) =>
      (await db.admin.query(`SELECT body FROM ${table} WHERE workflow_id = $1`, [workflowId])).rows.map((r: { body: Buffer }) =>
        r.body.includes(Buffer.from(`cust:${customerId}:1`)) ? 'customer' : 'deployment',
      );
    assert.deepEqual(await keyIds('transcript_log'), ['deployment', 'customer']);
    assert.deepEqual(await keyIds('model_replies'), ['customer']);
  });
});
