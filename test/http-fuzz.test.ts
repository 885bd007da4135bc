import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import type { RequestLog } from '../src/server/app';
import { startServer, type RunningServer } from '../src/server/start';
import { openTestDatabase } from './support/db';
import { stubTemporalClient } from './support/stub-temporal';

// Every HTTP request gets exactly one response: random methods, paths (empty segments, "..",
// percent-encodings valid and not, very long, raw unicode), headers and bodies, sent as raw
// bytes to the real server (startServer) with real Postgres and a stub Temporal client. Each
// must be answered once, completely, never with 500, and its log line must say the same status.

const KEY = 'tk_fuzz_0123456789abcdef';
/** The fuzz's own bound per request: a request still unanswered by then fails the property. */
const PER_REQUEST_MS = 10_000;

let db: Database;
let server: RunningServer;
const logs: RequestLog[] = [];

before(async () => {
  db = await openTestDatabase();
  const config = { ...loadConfig(), CASEWORK_API_KEYS: `${KEY}:*,ck_fuzz_dana_0123456789:cust_dana,ak_fuzz_lead_0123456789:approver:support-lead` };
  server = await startServer({ client: stubTemporalClient(), pool: db.app, config, log: (e) => logs.push(e) }, 0);
});
after(async () => {
  await server?.close(1_000);
  await db?.close();
});

interface RawAnswer {
  status: number;
  responses: number;
  bodyComplete: boolean;
}

