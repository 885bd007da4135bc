import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { withCustomer, type Database } from '../src/db/pool';
import { normalise } from '../src/memory/embedder';
import { semanticHits } from '../src/memory/hybrid-search';
import { currentVectors, decodeRealArray, rankByCosine } from '../src/memory/semantic-rank';
import { openTestDatabase, unique } from './support/db';

// When the query's vector is not ready yet, recall reads the customer's stored vectors while
// the model works and ranks them in the process. That list must be the one Postgres would
// have given: the same notes and cases, in the same order, with the same scores, and none of
// another model, another customer, a superseded or an expired note.

describe('the semantic list ranked in the process', () => {
  let db: Database;
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => db.close());

  const vector = (seed: number, n = 384) => normalise(Array.from({ length: n }, (_, i) => (Math.sin(seed * 12.9898 + i * 78.233) * 43758.5453) % 1));

  it('decodes a real[] exactly as Postgres sends it', async () => {
    const values = [0.5, -1.25, 3.4028234663852886e38, 1e-45, 0, 0.1];
    const { rows } = await db.admin.query<{ b: Buffer }>('SELECT array_send($1::real[]) AS b', [values]);
    assert.deepEqual(Array.from(decodeRealArray(rows[0]!.b)!), Array.from(Float32Array.from(values)));
    const empty = await db.admin.query<{ b: Buffer }>("SELECT array_send('{}'::real[]) AS b");
    assert.deepEqual(Array.from(decodeRealArray(empty.rows[0]!.b)!), []);
    const withNull = await db.admin.query<{ b: Buffer }>("SELECT array_send('{1,NULL}'::real[]) AS b");
    assert.equal(decodeRealArray(withNull.rows[0]!.b), null);
    const twoDims = await db.admin.query<{ b: Buffer }>("SELECT array_send('{{1,2},{3,4}}'::real[]) AS b");
    assert.equal(decodeRealArray(twoDims.rows[0]!.b), null);
  });

  it('gives the same hits, order and scores as the statement, and only current notes of this customer and model', async () => {
    const customerId = unique('sem-rank');
    const other = unique('sem-rank-other');
    const now = '2026-10-01T10:00:00.000Z';
    const insert = (customer: string, i: number, extra: { model?: string; superseded?: boolean; expired?: boolean; dims?: number } = {}) =>
      db.admin.query(
        `INSERT INTO memory_notes (customer_id, kind, text, text_key, source_run, written_at, expires_at, superseded_at, embedding, embedding_model)
         VALUES ($1, 'fact', $2, $2, 'r', $3, $4, $5, $6::real[], $7)`,
        [
          customer,
          `note ${i}`,
          // Two notes on the same day: equal scores fall back to the newest, then the highest id.
          new Date(Date.parse(now) - Math.floor(i / 2) * 86_400_000).toISOString(),
          extra.expired ? '2026-09-01T00:00:00.000Z' : '2027-10-01T00:00:00.000Z',
          extra.superseded ? now : null,
          vector(i % 7, extra.dims),
          extra.model ?? 'model-a',
        ],
      );
    for (let i = 0; i < 24; i++) await insert(customerId, i);
    await insert(customerId, 100, { model: 'model-b' });
    await insert(customerId, 101, { superseded: true });
    await insert(customerId, 102, { expired: true });
    await insert(customerId, 103, { dims: 256 });
    await insert(other, 104);
    await db.admin.query(
      `INSERT INTO memory_cases (customer_id, source_run, ticket_id, order_ids, problem, resolution, closed_on, recorded_at, embedding, embedding_model)
       VALUES ($1, 'r1', 'T1', ARRAY['5001'], 'parcel lost', 'refunded', '2026-09-20', now(), $2::real[], 'model-a')`,
      [customerId, vector(3)],
    );

    for (const seed of [0, 3, 5, 6]) {
      const query = vector(seed);
      for (const floor of [-1, 0.2]) {
        const { inSql, inProcess } = await withCustomer(db.app, customerId, async (client) => ({
          inSql: await semanticHits(client, { customerId, vector: query, model: 'model-a', now, limit: 40, floor }),
          inProcess: rankByCosine(query, await currentVectors(client, { customerId, model: 'model-a', now }), { floor, limit: 40 }),
        }));
        if (floor < 0) assert.equal(inSql.length, 24 + 1, 'every current note of this customer and model, and the case');
        assert.deepEqual(inProcess, inSql, `seed ${seed}, floor ${floor}`);
      }
    }
  });

  it('ranks best first, keeps the floor and the limit, and skips vectors of another length', () => {
    const candidate = (id: number, v: number[] | null, at = '2026-01-01T00:00:00.000Z') => ({
      hit: { source: 'note' as const, id, kind: 'fact' as const, text: `n${id}`, date: at.slice(0, 10), at },
      vector: v && Float32Array.from(v),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.float({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }), { maxLength: 30 }),
        fc.array(fc.float({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }),
        fc.float({ min: -1, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 10 }),
        (vectors, query, floor, limit) => {
          const candidates = [...vectors.map((v, i) => candidate(i, v)), candidate(999, [1, 0]), candidate(998, null)];
          const ranked = rankByCosine(query, candidates, { floor, limit });
          assert.ok(ranked.length <= limit);
          assert.ok(ranked.every((h) => h.score >= floor && h.id < 999));
          for (let i = 1; i < ranked.length; i++) assert.ok(ranked[i - 1]!.score >= ranked[i]!.score);
          const above = vectors.filter((v) => v.reduce((s, x, j) => s + Math.fround(x) * Math.fround(query[j]!), 0) >= floor).length;
          assert.equal(ranked.length, Math.min(limit, above));
        },
      ),
    );
  });
});
