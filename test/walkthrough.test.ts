import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isListening } from '../src/dev/env/dev-server';
import { investigationId } from '../src/schemas/event';
import { openTestDatabase } from './support/db';

// README's CLI walkthrough, run as written, in two "terminals": `casework dev` in one, the
// README's lines in the other. Once on the embedded Postgres that `dev` serves, once on a real
// DATABASE_URL loaded by `casework seed`. The only thing the test fills in is the request id
// the README writes as <id>, read from what `status` printed, as a reader would.

const ROOT = resolve(__dirname, '..');
const BIN = resolve(ROOT, 'bin/casework');
const README = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
// This file's own dev server and embedded Postgres ports, apart from the suite's.
const TEMPORAL_PORT = Number(process.env.CASEWORK_TEST_WALKTHROUGH_TEMPORAL_PORT ?? 7248);
const UI_PORT = Number(process.env.CASEWORK_TEST_WALKTHROUGH_UI_PORT ?? 8248);

/** The walkthrough: the first sh block of README's "The CLI" section, as lines without comments. */
function walkthrough(): string[] {
  const section = README.slice(README.indexOf('## The CLI'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** A README line as argv: words split on spaces, quotes honoured. */
function argv(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(BIN, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Starts `casework dev` (the first terminal) and resolves once it says what the second terminal does. */
function startDev(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(BIN, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return new Promise((ready, fail) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('bin/casework ticket')) ready({ child, output: () => output, exited });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => fail(new Error(`casework dev exited ${code} before it was ready:\n${output}`)));
  });
}

async function portFreed(port: number): Promise<boolean> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (!(await isListening('127.0.0.1', port))) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** The environment of a fresh terminal on this machine: this file's Temporal ports, no database chosen. */
function terminal(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _none, ...env } = process.env;
  return { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${TEMPORAL_PORT}`, TEMPORAL_UI_URL: `http://127.0.0.1:${UI_PORT}`, CASEWORK_DATA_DIR: dataDir, ...extra };
}

/**
 * Runs the walkthrough: `dev` as written (with `--db-port` only when 5433 is taken here), then
 * every other line in the second terminal; `export` lines only where the README says to keep them.
 */
async function walk(first: NodeJS.ProcessEnv, second: NodeJS.ProcessEnv, options: { keepExport: boolean }): Promise<string[]> {
  const lines = walkthrough();
  const [devLine, ...rest] = lines;
  assert.equal(devLine, 'bin/casework dev');
  const written = rest.find((l) => l.startsWith('export DATABASE_URL='))!.slice('export DATABASE_URL='.length);
  const writtenPort = Number(new URL(written).port);
  const portTaken = await isListening('127.0.0.1', writtenPort);
  const dev = await startDev(['dev', ...(portTaken ? ['--db-port', '0'] : [])], first);
  const outputs: string[] = [];
  try {
    const env = { ...second };
    let requestId = '';
    for (const line of rest) {
      if (line.startsWith('export ')) {
        if (!options.keepExport) continue;
        const [name, value] = line.slice('export '.length).split('=') as [string, string];
        // What `dev` printed is the line the README shows (its port, when it had to take another).
        const printed = /export DATABASE_URL=(\S+)/.exec(dev.output())?.[1];
        assert.ok(printed, `dev printed the export line:\n${dev.output()}`);
        if (!portTaken) assert.equal(printed, value, 'dev prints the line the README shows');
        env[name] = printed;
        continue;
      }
      const args = argv(line.replace('<id>', requestId)).slice(1);
      const result = await run(args, env);
      assert.equal(result.code, 0, `${line}\n${result.stdout}\n${result.stderr}`);
      outputs.push(result.stdout);
      const pending = /pending refund (\S+):/.exec(result.stdout);
      if (pending) requestId = pending[1]!;
    }
    return outputs;
  } finally {
    dev.child.kill('SIGINT');
    const code = await dev.exited;
    assert.equal(code, 0, `dev stops cleanly on Ctrl-C:\n${dev.output()}`);
    assert.ok(await portFreed(TEMPORAL_PORT), 'the dev server it started is stopped');
  }
}

describe('the README walkthrough', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'casework-walkthrough-'));
  before(async () => {
    assert.ok(!(await isListening('127.0.0.1', TEMPORAL_PORT)), `port ${TEMPORAL_PORT} must be free for this test`);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('names the ticket its example event opens', () => {
    const event = JSON.parse(readFileSync(resolve(ROOT, 'examples/events/dana-5102.json'), 'utf8')) as { ticketId: string };
    const named = new Set(README.match(/investigation-T-[A-Za-z0-9_-]+/g) ?? []);
    assert.deepEqual([...named], [investigationId(event.ticketId)]);
    assert.ok(walkthrough().some((l) => l.includes('examples/events/dana-5102.json')));
  });

  test('runs as written on the embedded Postgres that `casework dev` serves', async () => {
    const outputs = await walk(terminal(dataDir), terminal(dataDir), { keepExport: true });
    const all = outputs.join('\n');
    assert.match(all, /pending refund \S+:/, 'the investigation paused at a refund request');
    assert.match(outputs[outputs.length - 2] ?? '', /approved by support-lead/);
    assert.match(outputs[outputs.length - 1] ?? '', /never arrived/, "the transcript holds Dana's words");
  });

  test('runs as written on a real DATABASE_URL, its demo shop data loaded by `casework seed`', { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL' }, async () => {
    const db = await openTestDatabase();
    try {
      const env = terminal(join(dataDir, 'real'), { DATABASE_URL: db.url });
      const seeded = await run(['seed'], env);
      assert.equal(seeded.code, 0, seeded.stderr);
      assert.match(seeded.stdout, /demo shop data loaded into postgres:\/\/127\.0\.0\.1:\d+\/\S+: 4 customers, 16 orders/);
      const again = await run(['seed'], env);
      assert.match(again.stdout, /already in .*nothing added/, 'seeding twice adds nothing');
      const order = await db.admin.query("SELECT customer_id FROM orders WHERE order_id = '5102'");
      assert.equal(order.rows[0]?.customer_id, 'cust_dana');
      const outputs = await walk(env, env, { keepExport: false });
      assert.match(outputs.join('\n'), /pending refund \S+:/);
      assert.match(outputs[outputs.length - 1] ?? '', /never arrived/);
    } finally {
      await db.close();
    }
  });
});
