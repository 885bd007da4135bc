import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

// The casework CLI as a person runs it: bad input names what is wrong and starts nothing;
// an unreachable Temporal or Postgres is reported when the configured deadline passes, naming
// the address, not a hang or a stack trace.

const BIN = resolve(__dirname, '../bin/casework');
/** Kills a command that hangs; generous, because a loaded CI machine can take half a minute just to start one (it asserts no time). */
const HANG_GUARD_MS = 120_000;
const dir = mkdtempSync(join(tmpdir(), 'casework-cli-'));

function casework(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(BIN, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: HANG_GUARD_MS });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without blocking this process (so a listener here can accept the CLI's connections). */
function caseworkAsync(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(BIN, args, { env: { ...process.env, ...env }, timeout: HANG_GUARD_MS });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

function eventFile(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

const good = { eventId: 'e-cli-1', type: 'ticket.created', ticketId: 'T-cli-1', customerId: 'cust_dana', message: 'Where is order 5102?', receivedAt: '2026-11-30T09:00:00Z' };

test('a malformed event names the bad field, exits 2, and starts nothing', () => {
  const { ticketId: _omit, ...missing } = good;
  const r = casework(['ticket', eventFile('missing.json', missing)]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /ticketId/);
  const bad = casework(['ticket', eventFile('bad-type.json', { ...good, type: 'ticket.opened' })]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /type/);
  const notJson = casework(['ticket', eventFile('broken.json', '{"eventId": ')]);
  assert.equal(notJson.code, 2);
  assert.match(notJson.stderr, /not valid JSON/);
  // Validation happens before connecting: even with no Temporal at all, nothing hangs.
  const offline = casework(['ticket', eventFile('missing2.json', missing)], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  assert.equal(offline.code, 2);
});

test('an unreachable Temporal is reported naming the address, with no stack trace', () => {
  const r = casework(['ticket', eventFile('good.json', good)], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot reach Temporal at 127\.0\.0\.1:1/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

test('a Temporal that accepts connections but never answers is reported when the configured connect deadline passes, after one retry', async () => {
  // A listener whose accepted sockets never answer: only the connect deadline can end the wait.
  const silent = createServer(() => undefined);
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  const address = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
  try {
    const r = await caseworkAsync(['ticket', eventFile('silent.json', good)], { TEMPORAL_ADDRESS: address, CASEWORK_CONNECT_TIMEOUT_MS: '1000' });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`cannot reach Temporal at ${address.replace(/\./g, '\\.')} \\(2 attempts\\): the connect deadline of 1 s passed \\(CASEWORK_CONNECT_TIMEOUT_MS=1000\\)`),
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  } finally {
    silent.close();
  }
});

test('an unreachable Postgres is reported naming the address, with no stack trace', () => {
  const r = casework(['memory', 'show', '--customer', 'cust_dana'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot reach Postgres at postgres:\/\/127\.0\.0\.1:1\/none: connect ECONNREFUSED/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

test('a status or decision for an unknown workflow says so', () => {
  const status = casework(['status', 'investigation-does-not-exist']);
  assert.equal(status.code, 2);
  assert.match(status.stderr, /no investigation investigation-does-not-exist/);
  const approve = casework(['approve', 'investigation-does-not-exist', '--request', 'r1', '--approver', 'support-lead']);
  assert.equal(approve.code, 2);
  assert.match(approve.stderr, /no investigation investigation-does-not-exist/);
  const closing = casework(['ticket', eventFile('close.json', { ...good, type: 'ticket.closed', ticketId: 'T-none', message: '' })]);
  assert.equal(closing.code, 2);
  assert.match(closing.stderr, /no investigation investigation-T-none/);
});

test('a usage error prints the usage', () => {
  const r = casework(['approve', 'investigation-x']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--request/);
  assert.match(r.stderr, /usage: casework/);
});

test('the retired in-workflow transcript (CASEWORK_HISTORY_BY_REFERENCE=false) stops every process at start, naming the setting and the drain procedure', () => {
  for (const args of [['worker'], ['serve'], ['status', 'investigation-T-1']]) {
    const r = casework(args, { CASEWORK_HISTORY_BY_REFERENCE: 'false' });
    assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /^error: invalid configuration/);
    assert.match(r.stderr, /CASEWORK_HISTORY_BY_REFERENCE: is retired/);
    assert.match(r.stderr, /docs\/deploy\.md, "Retiring the in-workflow transcript"/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('a malformed setting exits 2 naming the variable, for every process, before anything connects', () => {
  // Each would otherwise retry a connection it can never make (a worker for ever).
  const cases: { args: string[]; env: Record<string, string>; names: RegExp }[] = [
    { args: ['worker'], env: { DATABASE_URL: 'not-a-url' }, names: /DATABASE_URL: must be a Postgres URL/ },
    { args: ['serve'], env: { DATABASE_URL: 'mysql://db/casework' }, names: /DATABASE_URL: must be a Postgres URL/ },
    { args: ['console'], env: { TEMPORAL_ADDRESS: 'http://127.0.0.1:7233' }, names: /TEMPORAL_ADDRESS: must be host:port/ },
    { args: ['codec-server'], env: { TEMPORAL_UI_URL: 'localhost:8233' }, names: /TEMPORAL_UI_URL: must be an http:\/\/ or https:\/\/ URL/ },
    { args: ['status', 'investigation-T-1'], env: { ANTHROPIC_BASE_URL: 'api.anthropic.com' }, names: /ANTHROPIC_BASE_URL/ },
  ];
  for (const { args, env, names } of cases) {
    const r = casework(args, env);
    assert.equal(r.code, 2, `${args[0]} with ${JSON.stringify(env)}: ${r.stderr}`);
    assert.match(r.stderr, names);
    assert.match(r.stderr, /^error: invalid configuration/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});
