import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, ExternalStorage, type Payload } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig, type Config } from '../src/config';
import { openPool, type Database } from '../src/db/pool';
import { findTemporalCli } from '../src/dev/env/temporal-cli';
import { allowedOriginsFor, createCodecHandler, startCodecServer, type CodecRefusal } from '../src/server/codec-server';
import { sessionValue } from '../src/server/codec-session';
import { EncryptionCodec } from '../src/temporal/codec/encryption-codec';
import { keyringOf } from '../src/temporal/codec/keys';
import { codecFor, dataConverterFor, FAILURE_CONVERTER_PATH } from '../src/temporal/data-converter';
import { PostgresStorageDriver } from '../src/temporal/storage/postgres-driver';
import { openTestDatabase, unique } from './support/db';
import type { ProbeActivities } from './fixtures/codec-probe-workflow';

// The codec server speaks Temporal's codec-server protocol to the web UI and the CLI; with the
// encryption codec on the worker and client, the server's history holds only ciphertext and
// references, and the CLI shows the words again through the codec server.

const run = promisify(execFile);
const UI_ORIGIN = 'http://127.0.0.1:8233';
const TOKEN = 'codec-token-0123456789abcdef';
const keyring = keyringOf(
  [
    { id: 'old', key: randomBytes(32) },
    { id: 'current', key: randomBytes(32) },
  ],
  'environment',
);
const json = (value: unknown) => defaultPayloadConverter.toPayload<unknown>(value);
const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? []).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});

/** Every payload's metadata and data in `temporal workflow show --output json`, base64 undone. */
function payloadTexts(stdout: string): string {
  const texts: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.metadata && typeof record.metadata === 'object' && 'data' in record) {
      for (const value of Object.values(record.metadata as Record<string, string>)) texts.push(Buffer.from(value, 'base64').toString('latin1'));
      if (typeof record.data === 'string') texts.push(Buffer.from(record.data, 'base64').toString('utf8'));
    }
    Object.values(record).forEach(walk);
  };
  walk(JSON.parse(stdout));
  return texts.join('\n');
}

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db?.close();
});

