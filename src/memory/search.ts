import type { PoolClient } from 'pg';
import { z } from 'zod';
import { isoTimestamp } from '../db/rows';
import { parseRows } from './schemas';
import { synonymsFor } from './vocabulary';

/** One search result: a current note or a past case, with its date. */
export interface MemoryHit {
  source: 'note' | 'case';
  id: number;
  kind: 'fact' | 'preference' | 'customer_claim' | 'commitment' | 'case';
  text: string;
  /** The day the note was written or the case closed. */
  date: string;
  score: number;
}

/** What recall() needs from a search backend; an embeddings provider can implement it later. */
export interface MemorySearch {
  /**
   * Current notes and cases of `customerId` matching `query`, best first, newest first among
   * equals. With `after` (the statement the client is still running), nothing is sent before
   * it settles: one statement at a time on a connection, as pg requires.
   */
  search(client: PoolClient, query: { customerId: string; text: string; now: string; limit: number }, after?: Promise<unknown>): Promise<MemoryHit[]>;
}

const HitRow = z.object({
  source: z.enum(['note', 'case']),
  id: z.union([z.number(), z.string()]).transform(Number),
  kind: z.enum(['fact', 'preference', 'customer_claim', 'commitment', 'case']),
  text: z.string(),
  date: z.string(),
  at: isoTimestamp,
  score: z.union([z.number(), z.string()]).transform(Number),
});

/**
 * The words of a query joined with "or", for websearch_to_tsquery: a note matching some of
 * the words should still be found ("wrong building again" finds "left at the wrong building").
 */
export function anyWordQuery(text: string): string {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && w !== 'or')
    .slice(0, 20);
  // The synonyms of its words too ("apartment" finds "flat"); phrases quoted to match as phrases.
  const synonyms = synonymsFor(text).map((term) => (term.includes(' ') ? `"${term.replace(/[^\p{L}\p{N} ]+/gu, ' ')}"` : term.replace(/[^\p{L}\p{N}]+/gu, ' ')));
  return [...words, ...synonyms].join(' or ');
}

// Full-text rank (english stemming, any word) plus trigram word similarity (typos, partial
// words), each backed by a GIN index; scores rounded so near-equal hits fall back to newest.
/** The recall query; exported so the benchmark can EXPLAIN the exact statement recall runs. */
export const SEARCH_SQL = `
WITH q AS (SELECT websearch_to_tsquery('english', $3) AS tsq)
SELECT source, id, kind, text, date, at, score FROM (
  SELECT 'note' AS source, n.note_id AS id, n.kind, n.text,
         to_char(n.written_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, n.written_at AS at,
         ts_rank_cd(n.search, q.tsq) + word_similarity($2, n.text) AS score
    FROM memory_notes n, q
   WHERE n.customer_id = $1 AND n.superseded_at IS NULL AND n.expires_at > $4::timestamptz
     AND (n.search @@ q.tsq OR $2 <% n.text)
  UNION ALL
  SELECT 'case', c.case_id, 'case',
         concat_ws('; ', 'order ' || nullif(array_to_string(c.order_ids, ', order '), ''), c.problem,
                   'resolution: ' || nullif(c.resolution, '')),
         to_char(c.closed_on, 'YYYY-MM-DD'), c.closed_on::timestamp AT TIME ZONE 'UTC',
         ts_rank_cd(c.search, q.tsq) + word_similarity($2, c.problem)
    FROM memory_cases c, q
   WHERE c.customer_id = $1 AND (c.search @@ q.tsq OR $2 <% c.problem)
) hits
ORDER BY round(score::numeric, 2) DESC, at DESC, id DESC
LIMIT $5`;

/** The parameters of SEARCH_SQL, in order. */
export function searchParams(query: { customerId: string; text: string; now: string; limit: number }): unknown[] {
  return [query.customerId, query.text, anyWordQuery(query.text), query.now, query.limit];
}

const settled = () => undefined;

/** Waits for `after` (a statement still running on the connection) to settle, however it ends; at once without one. */
export async function afterSettled(after?: Promise<unknown>): Promise<void> {
  await after?.then(settled, settled);
}

/** MemorySearch on Postgres alone (full-text search + pg_trgm): offline, no model to download. */
export const postgresMemorySearch: MemorySearch = {
  async search(client, query, after) {
    await afterSettled(after);
    const { rows } = await client.query(SEARCH_SQL, searchParams(query));
    return parseRows(HitRow, rows, 'memory search').map(({ at: _at, ...hit }) => hit);
  },
};
