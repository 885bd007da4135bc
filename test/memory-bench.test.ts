import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { benchCustomerId, runMemoryBench } from '../src/dev/bench/memory';
import type { Database } from '../src/db/pool';
import { MAX_MEMORY_TOKENS } from '../src/memory/render';
import { openTestDatabase } from './support/db';

describe('the memory benchmark', () => {
  let db: Database;
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => db.close());

  it('names its customers in their own namespace', () => {
    assert.equal(benchCustomerId(1, 10_000), 'bench_cust_00001');
    assert.equal(benchCustomerId(42, 1_000_000), 'bench_cust_0000042');
  });

  it('seeds, measures loadMemory and recall, and prints a table', async () => {
    const lines: string[] = [];
    const report = await runMemoryBench({ pool: db.admin, appPool: db.app, customers: 20, notesPerCustomer: 10, samples: 10, out: (l) => lines.push(l) });
    assert.ok(report.notes_in_namespace >= 200);
    assert.equal(report.load_memory.samples, 10);
    assert.ok(report.recall.median_ms > 0 && report.recall.p95_ms >= report.recall.median_ms);
    assert.ok(report.load_memory_block_tokens.max <= MAX_MEMORY_TOKENS);
    assert.ok(
      lines.some((l) => /^loadMemory\s+10\s+\d/.test(l)),
      lines.join('\n'),
    );
    assert.ok(lines.some((l) => /^recall\s+10\s+\d/.test(l)));
  });

  it('reuses what is already seeded and can print JSON', async () => {
    const lines: string[] = [];
    const report = await runMemoryBench({ pool: db.admin, appPool: db.app, customers: 20, notesPerCustomer: 10, samples: 5, out: (l) => lines.push(l), json: true });
    assert.equal(report.seeded_now, false);
    assert.deepEqual(JSON.parse(lines.join('\n')).recall.samples, 5);
  });
});
