import type { PoolClient } from 'pg';
import { z } from 'zod';
import { isoTimestamp } from '../db/rows';
import type { RankedHit } from './hybrid-search';
import { parseRows } from './schemas';
import { CASE_TEXT_SQL } from './vectors';

// The semantic list computed here rather than in Postgres, for when the query's vector is not
// ready yet. The customer's current vectors are read while the model still embeds the query
// (they do not depend on it), so once the vector arrives the cosines cost microseconds in this
// process instead of one more statement whose PL/pgSQL loop runs on the critical path
// (scripts/bench-memory-parts.ts splits the parts). Same candidates, same order and the same
// scores as SEMANTIC_SQL: memory_cosine sums the products of single-precision values in
// double precision, element by element in order, and so does rankByCosine.

/** The customer's current notes and cases with a vector of model $2, the vector in Postgres's binary array format. */
export const CURRENT_VECTORS_SQL = `
SELECT 'note' AS source, n.note_id AS id, n.kind, n.text,
       to_char(n.written_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, n.written_at AS at,
       array_send(n.embedding) AS vector
  FROM memory_notes n
 WHERE n.customer_id = $1 AND n.superseded_at IS NULL AND n.expires_at > $3::timestamptz AND n.embedding_model = $2
UNION ALL
SELECT 'case', c.case_id, 'case', ${CASE_TEXT_SQL},
       to_char(c.closed_on, 'YYYY-MM-DD'), c.closed_on::timestamp AT TIME ZONE 'UTC',
       array_send(c.embedding)
  FROM memory_cases c
 WHERE c.customer_id = $1 AND c.embedding_model = $2`;

/** A current note or case with its stored vector. */
export interface VectorCandidate {
  hit: Omit<RankedHit, 'score'>;
  vector: Float32Array | null;
}

const CandidateRow = z.object({
  source: z.enum(['note', 'case']),
  id: z.union([z.number(), z.string()]).transform(Number),
  kind: z.enum(['fact', 'preference', 'customer_claim', 'commitment', 'case']),
  text: z.string(),
  date: z.string(),
  at: isoTimestamp,
  vector: z.instanceof(Buffer).nullable(),
});

// Postgres's binary array format (array_send): ndim, has-nulls flag, element type, then per
// dimension its length and lower bound, then per element a 4-byte length (-1 for NULL) and the
// value, all big-endian.
const FLOAT4_OID = 700;

/**
 * A real[] as array_send writes it, as a Float32Array; null for anything but a one-dimensional
 * real[] without NULLs (memory_cosine gives such a vector no score either). Pure.
 */
export function decodeRealArray(bytes: Buffer): Float32Array | null {
  if (bytes.length < 12) return null;
  const dims = bytes.readInt32BE(0);
  if (dims === 0) return new Float32Array(0);
  if (dims !== 1 || bytes.readInt32BE(8) !== FLOAT4_OID || bytes.length < 20) return null;
  const n = bytes.readInt32BE(12);
  if (bytes.length !== 20 + n * 8) return null;
  const out = new Float32Array(n);
  for (let i = 0, at = 20; i < n; i++, at += 8) {
    if (bytes.readInt32BE(at) !== 4) return null;
    out[i] = bytes.readFloatBE(at + 4);
  }
  return out;
}

/** The customer's current notes and cases with their vectors of `model` (under row-level security). */
export async function currentVectors(client: PoolClient, query: { customerId: string; model: string; now: string }): Promise<VectorCandidate[]> {
  const { rows } = await client.query(CURRENT_VECTORS_SQL, [query.customerId, query.model, query.now]);
  return parseRows(CandidateRow, rows, 'memory vectors').map(({ vector, ...hit }) => ({ hit, vector: vector ? decodeRealArray(vector) : null }));
}

/**
 * The semantic list from vectors in hand: cosine with `query` (rounded to single precision,
 * as a real[] parameter is), at least `floor`, best first, newest first among equals, at most
 * `limit`. Vectors of another length take no part. Pure.
 */
export function rankByCosine(query: readonly number[], candidates: readonly VectorCandidate[], options: { floor: number; limit: number }): RankedHit[] {
  const q = Float32Array.from(query);
  const ranked: RankedHit[] = [];
  for (const { hit, vector } of candidates) {
    if (!vector || vector.length !== q.length) continue;
    let dot = 0;
    for (let i = 0; i < q.length; i++) dot += vector[i]! * q[i]!;
    if (dot >= options.floor) ranked.push({ ...hit, score: dot });
  }
  return ranked.sort((a, b) => b.score - a.score || b.at.localeCompare(a.at) || b.id - a.id).slice(0, options.limit);
}
