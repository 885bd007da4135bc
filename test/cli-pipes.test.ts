import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { isListening } from '../src/dev/env/dev-server';

// The CLI piped into a reader that stops early, as `casework status … | head -5` or
// `casework bench context | head -60` do: the command ends cleanly, and a Temporal dev server it
// started does not outlive it holding its ports.

const BIN = resolve(__dirname, '../bin/casework');
// Ports of this file's own dev server, apart from the suite's (7243/8243) and the defaults.
const TEMPORAL_PORT = Number(process.env.CASEWORK_TEST_PIPES_TEMPORAL_PORT ?? 7249);
const UI_PORT = Number(process.env.CASEWORK_TEST_PIPES_UI_PORT ?? 8249);

/** Runs the CLI with its stdout read by `reader`, which may close it; resolves with the exit and stderr. */
function piped(
  args: string[],
  env: Record<string, string>,
  reader: (line: string, close: () => void) => void,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(BIN, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let buffered = '';
    let closed = false;
    const close = () => {
      closed = true;
      child.stdout.destroy();
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (closed) return;
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (!closed) reader(line, close);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code, signal) => done({ code, signal, stderr }));
  });
}

/** Waits until nothing listens on `port` any more; false when it is still taken after `limitMs`. */
async function portFreed(port: number, limitMs = 30_000): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (!(await isListening('127.0.0.1', port))) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** Processes whose command line is a Temporal dev server on `port`. */
function devServersOn(port: number): string[] {
  const ps = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.stdout.split('\n').filter((line) => /server start-dev/.test(line) && new RegExp(`--port ${port}\\b`).test(line));
}

test('a command whose reader is gone before it prints exits 0, with no EPIPE crash', async () => {
  const closedAtOnce = await new Promise<{ code: number | null; stderr: string }>((done) => {
    const child = spawn(BIN, ['bench', 'context', '--no-workflow'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reader closes before the command has written a line: every write it makes meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stderr }));
  });
  assert.equal(closedAtOnce.code, 0, closedAtOnce.stderr);
  assert.doesNotMatch(closedAtOnce.stderr, /EPIPE|Unhandled|\n\s+at /);

  const afterOneLine = await piped(['bench', 'context', '--no-workflow'], {}, (_line, close) => close());
  assert.equal(afterOneLine.code, 0, afterOneLine.stderr);
  assert.doesNotMatch(afterOneLine.stderr, /EPIPE|Unhandled/);
});

test('a command that started a dev server stops it when its reader goes: the ports are free and no dev server is left', async () => {
  assert.ok(!(await isListening('127.0.0.1', TEMPORAL_PORT)), `port ${TEMPORAL_PORT} must be free for this test`);
  let sawServer = false;
  const env = { TEMPORAL_ADDRESS: `127.0.0.1:${TEMPORAL_PORT}`, TEMPORAL_UI_URL: `http://127.0.0.1:${UI_PORT}` };
  const result = await piped(['demo'], env, (line, close) => {
    // The demo names its dev server once it is up; the reader has seen enough, as `| head` would.
    if (/^\s+Temporal 127\.0\.0\.1:/.test(line)) {
      assert.doesNotMatch(line, /already running/, 'the demo started this dev server itself');
      sawServer = true;
      close();
    }
  });
  assert.ok(sawServer, `the demo got as far as its dev server: ${result.stderr}`);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /EPIPE|Unhandled/);
  assert.ok(await portFreed(TEMPORAL_PORT), `port ${TEMPORAL_PORT} is still held: ${devServersOn(TEMPORAL_PORT).join('; ')}`);
  assert.ok(await portFreed(UI_PORT), `port ${UI_PORT} is still held`);
  // Its ports close before the process has finished exiting: it is given the time that takes.
  const until = Date.now() + 30_000;
  while (devServersOn(TEMPORAL_PORT).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 250));
  assert.deepEqual(devServersOn(TEMPORAL_PORT), [], 'no dev server process is left');
});
