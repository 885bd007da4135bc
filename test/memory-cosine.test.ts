import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../src/db/pool';
import { cosine, normalise } from '../src/memory/embedder';
import { openTestDatabase } from './support/db';

// memory_cosine() in SQL is the similarity recall ranks by: it must agree with the dot product
// for the model's 384 dimensions and for lengths that are not a multiple of its loop step, and
// give no score at all for a missing vector or another model's length.

describe('memory_cosine in Postgres', () => {
  let db: Database;
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => db.close());

  const vector = (n: number, seed: number) => normalise(Array.from({ length: n }, (_, i) => Math.sin(seed * 31 + i * 7.3)));
  const sql = async (a: number[] | null, b: number[] | null) =>
    (await db.admin.query<{ c: number | null }>('SELECT memory_cosine($1::real[], $2::real[]) AS c', [a, b])).rows[0]!.c;

  it('is the dot product of the two vectors, for every length', async () => {
    for (const n of [384, 1, 31, 33, 100, 1024]) {
      const a = vector(n, 1);
      const b = vector(n, 2);
      // real[] holds single precision: the same vectors rounded to it.
      const f32 = (v: number[]) => Array.from(Float32Array.from(v));
      assert.ok(Math.abs((await sql(a, b))! - cosine(f32(a), f32(b))) < 1e-9, `length ${n}`);
      assert.ok(Math.abs((await sql(a, a))! - 1) < 1e-6, `length ${n}, itself`);
    }
  });

  it('gives no score for a missing vector or one of another length', async () => {
    assert.equal(await sql(null, vector(384, 1)), null);
    assert.equal(await sql(vector(384, 1), vector(256, 1)), null);
  });
});