describe('codec server protocol', () => {
  let server: Server;
  let base: string;
  let storage: ExternalStorage;
  const audit: unknown[] = [];
  before(async () => {
    storage = new ExternalStorage({ drivers: [new PostgresStorageDriver(db.app)], payloadSizeThreshold: 1024 });
    const handler = createCodecHandler({
      codecs: [new EncryptionCodec(keyring)],
      externalStorage: storage,
      token: TOKEN,
      allowedOrigins: [UI_ORIGIN],
      namespace: 'default',
      onRequest: (event) => audit.push(event),
    });
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (path: string, payloads: Payload[], headers: Record<string, string> = {}) =>
    fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, 'x-namespace': 'default', ...headers },
      body: JSON.stringify({ payloads: payloads.map(toJson) }),
    });

  test('decodes what it encoded, payloads as proto JSON with base64 fields', async () => {
    const encoded = await post('/encode', [json({ note: 'refund order A-77' })]);
    assert.equal(encoded.status, 200);
    const { payloads } = (await encoded.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    assert.equal(Buffer.from(payloads[0]!.metadata['encryption-key-id']!, 'base64').toString(), 'current');
    assert.ok(!Buffer.from(payloads[0]!.data, 'base64').toString('latin1').includes('A-77'));
    const decoded = await post('/decode', payloads.map(fromJson));
    const back = ((await decoded.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads.map(fromJson);
    assert.deepEqual(defaultPayloadConverter.fromPayload(back[0]!), { note: 'refund order A-77' });
  });

  test('answers only under …/encode and …/decode, at any depth, and only to POST', async () => {
    assert.equal((await post('/codecs/default/decode', [])).status, 200);
    assert.equal((await post('/decrypt', [])).status, 404);
    assert.equal((await fetch(`${base}/decode`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 405);
  });

  test('refuses a caller without the bearer token, or with a wrong one', async () => {
    const missing = await post('/decode', [], { authorization: '' });
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
    assert.equal((await post('/decode', [], { authorization: 'Bearer not-the-token' })).status, 401);
  });

  test("answers the web UI's preflight without a token, allowing the headers the UI sends", async () => {
    const preflight = await fetch(`${base}/decode`, {
      method: 'OPTIONS',
      headers: { origin: UI_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace,authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), UI_ORIGIN);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    for (const header of ['content-type', 'x-namespace', 'authorization']) assert.match(preflight.headers.get('access-control-allow-headers') ?? '', new RegExp(header));
    const answer = await post('/decode', [], { origin: UI_ORIGIN });
    assert.equal(answer.headers.get('access-control-allow-origin'), UI_ORIGIN);
  });

  test('refuses a browser page from another origin, preflight and request alike', async () => {
    const preflight = await fetch(`${base}/decode`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal((await post('/decode', [], { origin: 'https://evil.example' })).status, 403);
  });

  test('refuses to decode for another namespace', async () => {
    const answer = await post('/decode', [], { 'x-namespace': 'billing' });
    assert.equal(answer.status, 403);
    assert.match(((await answer.json()) as { error: string }).error, /namespace default, not billing/);
  });

  test('says which key id it lacks when a payload was encrypted under a key it does not hold', async () => {
    const [foreign] = await new EncryptionCodec(keyringOf([{ id: 'retired-2024', key: randomBytes(32) }], 'environment')).encode([json('x')]);
    const answer = await post('/decode', [foreign!]);
    assert.equal(answer.status, 422);
    assert.match(((await answer.json()) as { error: string }).error, /key id "retired-2024"/);
  });

  test('resolves a payload stored by reference and shows its decoded contents', async () => {
    const [encrypted] = await new EncryptionCodec(keyring).encode([json({ tool_result: 'tracking 1Z999 '.repeat(200) })]);
    const [reference] = await new ExternalStorageRunner(storage).store([encrypted!]);
    assert.ok(Buffer.from(reference!.metadata!['messageType']!).toString().includes('ExternalStorageReference'));
    const answer = await post('/decode', [reference!]);
    const back = ((await answer.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads.map(fromJson);
    assert.match(defaultPayloadConverter.fromPayload<{ tool_result: string }>(back[0]!).tool_result, /^tracking 1Z999/);
  });

  test('reports each request to its audit hook without payload contents', () => {
    assert.ok(audit.length > 0);
    assert.ok(audit.every((event) => !JSON.stringify(event).includes('A-77')));
    assert.deepEqual(Object.keys(audit[0] as object).sort(), ['namespace', 'operation', 'origin', 'payloads']);
  });

  test('refuses to listen without a token anywhere but loopback, or in production mode', async () => {
    const codec = codecFor(loadConfig({ CASEWORK_CODEC_KEYS: `k:${randomBytes(32).toString('base64')}` }));
    await assert.rejects(startCodecServer(loadConfig({ CASEWORK_CODEC_SERVER_HOST: '0.0.0.0' }), { codecs: [codec], port: 0 }), /CASEWORK_CODEC_SERVER_TOKEN/);
    await assert.rejects(startCodecServer(loadConfig({ CASEWORK_REQUIRE_ENCRYPTION: 'true' }), { codecs: [codec], port: 0 }), /CASEWORK_CODEC_SERVER_TOKEN/);
    const local = await startCodecServer(loadConfig({}), { codecs: [codec], port: 0 });
    assert.equal((await fetch(`${local.url}/decode`, { method: 'POST', body: '{"payloads":[]}' })).status, 200);
    await local.close();
  });

  test('answers /healthz and /readyz without its token, and /readyz names the database when it does not answer', async () => {
    const config = loadConfig({ CASEWORK_CODEC_KEYS: `k:${randomBytes(32).toString('base64')}`, CASEWORK_CODEC_SERVER_TOKEN: 'codec-token-readiness-0123' });
    const codec = codecFor(config);
    const deadPool = openPool('postgres://postgres@127.0.0.1:1/none', 1);
    const ready = await startCodecServer(config, { codecs: [codec], port: 0 });
    const stranded = await startCodecServer(config, { codecs: [codec], port: 0, pool: deadPool });
    try {
      assert.deepEqual(await (await fetch(`${ready.url}/healthz`)).json(), { status: 'alive', draining: false });
      const ok = await fetch(`${ready.url}/readyz`);
      assert.deepEqual({ status: ok.status, body: await ok.json() }, { status: 200, body: { status: 'ready', keys: 'ok' } });
      assert.equal((await fetch(`${ready.url}/decode`, { method: 'POST', body: '{"payloads":[]}' })).status, 401, 'the codec routes still need the token');
      const down = await fetch(`${stranded.url}/readyz`);
      const body = (await down.json()) as Record<string, unknown>;
      assert.equal(down.status, 503);
      assert.deepEqual({ keys: body.keys, postgres: body.postgres }, { keys: 'ok', postgres: 'down' });
      assert.match(String(body.error), /^not ready: postgres: ECONNREFUSED$/);
      assert.equal((await fetch(`${stranded.url}/healthz`)).status, 200, 'alive all the same');
    } finally {
      await ready.close();
      await stranded.close();
      await deadPool.end();
    }
  });
});

describe('codec server origins and refusals', () => {
  test('admits the configured web UI under both loopback names, localhost and 127.0.0.1, and nothing else', async () => {
    assert.deepEqual(allowedOriginsFor({ TEMPORAL_UI_URL: 'http://localhost:8700' }), ['http://localhost:8700', 'http://127.0.0.1:8700']);
    assert.deepEqual(allowedOriginsFor({ TEMPORAL_UI_URL: 'http://127.0.0.1:8233/namespaces/default' }), ['http://localhost:8233', 'http://127.0.0.1:8233']);
    assert.deepEqual(allowedOriginsFor({ TEMPORAL_UI_URL: 'http://x', CASEWORK_CODEC_CORS_ORIGINS: 'https://temporal.example.com, http://localhost:8080' }), [
      'https://temporal.example.com',
      'http://localhost:8080',
      'http://127.0.0.1:8080',
    ]);
    assert.throws(
      () => allowedOriginsFor({ TEMPORAL_UI_URL: 'http://x', CASEWORK_CODEC_CORS_ORIGINS: 'temporal.example.com' }),
      /CASEWORK_CODEC_CORS_ORIGINS: "temporal.example.com" is not an origin/,
    );

    // The dev server prints its UI as http://localhost:<port>; configured either way, both open it.
    const codec = codecFor(loadConfig({ CASEWORK_CODEC_KEYS: `k:${randomBytes(32).toString('base64')}` }));
    const local = await startCodecServer(loadConfig({ TEMPORAL_UI_URL: 'http://127.0.0.1:8700' }), { codecs: [codec], port: 0 });
    try {
      for (const origin of ['http://localhost:8700', 'http://127.0.0.1:8700']) {
        const preflight = await fetch(`${local.url}/decode`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
        assert.equal(preflight.status, 204, origin);
        assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
      }
      for (const origin of ['http://localhost:8701', 'https://localhost:8700', 'http://127.0.0.2:8700']) {
        const preflight = await fetch(`${local.url}/decode`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
        assert.equal(preflight.status, 403, origin);
      }
    } finally {
      await local.close();
    }
  });

  test('logs one line per refused request saying why (origin, missing or wrong credential, …), never the payload or the token', async () => {
    const refusals: CodecRefusal[] = [];
    const answered: unknown[] = [];
    const handler = createCodecHandler({
      codecs: [new EncryptionCodec(keyring)],
      token: TOKEN,
      allowedOrigins: [UI_ORIGIN],
      namespace: 'default',
      onRequest: (event) => answered.push(event),
      onRefused: (event) => refusals.push(event),
    });
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const secret = 'Dana Whitfield, parcel NL-88231';
    const [encrypted] = await new EncryptionCodec(keyring).encode([json({ message: secret })]);
    const [foreign] = await new EncryptionCodec(keyringOf([{ id: 'retired-2024', key: randomBytes(32) }], 'environment')).encode([json(secret)]);
    const send = (headers: Record<string, string>, payloads: Payload[] = [encrypted!], method = 'POST', path = '/decode') =>
      fetch(base + path, {
        method,
        headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
        body: method === 'POST' ? JSON.stringify({ payloads: payloads.map(toJson) }) : undefined,
      });
    try {
      const cases: { headers: Record<string, string>; payloads?: Payload[]; method?: string; status: number; reason: CodecRefusal['reason'] }[] = [
        { headers: { origin: 'http://localhost:9999', authorization: `Bearer ${TOKEN}` }, status: 403, reason: 'origin' },
        { headers: { origin: 'http://localhost:9999' }, method: 'OPTIONS', status: 403, reason: 'origin' },
        { headers: { origin: UI_ORIGIN }, status: 401, reason: 'credential_missing' },
        { headers: { origin: UI_ORIGIN, authorization: 'Bearer not-the-token-0123' }, status: 401, reason: 'credential_wrong' },
        { headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }, status: 401, reason: 'credential_wrong' },
        { headers: { authorization: `Bearer ${TOKEN}`, 'x-namespace': 'billing' }, status: 403, reason: 'namespace' },
        { headers: { authorization: `Bearer ${TOKEN}` }, payloads: [foreign!], status: 422, reason: 'undecodable' },
      ];
      for (const c of cases) {
        const before = refusals.length;
        const res = await send(c.headers, c.payloads, c.method);
        assert.equal(res.status, c.status, JSON.stringify(c));
        assert.equal(refusals.length, before + 1, `exactly one line for ${c.reason}`);
        const line = refusals[refusals.length - 1]!;
        assert.equal(line.reason, c.reason);
        assert.equal(line.status, c.status);
        assert.equal(line.path, '/decode');
      }
      assert.match(refusals.find((r) => r.reason === 'credential_missing')!.detail, /no Authorization header or sign-in cookie was sent/);
      assert.equal(refusals[0]!.origin, 'http://localhost:9999', 'the refused origin is named');
      assert.match(refusals.find((r) => r.reason === 'undecodable')!.detail, /retired-2024/);
      const logged = JSON.stringify(refusals);
      for (const word of ['Dana', 'Whitfield', 'NL-88231', TOKEN, 'not-the-token']) assert.ok(!logged.includes(word), `"${word}" reached the log`);
      // An answered request is no refusal.
      assert.equal((await send({ origin: UI_ORIGIN, authorization: `Bearer ${TOKEN}` })).status, 200);
      assert.equal(refusals.length, cases.length);
      assert.equal(answered.length, 1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('signing in from a browser (the web UI sends cookies, not a bearer token)', () => {
  let server: Server;
  let base: string;
  const refusals: CodecRefusal[] = [];
  before(async () => {
    server = createServer(
      createCodecHandler({ codecs: [new EncryptionCodec(keyring)], token: TOKEN, allowedOrigins: [UI_ORIGIN], namespace: 'default', onRefused: (e) => refusals.push(e) }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const signIn = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/sign-in`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams({ token }).toString() });
  const decode = (headers: Record<string, string>) =>
    fetch(`${base}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', origin: UI_ORIGIN, ...headers }, body: JSON.stringify({ payloads: [] }) });

  test("signing in with the token sets an HttpOnly, SameSite=Lax cookie that then stands for the token on the UI's calls", async () => {
    const form = await fetch(`${base}/sign-in`);
    assert.equal(form.status, 200);
    assert.match(await form.text(), /name="token"/);
    const res = await signIn(TOKEN, { origin: base });
    assert.equal(res.status, 200);
    const cookie = res.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^casework_codec=v1\.\d+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    assert.ok(!cookie.includes(TOKEN), 'the cookie is not the token');
    const pair = cookie.split(';')[0]!;
    const decoded = await decode({ cookie: pair });
    assert.equal(decoded.status, 200);
    assert.equal(decoded.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(decoded.headers.get('access-control-allow-origin'), UI_ORIGIN);
    assert.match(await (await fetch(`${base}/sign-in`, { headers: { cookie: pair } })).text(), /signed in/);
    const behindTls = await signIn(TOKEN, { 'x-forwarded-proto': 'https' });
    assert.match(behindTls.headers.get('set-cookie') ?? '', /; Secure$/);
  });

  test('a wrong token signs nothing in; a forged or expired cookie is refused, each with one line saying why', async () => {
    const before = refusals.length;
    const wrong = await signIn('not-the-token-0123');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('set-cookie'), null);
    const forged = await decode({ cookie: `casework_codec=v1.9999999999.${'A'.repeat(43)}` });
    assert.equal(forged.status, 401);
    const expiredAt = Date.now() - 13 * 3600 * 1000;
    const expired = await decode({ cookie: `casework_codec=${sessionValue(TOKEN, expiredAt)}` });
    assert.equal(expired.status, 401);
    assert.match(((await expired.json()) as { error: string }).error, /sign-in cookie is expired/);
    const other = await decode({ cookie: `casework_codec=${sessionValue('another-token-0123456789', Date.now())}` });
    assert.equal(other.status, 401, 'a cookie signed for another token is no good here');
    const lines = refusals.slice(before);
    assert.deepEqual(
      lines.map((l) => l.reason),
      ['credential_wrong', 'credential_wrong', 'credential_wrong', 'credential_wrong'],
    );
    assert.match(lines[1]!.detail, /forged/);
    assert.ok(!JSON.stringify(lines).includes('not-the-token'), 'the token sent is never logged');
  });

  test("a sign-in posted from another origin (the UI's page, or any site) is refused", async () => {
    for (const origin of [UI_ORIGIN, 'https://evil.example']) {
      const res = await signIn(TOKEN, { origin });
      assert.equal(res.status, 403, origin);
      assert.equal(res.headers.get('set-cookie'), null);
    }
  });
});

describe('on a real Temporal dev server', { skip: process.env.TEMPORAL_ADDRESS ? false : 'needs the dev server npm test starts (TEMPORAL_ADDRESS)' }, () => {
  const secret = 'Dana Whitfield, card 4111 1111 1111 1111, parcel NL-88231 never arrived';
  const toolResult = `order A-99317 for Dana Whitfield\n${'shipment scan: Tilburg hub, bag 44, route NL-88231; '.repeat(300)}`;
  let config: Config;
  let connection: NativeConnection;
  let plain: Client;
  let codecServer: Awaited<ReturnType<typeof startCodecServer>>;
  const workers: { worker: Worker; running: Promise<void> }[] = [];
  let code: string;

  const activities: ProbeActivities = {
    async lookUpOrder({ resultChars }) {
      return { tool_result: toolResult.padEnd(resultChars, '.') };
    },
    async lookUpRefund({ message }) {
      throw ApplicationFailure.nonRetryable(`no refund on file for "${message}"`, 'NoRefund');
    },
  };

  async function runProbe(
    store: 'postgres' | 'off',
    resultChars: number,
  ): Promise<{ workflowId: string; historyBytes: number; history: Uint8Array; reply: string; dataConverter: ReturnType<typeof dataConverterFor> }> {
    const taskQueue = unique(`codec-${store}`);
    const storeConfig = loadConfig({ ...process.env, CASEWORK_CODEC_KEYS: config.CASEWORK_CODEC_KEYS, CASEWORK_PAYLOAD_STORE: store, TEMPORAL_TASK_QUEUE: taskQueue });
    const dataConverter = dataConverterFor(storeConfig, db.app);
    const worker = await Worker.create({ connection, taskQueue, workflowBundle: { code }, activities, dataConverter });
    workers.push({ worker, running: worker.run() });
    const client = new Client({ connection: plain.connection, dataConverter });
    const workflowId = unique('codec-probe');
    const result = await client.workflow.execute('codecProbe', { taskQueue, workflowId, args: [{ message: secret, resultChars }] });
    const { history } = await plain.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } });
    const bytes = temporal.api.history.v1.History.encode(history!).finish();
    return { workflowId, historyBytes: bytes.length, history: bytes, reply: (result as { reply: string }).reply, dataConverter };
  }

  before(async () => {
    config = loadConfig({
      ...process.env,
      CASEWORK_CODEC_KEYS: `2026-q1:${randomBytes(32).toString('base64')},2026-q2:${randomBytes(32).toString('base64')}`,
      CASEWORK_CODEC_SERVER_TOKEN: TOKEN,
    });
    ({ code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('./fixtures/codec-probe-workflow'),
      failureConverterPath: FAILURE_CONVERTER_PATH,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    }));
    connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    plain = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }) });
    const converter = dataConverterFor(config, db.app);
    codecServer = await startCodecServer(config, { codecs: converter.payloadCodecs!, externalStorage: converter.externalStorage, port: 0 });
  });
  after(async () => {
    for (const { worker, running } of workers) {
      worker.shutdown();
      await running.catch(() => undefined);
    }
    await codecServer?.close();
    await plain?.connection.close();
    await connection?.close();
  });

  test("the server's raw history holds none of the customer's words or the tool result, only ciphertext and references", async () => {
    const probe = await runProbe('postgres', 16_000);
    assert.match(probe.reply, /^read 16000 characters; first line: order A-99317 for Dana Whitfield; refund lookup failed$/);
    const raw = Buffer.from(probe.history);
    assert.ok(raw.includes('Encoded failure'), "the failed activity's message was encoded, not written in clear");
    for (const word of ['Dana', 'Whitfield', '4111', 'NL-88231', 'A-99317', 'Tilburg']) assert.ok(!raw.includes(word), `"${word}" is in the raw history`);
    assert.ok(raw.includes('binary/encrypted') && raw.includes('2026-q2'), 'payloads carry the encoding and the newest key id');
    assert.ok(raw.includes('ExternalStorageReference'), 'the large tool result left the history by reference');
    const leaked = await db.admin.query("SELECT count(*) AS n FROM payload_blobs WHERE position('Whitfield'::bytea IN bytes) > 0");
    assert.equal(Number(leaked.rows[0].n), 0, 'stored payloads are ciphertext too');
  });

  test('`temporal workflow show --codec-endpoint` shows the decoded words, and without it only ciphertext', async () => {
    const probe = await runProbe('postgres', 16_000);
    const cli = findTemporalCli();
    const args = ['workflow', 'show', '--workflow-id', probe.workflowId, '--address', config.TEMPORAL_ADDRESS, '--namespace', 'default', '--output', 'json'];
    const withCodec = await run(cli, [...args, '--codec-endpoint', codecServer.url, '--codec-auth', `Bearer ${TOKEN}`], { maxBuffer: 16 * 1024 * 1024 });
    const decoded = payloadTexts(withCodec.stdout);
    assert.ok(decoded.includes(secret), 'the workflow input is decoded');
    assert.ok(decoded.includes('shipment scan: Tilburg hub'), 'the tool result stored by reference is decoded');
    const without = payloadTexts((await run(cli, args, { maxBuffer: 16 * 1024 * 1024 })).stdout);
    assert.ok(without.includes('binary/encrypted'), 'without the codec the CLI sees the encrypted payloads');
    assert.ok(!without.includes('Whitfield') && !without.includes('Tilburg'));
  });

  test('a recorded history replays with the same data converter, references fetched and decrypted', async () => {
    const probe = await runProbe('postgres', 16_000);
    const history = await plain.workflow.getHandle(probe.workflowId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { code }, dataConverter: probe.dataConverter }, history, probe.workflowId);
    // Without the store the reference cannot be resolved, so the same replay fails: the one above used it.
    const { externalStorage: _unused, ...codecOnly } = probe.dataConverter;
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: { code }, dataConverter: codecOnly }, history, probe.workflowId));
  });

  test('a 4,000-token tool result by reference keeps the history several kilobytes smaller than inline', async (t) => {
    const inline = await runProbe('off', 16_000);
    const byReference = await runProbe('postgres', 16_000);
    t.diagnostic(`history bytes, one 4,000-token (16,000-character) tool result: inline ${inline.historyBytes}, by reference ${byReference.historyBytes}`);
    assert.ok(inline.historyBytes - byReference.historyBytes > 14_000, `inline ${inline.historyBytes} vs by reference ${byReference.historyBytes}`);
  });
});
