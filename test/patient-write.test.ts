import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FIRST_WAIT_MS, MAX_WAIT_MS, writePatiently } from '../src/activities/patient-write';
import { DatabaseUnavailableError } from '../src/db/errors';
import { ConflictError } from '../src/errors';

// The model step's write of a reply it already paid for: Postgres being away is waited out in
// place (outside an activity here, so with the given patience), anything else fails at once.

/** A clock that moves only when the write sleeps, and the waits it was asked for. */
function fakeTime() {
  let t = 0;
  const waits: number[] = [];
  return { waits, now: () => t, sleep: async (ms: number) => void (waits.push(ms), (t += ms)) };
}

/** A write that fails with `errors` in turn, then returns 'written'. */
function failing(...errors: unknown[]) {
  let calls = 0;
  const write = async () => {
    calls++;
    if (errors.length) throw errors.shift();
    return 'written';
  };
  return { write, calls: () => calls };
}

const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

describe('writing a paid-for reply patiently', () => {
  test('Postgres unreachable (pg errors as they come, and casework’s own) is retried with doubling waits until the write lands', async () => {
    const time = fakeTime();
    const w = failing(reset, new Error('Connection terminated unexpectedly'), new DatabaseUnavailableError('Postgres is unreachable (57P01); retry shortly'), reset, reset);
    assert.equal(await writePatiently(w.write, { patienceMs: 60_000, ...time }), 'written');
    assert.equal(w.calls(), 6);
    assert.deepEqual(time.waits, [FIRST_WAIT_MS, FIRST_WAIT_MS * 2, FIRST_WAIT_MS * 4, FIRST_WAIT_MS * 8, Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 16)]);
  });

  test('an error that is not about reaching Postgres is thrown at once', async () => {
    const time = fakeTime();
    const conflict = new ConflictError('transcript entry 7 is already written with a different message body');
    const w = failing(conflict);
    await assert.rejects(writePatiently(w.write, { patienceMs: 60_000, ...time }), conflict);
    assert.equal(w.calls(), 1);
    assert.deepEqual(time.waits, []);
  });

  test('when the patience runs out the last error is thrown, as it would have been at once, and no wait overruns it', async () => {
    const time = fakeTime();
    const w = failing(...Array.from({ length: 100 }, () => reset));
    await assert.rejects(writePatiently(w.write, { patienceMs: 20_000, ...time }), reset);
    const waited = time.waits.reduce((a, b) => a + b, 0);
    assert.ok(waited <= 20_000, `waited ${waited} ms`);
    assert.ok(waited + Math.min(MAX_WAIT_MS, time.waits.at(-1)! * 2) > 20_000, 'it kept trying while the patience allowed');
    assert.equal(w.calls(), time.waits.length + 1);
  });
});
