import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as PgClient } from 'pg';
import { loadConfig, type Config } from '../src/config';
import { runCapacityBench, type CapacityResult } from '../src/dev/bench/capacity';
import { benchCommand } from '../src/main/commands/bench';
import { UsageError } from '../src/main/usage';
import { unique } from './support/db';

// The capacity bench at a tiny size (20 cases, a cache of 5): the shape of what it prints and
// what it promises about the follow-ups, never its timings. Its worker runs in a process of its
// own, so it needs a Postgres server both processes reach (DATABASE_URL).

const baseUrl = process.env.DATABASE_URL;
const admin = async (sql: string) => {
  const client = new PgClient({ connectionString: baseUrl });
  await client.connect();
  await client.query(sql).finally(() => client.end());
};

describe('casework bench capacity', { skip: !baseUrl && 'needs DATABASE_URL: the bench worker runs in a process of its own' }, () => {
  const name = unique('cw_capacity_t').replace(/-/g, '_');
  const lines: string[] = [];
  let config: Config;
  let result: CapacityResult;
  before(async () => {
    await admin(`CREATE DATABASE ${name}`);
    const url = new URL(baseUrl!);
    url.pathname = `/${name}`;
    config = loadConfig({ ...process.env, DATABASE_URL: url.toString() });
    result = await runCapacityBench(config, { out: (line) => lines.push(line), cases: 20, cacheSize: 5, sample: 10, concurrency: 4 });
  });
  after(async () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  it('runs once with the small cache and once with the default, each opening every case', () => {
    assert.deepEqual(
      result.runs.map((r) => r.cache),
      [5, 'default'],
    );
    assert.equal(result.runs[0]!.cacheSlots, 5);
    assert.ok(result.runs[1]!.cacheSlots > 5, 'the default cache is the SDK’s, larger than 5');
    for (const run of result.runs) {
      assert.deepEqual(
        run.rss.map((r) => r.open),
        [0, 2, 5, 20 / 2, 20],
      );
      for (const r of run.rss) assert.ok(r.rssMb > 0 && r.heapMb > 0 && r.cached <= run.cacheSlots);
    }
  });

  it('gets exactly one reply to every follow-up, from cached and from evicted cases alike', () => {
    const small = result.runs[0]!;
    assert.ok(small.cached.n > 0, 'some followed-up cases were still cached');
    assert.ok(small.evicted.n > 0, 'some followed-up cases had been evicted');
    for (const run of result.runs) {
      // Up to the sample asked for: a cache of 5 leaves only 2 cases surely cached.
      const n = run.cached.n + run.evicted.n;
      assert.ok(n > 0 && n <= 10, `${n} follow-ups`);
      assert.deepEqual([...run.cached.replies, ...run.evicted.replies], Array(n).fill(1));
      assert.equal(run.replay.n, n);
      // Every follow-up's history holds its signal and the desk post that carried the reply.
      assert.equal(run.timelines.cached.length, run.cached.n);
      assert.equal(run.timelines.evicted.length, run.evicted.n);
      assert.ok(run.history.medianBytes > 0 && run.history.medianEvents > 0);
    }
  });

  it('prints one table per run, with the memory rows, both kinds of follow-up, replay, history and both targets', () => {
    const titles = lines.filter((l) => l.startsWith('Capacity: 20 open cases'));
    assert.equal(titles.length, 2, lines.join('\n'));
    assert.match(titles[0]!, /workflow cache 5 workflows/);
    assert.match(titles[1]!, /workflow cache default \([\d,]+ workflows\)/);
    for (const pattern of [
      /^ {2}load average \(as uptime prints it\): [\d.]+ [\d.]+ [\d.]+ before/,
      /^ {2}open cases +cached workflows +worker RSS \(MB\) +main-thread heap after GC \(MB\)$/,
      /^ +20 +\d+ +[\d.]+ +[\d.]+$/,
      /^ {2}follow-up → reply +n +replies each +p50 ms +p95 ms +model p50\/p95 ms +orchestration p50 ms +p95 ms$/,
      /^ {2}cached +\d+ +1 +[\d.]+ +[\d.]+ +[\d.]+\/[\d.]+ +-?[\d.]+ +-?[\d.]+$/,
      /^ {2}replay \(Worker\.runReplayHistories\): \d+ workflows of \d+ events/,
      /^ {2}history per case after one follow-up: [\d,.]+ bytes median/,
      /^ {2}replay's data converter per workflow: [\d.]+ payloads decrypted \([\d.]+ ms\), [\d.]+ encrypted \([\d.]+ ms\), [\d.]+ fetched from the payload store/,
      /^ {2}where a follow-up's time went \(history event times/,
      /^ {2}send → reply at the desk +[\d.]+\/[\d.]+/,
      /^ {2}target: RSS grows sub-linearly once the cache is full — /,
      /^ {2}target: an evicted workflow resumes with p95 ≤ 150 ms of orchestration on top of the model's own time — /,
    ])
      assert.equal(lines.filter((l) => pattern.test(l)).length, 2, `${pattern} in both tables:\n${lines.join('\n')}`);
    assert.equal(lines.filter((l) => /^ {2}evicted \(replayed\) +\d+ +1 /.test(l)).length >= 1, true);
    // The small cache's table attributes cached and evicted follow-ups side by side.
    assert.match(lines.find((l) => /^ {2}part +cached \(\d+\) +evicted \(\d+\)$/.test(l)) ?? lines.join('\n'), /evicted/);
  });

  it('refuses a cache smaller than the SDK allows, and runs only with a database both processes reach', async () => {
    await assert.rejects(
      benchCommand(['capacity', '--cache-size', '1'], config, () => undefined),
      (error: Error) => error instanceof UsageError && /--cache-size must be at least 2/.test(error.message),
    );
    await assert.rejects(runCapacityBench({ ...config, DATABASE_URL: undefined }, { out: () => undefined }), /needs DATABASE_URL/);
  });
});