/** Sends one request as raw bytes and reads until the server closes the connection. */
function rawRequest(port: number, head: Buffer, body: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${PER_REQUEST_MS} ms`));
    }, PER_REQUEST_MS);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset after the answer is fine; no answer fails below
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      // An interim "100 Continue" (the client sent Expect: 100-continue) precedes the one answer.
      const final = raw.replace(/^HTTP\/1\.1 100 [^\r]*\r\n\r\n/, '');
      const starts = final.match(/(^|\r\n)HTTP\/1\.1 \d{3} /g) ?? [];
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(final)?.[1] ?? 0);
      const split = final.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(final.slice(0, split))?.[1] ?? NaN);
      const rest = split < 0 ? '' : final.slice(split + 4);
      // Node's own answers (417, 400) come chunked: complete when the last chunk is there.
      const chunked = /\r\ntransfer-encoding: chunked/i.test(final.slice(0, split));
      const bodyComplete = chunked ? rest.endsWith('0\r\n\r\n') : Number.isNaN(length) ? rest.length === 0 : Buffer.byteLength(rest, 'latin1') === length;
      resolve({ status, responses: starts.length, bodyComplete });
    });
    socket.write(Buffer.concat([head, body]));
  });
}

const segment = fc.oneof(
  fc.constantFrom('', '.', '..', 'events', 'healthz', 'investigations', 'customers', 'memory', 'notes', 'approve', 'deny', 'cust_dana', 'investigation-T-1', 'T-1', '42'),
  fc.constantFrom('%41', '%2F', '%2e%2e', '%E2%82%AC', '%00', '%20%20', '%', '%G1', '%E2%82', '%C0%AF', '%ff', '%u2028'),
  fc.constantFrom('é', '日本', '😀', '\u200b', 'a b', '?x=1', '#frag', ';p', 'x'.repeat(3000)),
  fc.string({ unit: 'grapheme-ascii', maxLength: 12 }).map((s) => s.replace(/[\s/?#]/g, '')),
);

const path = fc.oneof(
  fc.array(segment, { maxLength: 7 }).map((parts) => '/' + parts.join('/')),
  fc.constantFrom(
    '/customers/cust_dana/memory',
    '/customers/cust_dana/memory//',
    '/customers/cust_dana/memory/notes/1',
    '/memory/x',
    '/customers//memory',
    '//',
    '/investigations/T-1/approve',
    '*',
    'http://localhost/healthz',
  ),
);

const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'BREW', 'get');

const goodEvent = { eventId: 'e-fuzz', type: 'ticket.created', ticketId: 'T-fuzz', customerId: 'cust_dana', message: 'Where is my parcel?', receivedAt: '2026-11-30T09:00:00Z' };
const body = fc.oneof(
  fc.constant(''),
  fc.json({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.record({ requestId: fc.string({ maxLength: 10 }), approver: fc.option(fc.string({ maxLength: 10 })), text: fc.string({ maxLength: 40 }) }).map((o) => JSON.stringify(o)),
  fc
    .record({ eventId: fc.string({ maxLength: 8 }), ticketId: fc.constantFrom('T-fuzz', 'T-2', ' ', '\u0000'), message: fc.string({ unit: 'binary', maxLength: 50 }) })
    .map((o) => JSON.stringify({ ...goodEvent, ...o })),
  fc.constant('x'.repeat(12_000)),
);

const authorization = fc.option(
  fc.constantFrom(`Bearer ${KEY}`, 'Bearer ck_fuzz_dana_0123456789', 'Bearer ak_fuzz_lead_0123456789', 'Bearer nope', 'Basic Zm9vOmJhcg==', 'Bearer', ''),
  { nil: undefined },
);
const contentType = fc.option(fc.constantFrom('application/json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', ''), { nil: undefined });
const extra = fc.array(
  fc.tuple(
    fc.constantFrom('x-actor', 'actor', 'accept', 'x-forwarded-for', 'cookie', 'expect'),
    fc.oneof(fc.constant('100-continue'), fc.string({ unit: 'grapheme-ascii', maxLength: 30 })),
  ),
  { maxLength: 3 },
);

test('every request gets exactly one complete answer, never a 500, and its log line says the same status', async () => {
  await fc.assert(
    fc.asyncProperty(method, path, authorization, contentType, extra, body, async (m, p, auth, type, headers, text) => {
      const bytes = Buffer.from(text, 'utf8');
      const lines = [`${m} ${p} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close', `content-length: ${bytes.length}`];
      if (auth !== undefined) lines.push(`authorization: ${auth}`);
      if (type !== undefined) lines.push(`content-type: ${type}`);
      for (const [name, value] of headers) lines.push(`${name}: ${value.replace(/[\r\n]/g, '')}`);
      const logged = logs.length;
      const answer = await rawRequest(server.port, Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8'), bytes);
      assert.equal(answer.responses, 1, `${m} ${p.slice(0, 80)}: ${answer.responses} responses`);
      // A HEAD answer declares its body's length and sends none.
      if (m !== 'HEAD') assert.ok(answer.bodyComplete, `${m} ${p.slice(0, 80)}: body shorter or longer than content-length`);
      assert.ok(answer.status >= 200 && answer.status < 600, `${m} ${p.slice(0, 80)}: status ${answer.status}`);
      assert.notEqual(answer.status, 500, `${m} ${p.slice(0, 80)} answered 500: ${JSON.stringify(logs.at(-1))}`);
      // Requests Node's parser refuses (a bad request line, headers too large) are answered before the app sees them: no log line.
      const newLines = logs.slice(logged);
      assert.ok(newLines.length <= 1, `${newLines.length} log lines for one request`);
      if (newLines.length === 1) assert.equal(newLines[0]!.status, answer.status, 'the log line says the status that was sent');
      // (and an Expect other than 100-continue is 417, by Node itself).
      else assert.ok([400, 414, 417, 431].includes(answer.status), `${m} ${p.slice(0, 80)} answered ${answer.status} without reaching the app`);
    }),
    { numRuns: 400 },
  );
});

test('the paths that once hung are answered: empty memory segments and a memory path outside /customers', async () => {
  for (const p of ['/customers/cust_dana/memory//', '/memory/x', '/customers//memory', '/customers/%00/memory', '/customers/cust_dana/memory/notes/']) {
    const logged = logs.length;
    const answer = await rawRequest(server.port, Buffer.from(`GET ${p} HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer ${KEY}\r\n\r\n`), Buffer.alloc(0));
    assert.equal(answer.responses, 1, p);
    assert.ok([200, 400, 404, 405].includes(answer.status), `${p}: ${answer.status}`);
    assert.equal(logs[logged]?.status, answer.status, p);
  }
});
