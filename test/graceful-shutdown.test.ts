import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../src/db/pool';
import { openTestDatabase } from './support/db';

// SIGTERM, as a rollout or `docker compose stop` sends it, while a request is in flight: the
// process stops accepting connections at once (the balancer moves new ones to other replicas),
// answers the request it already holds, then closes its pools and exits 0. The request is
// held open deterministically: it is sent with "Expect: 100-continue", so the server says it
// has the request in hand before the body is sent, and the body follows only after the
// process has logged that it is draining.

const ROOT = resolve(__dirname, '..');
const SUPPORT = 'sk_support_shutdown_0123456789';

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db?.close();
});

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first output line matching `pattern`. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
}

function start(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: db.url, CASEWORK_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  const hear = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of [...waiters]) {
      const match = waiter.pattern.exec(output);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout.on('data', hear);
  child.stderr.on('data', hear);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern) =>
      new Promise((resolveMatch, reject) => {
        const now = pattern.exec(output);
        if (now) return resolveMatch(now);
        waiters.push({ pattern, resolve: resolveMatch });
        void exited.then((code) => reject(new Error(`exited with ${code} before printing ${pattern}:\n${output.slice(-3000)}`)));
      }),
  };
}

/** A POST whose body waits until `finish()`: `accepted` resolves once the server holds the request. */
function heldPost(url: string, headers: Record<string, string>, body: string) {
  let accepted!: () => void;
  const acceptedP = new Promise<void>((r) => (accepted = r));
  const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' } });
  req.on('continue', () => accepted());
  const answer = new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolveAnswer, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return { accepted: acceptedP, finish: () => req.end(body), answer };
}

/** The error a new TCP connection to `url`'s host and port meets ("connected" when none): the listener's state, nothing else. */
function connectOutcome(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolveOutcome) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolveOutcome('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolveOutcome(error.code ?? error.message));
  });
}

describe('graceful shutdown on SIGTERM', () => {
  test('`casework console`: a sign-in in flight when SIGTERM arrives gets its answer and its session; new connections are refused; exit 0', async () => {
    const app = start(['console', '--port', '0', '--host', '127.0.0.1'], { CASEWORK_API_KEYS: `${SUPPORT}:support`, TEMPORAL_ADDRESS: '127.0.0.1:9' });
    try {
      const [, base = ''] = await app.waitFor(/"msg":"casework console listening","url":"(http:\/\/[^"]+)"/);
      const page = await fetch(`${base}/console/sign-in`);
      const token = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
      const pre = page.headers.getSetCookie()[0]!.split(';')[0]!;
      const form = new URLSearchParams({ csrf: token, key: SUPPORT, person: 'Sam' }).toString();
      const held = heldPost(`${base}/console/sign-in`, { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' }, form);
      await held.accepted;

      app.child.kill('SIGTERM');
      await app.waitFor(/SIGTERM: stopped accepting connections; draining requests in flight/);
      assert.equal(await connectOutcome(base), 'ECONNREFUSED', `a draining process takes no new connection: ${base} ${app.output().slice(-1500)}`);
      held.finish();
      const answer = await held.answer;
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
      assert.equal(answer.headers.location, '/console/inbox');
      assert.ok(String(answer.headers['set-cookie']).includes('casework_console='), 'the sign-in completed: a session was made');
      assert.equal(answer.headers.connection, 'close', 'and the connection is closed, so the browser reconnects to another replica');
      assert.equal(await app.exited, 0, app.output().slice(-3000));
      assert.match(app.output(), /"msg":"casework console stopped"/);
      const { rows } = await db.admin.query<{ person: string }>('SELECT person FROM console_sessions');
      assert.deepEqual(
        rows.map((r) => r.person),
        ['Sam'],
        'the session was written before the pools closed',
      );
    } finally {
      app.child.kill('SIGKILL');
    }
  });

  test('`casework codec-server`: an encode in flight when SIGTERM arrives gets its answer; exit 0', async () => {
    const app = start(['codec-server', '--port', '0'], { CASEWORK_CODEC_SERVER_HOST: '127.0.0.1' });
    try {
      const [, base = ''] = await app.waitFor(/codec server on (http:\/\/\S+)/);
      const payload = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('{"hello":"fleet"}').toString('base64') };
      const held = heldPost(`${base}/encode`, { 'content-type': 'application/json' }, JSON.stringify({ payloads: [payload] }));
      await held.accepted;

      app.child.kill('SIGTERM');
      await app.waitFor(/codec server stopped accepting connections; draining requests in flight/);
      assert.equal(await connectOutcome(base), 'ECONNREFUSED', `a draining process takes no new connection: ${base} ${app.output().slice(-1500)}`);
      held.finish();
      const answer = await held.answer;
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      const [encoded] = (JSON.parse(answer.text) as { payloads: { metadata: Record<string, string> }[] }).payloads;
      assert.notEqual(Buffer.from(encoded!.metadata.encoding!, 'base64').toString(), 'json/plain', 'the payload came back encrypted');
      assert.equal(answer.headers.connection, 'close');
      assert.equal(await app.exited, 0, app.output().slice(-3000));
    } finally {
      app.child.kill('SIGKILL');
    }
  });
});
