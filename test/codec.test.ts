import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { loadConfig } from '../src/config';
import { DecryptionError, EncryptionCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, UnknownKeyError, WORKFLOW_ID_METADATA, workflowIdOf } from '../src/temporal/codec/encryption-codec';
import { CodecKeyError, devKeyPath, EncryptionRequiredError, keyringOf, loadKeyring, parseKeys, productionMode } from '../src/temporal/codec/keys';

// The payload codec: AES-256-GCM over each whole payload, a key id in its metadata, keys from
// the environment, a file or a generated development key, and rotation.

const key = (id: string) => ({ id, key: randomBytes(32) });
const spec = (...keys: { id: string; key: Buffer }[]) => keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');
const text = (p: Payload) =>
  Buffer.from(p.data ?? []).toString('latin1') +
  Object.values(p.metadata ?? {})
    .map((v) => Buffer.from(v).toString('latin1'))
    .join('');
const json = (value: unknown) => defaultPayloadConverter.toPayload<unknown>(value);
const meta = (p: Payload, k: string) => Buffer.from(p.metadata?.[k] ?? []).toString();

describe('encryption codec', () => {
  const secret = { message: 'my card is 4111 1111 1111 1111, order #A-1042', customer: 'dana@example.com' };

  test('encrypts a payload so neither its words nor its original encoding show, and decrypts it back', async () => {
    const codec = new EncryptionCodec(keyringOf([key('k1')], 'environment'));
    const [encrypted] = await codec.encode([json(secret)]);
    assert.equal(meta(encrypted!, 'encoding'), ENCRYPTED_ENCODING);
    assert.equal(meta(encrypted!, KEY_ID_METADATA), 'k1');
    for (const word of ['4111', 'A-1042', 'dana@example.com', 'json/plain']) assert.ok(!text(encrypted!).includes(word), `${word} is visible`);
    const [decrypted] = await codec.decode([encrypted!]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decrypted!), secret);
    assert.equal(meta(decrypted!, 'encoding'), 'json/plain');
  });

  test('after a rotation new payloads use the newest key and old ones still decode', async () => {
    const k1 = key('2026-01');
    const k2 = key('2026-06');
    const before = new EncryptionCodec(keyringOf([k1], 'environment'));
    const [old] = await before.encode([json('written before the rotation')]);
    const after = new EncryptionCodec(keyringOf([k1, k2], 'environment'));
    const [fresh] = await after.encode([json('written after')]);
    assert.equal(meta(fresh!, KEY_ID_METADATA), '2026-06');
    assert.equal(defaultPayloadConverter.fromPayload((await after.decode([old!]))[0]!), 'written before the rotation');
    assert.equal(defaultPayloadConverter.fromPayload((await after.decode([fresh!]))[0]!), 'written after');
  });

  test('refuses a payload under a key it does not hold, naming the key id', async () => {
    const [payload] = await new EncryptionCodec(keyringOf([key('retired-2025')], 'environment')).encode([json('x')]);
    const codec = new EncryptionCodec(keyringOf([key('current')], 'environment'));
    await assert.rejects(codec.decode([payload!]), (error: Error) => {
      assert.ok(error instanceof UnknownKeyError);
      assert.match(error.message, /key id "retired-2025"/);
      assert.match(error.message, /it has: current/);
      return true;
    });
  });

  test('refuses altered ciphertext and a payload relabelled with another key id', async () => {
    const a = key('a');
    const codec = new EncryptionCodec(keyringOf([a, { id: 'b', key: a.key }], 'environment'));
    const [payload] = await codec.encode([json('refund 50 EUR')]);
    const altered = { ...payload, data: Uint8Array.from(payload!.data!, (byte, i) => (i === 20 ? byte ^ 1 : byte)) };
    await assert.rejects(codec.decode([altered]), DecryptionError);
    // Same key material under another id: the id is authenticated, so the swap is caught.
    const relabelled = { ...payload, metadata: { ...payload!.metadata, [KEY_ID_METADATA]: Buffer.from('a') } };
    const [underB] = await new EncryptionCodec(keyringOf([{ id: 'b', key: a.key }], 'environment')).encode([json('refund 50 EUR')]);
    await assert.rejects(codec.decode([{ ...underB, metadata: relabelled.metadata }]), DecryptionError);
  });

  test('derived nonces encrypt equal payloads alike and different ones differently; random nonces never repeat', async () => {
    const ring = keyringOf([key('k')], 'environment');
    const derived = new EncryptionCodec(ring, 'derived');
    const [x1, x2, y] = await derived.encode([json('same'), json('same'), json('other')]);
    assert.deepEqual(Buffer.from(x1!.data!), Buffer.from(x2!.data!));
    assert.notDeepEqual(Buffer.from(x1!.data!).subarray(0, 12), Buffer.from(y!.data!).subarray(0, 12));
    const random = new EncryptionCodec(ring, 'random');
    const [r1, r2] = await random.encode([json('same'), json('same')]);
    assert.notDeepEqual(Buffer.from(r1!.data!), Buffer.from(r2!.data!));
    assert.equal(defaultPayloadConverter.fromPayload((await derived.decode([r1!]))[0]!), 'same');
  });

  test('labels a payload with the workflow its serialization context names, and refuses it relabelled to another workflow', async () => {
    const codec = new EncryptionCodec(keyringOf([key('k1')], 'environment'));
    const context = { type: 'activity' as const, namespace: 'default', workflowId: 'investigation-T-1', isLocal: false };
    const [labelled] = await codec.encode([json(secret)], context);
    assert.equal(workflowIdOf(labelled!), 'investigation-T-1');
    assert.deepEqual(defaultPayloadConverter.fromPayload((await codec.decode([labelled!]))[0]!), secret);
    const relabelled: Payload = { ...labelled!, metadata: { ...labelled!.metadata, [WORKFLOW_ID_METADATA]: new TextEncoder().encode('investigation-T-2') } };
    await assert.rejects(codec.decode([relabelled]), DecryptionError);
    const { [WORKFLOW_ID_METADATA]: _label, ...unlabelledMetadata } = labelled!.metadata!;
    await assert.rejects(codec.decode([{ ...labelled!, metadata: unlabelledMetadata }]), DecryptionError, 'nor can the label be stripped');
    // Equal payloads of two workflows never share a nonce (under GCM that would give the authentication key away); in one workflow they dedupe.
    const [other] = await codec.encode([json(secret)], { ...context, workflowId: 'investigation-T-2' });
    const [again] = await codec.encode([json(secret)], context);
    const nonce = (p: Payload) => Buffer.from(p.data!).subarray(0, 12).toString('hex');
    assert.notEqual(nonce(other!), nonce(labelled!));
    assert.equal(nonce(again!), nonce(labelled!));
    // Without a context (the transcript log's bodies, /encode) nothing is labelled, as before.
    const [plain] = await codec.encode([json(secret)]);
    assert.equal(workflowIdOf(plain!), undefined);
  });

  test('passes payloads that were never encrypted through decode untouched', async () => {
    const codec = new EncryptionCodec(keyringOf([key('k')], 'environment'));
    const plain = json({ written: 'before encryption was turned on' });
    assert.deepEqual(await codec.decode([plain]), [plain]);
  });
});

