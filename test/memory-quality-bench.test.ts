import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runMemoryQualityBench } from '../src/dev/bench/memory-quality';
import { FACTS, LEXICAL, MUST_KEEP, PARAPHRASE, PARAPHRASE_HELD_OUT, REPLACEMENTS } from '../src/dev/bench/memory-quality-data';
import type { Database } from '../src/db/pool';
import { createLocalEmbedder } from '../src/memory/embed-local';
import { openTestDatabase } from './support/db';

// The memory-quality benchmark's labelled set, run through the real remember and recall path
// with the local model and the offline judge: what it must never get wrong is pinned here;
// its recall figures are printed by `npm run bench:memory:quality`.

describe('the memory-quality benchmark', () => {
  let db: Database;
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => db.close());

  it('has the labelled set the issue asks for', () => {
    assert.ok(FACTS.length >= 40 && PARAPHRASE.length >= 40 && LEXICAL.length > 0 && REPLACEMENTS.length > 0 && MUST_KEEP.length > 0);
    const ids = new Set(FACTS.map((f) => f.id));
    for (const q of [...PARAPHRASE, ...LEXICAL]) for (const id of q.expect) assert.ok(ids.has(id), `${q.q} names ${id}`);
  });

  it('loses no fact to a wrong supersession, honours every true replacement, and finds every lexical question in the top three', async () => {
    const lines: string[] = [];
    const report = await runMemoryQualityBench({ pool: db.admin, appPool: db.app, embedder: createLocalEmbedder(), out: (l) => lines.push(l) });
    assert.deepEqual(report.current.lost, []);
    assert.deepEqual(report.current.stale, []);
    assert.deepEqual(report.replacements.missed, []);
    assert.deepEqual(report.must_keep.broken, []);
    assert.equal(report.recall.hybrid.lexical.at3, 100);
    assert.ok(report.recall.hybrid.paraphrase.at3 > report.recall.full_text.paraphrase.at3 + 50, lines.join('\n'));
    assert.ok(
      lines.some((l) => /^hybrid\s+\d/.test(l)),
      'prints the table',
    );
    // The held-out questions choose nothing, so their misses are not shown by default.
    assert.ok(!lines.some((l) => l.includes('(held-out)')), lines.join('\n'));
    assert.ok(!report.misses.some((m) => m.mode.includes('held-out')));
    assert.ok(!lines.some((l) => PARAPHRASE_HELD_OUT.some((q) => l.includes(q.q))), 'no held-out question is printed');
  });

  it('reports the held-out misses only when asked to', async () => {
    const report = await runMemoryQualityBench({ pool: db.admin, appPool: db.app, embedder: createLocalEmbedder(), out: () => undefined, showHeldOutMisses: true });
    const missed = Math.round(((100 - report.recall.hybrid.held_out.at3) / 100) * report.recall.hybrid.held_out.questions);
    assert.equal(report.misses.filter((m) => m.mode === 'hybrid (held-out)').length, missed);
  });
});