describe('payload keys', () => {
  test('reads "id:base64" entries from the environment, newest last', () => {
    const [a, b] = [key('old'), key('new')];
    const ring = loadKeyring(loadConfig({ CASEWORK_CODEC_KEYS: spec(a, b) }));
    assert.equal(ring.current.id, 'new');
    assert.deepEqual([...ring.byId.keys()], ['old', 'new']);
    assert.equal(ring.source, 'environment');
  });

  test('reads a key file with comments and one key a line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'casework-keys-'));
    try {
      const file = join(dir, 'keys');
      writeFileSync(file, `# rotated 2026-06\n${spec(key('k1'))}\n${spec(key('k2'))}  # current\n`);
      const ring = loadKeyring(loadConfig({ CASEWORK_CODEC_KEY_FILE: file }));
      assert.equal(ring.current.id, 'k2');
      assert.equal(ring.source, 'file');
      assert.throws(() => loadKeyring(loadConfig({ CASEWORK_CODEC_KEY_FILE: join(dir, 'absent') })), /cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('refuses a short key, a repeated id and an entry without an id, never echoing key material', () => {
    const short = Buffer.alloc(16, 7).toString('base64');
    assert.throws(
      () => parseKeys(`k:${short}`, 'X'),
      (e: Error) => e instanceof CodecKeyError && /16 bytes; AES-256 needs 32/.test(e.message) && !e.message.includes(short),
    );
    assert.throws(() => parseKeys(`${spec(key('k'))},${spec(key('k'))}`, 'X'), /"k" appears twice/);
    assert.throws(() => parseKeys(randomBytes(32).toString('base64'), 'X'), /must be "id:base64key"/);
  });

  test('outside production mode generates a development key once into the data folder, readable by its owner only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'casework-data-'));
    try {
      const config = loadConfig({ CASEWORK_DATA_DIR: dir });
      const first = loadKeyring(config);
      assert.equal(first.source, 'dev-key');
      assert.match(first.current.id, /^dev-[0-9a-f]{8}$/);
      assert.equal(statSync(devKeyPath(config)).mode & 0o777, 0o600);
      const again = loadKeyring(config);
      assert.deepEqual(again.current, first.current);
      assert.match(readFileSync(devKeyPath(config), 'utf8'), /Not for production/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('in production mode refuses to start without a configured key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'casework-data-'));
    try {
      for (const env of [{ NODE_ENV: 'production' }, { CASEWORK_REQUIRE_ENCRYPTION: 'true' }]) {
        const config = loadConfig({ ...env, CASEWORK_DATA_DIR: dir });
        assert.ok(productionMode(config));
        assert.throws(
          () => loadKeyring(config),
          (e: Error) => e instanceof EncryptionRequiredError && /CASEWORK_CODEC_KEYS/.test(e.message),
        );
      }
      assert.ok(loadKeyring(loadConfig({ NODE_ENV: 'production', CASEWORK_CODEC_KEYS: spec(key('prod-1')) })).current.id === 'prod-1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
