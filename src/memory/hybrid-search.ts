import type { PoolClient } from 'pg';
import { z } from 'zod';
import { isoTimestamp } from '../db/rows';
import type { Embedder } from './embedder';
import { parseRows } from './schemas';
import { afterSettled, SEARCH_SQL, searchParams, type MemoryHit, type MemorySearch } from './search';
import { CASE_TEXT_SQL } from './vectors';

// Recall by meaning and by words (issue 11). Two ranked lists of the customer's current notes
// and cases, one by cosine similarity of sentence embeddings, one by the existing full-text +
// trigram score, fused by reciprocal rank (RRF). Why RRF rather than a blend of the scores:
// the two scores live on unrelated scales (a cosine of 0.36 can be a paraphrase and 0.19 an
// unrelated sentence; ts_rank_cd + word_similarity runs from 0 to about 2), and their spread
// changes with the query's length, so any fixed blend weight is tuned to one query style. RRF
// uses only the order within each list, which both scorers get right far more often than
// their absolute values; only the lexical score's floor below is absolute, because weak
// lexical matches are noise. src/dev/bench/memory-quality.ts measures RRF variants and blends on
// a labelled set; RRF with the constants below is what it chose (see the table it prints).

/** How deep each list is read before fusing: a customer has hundreds of notes, not millions. */
export const CANDIDATES_PER_LIST = 20;
/** RRF's damping constant: 60 is the usual value; smaller lets the top of each list count more. */
export const RRF_K = 10;
/** Weight of the semantic list in the fusion; the lexical list has weight 1. */
export const SEMANTIC_WEIGHT = 1.5;
/**
 * Lexical score (ts_rank_cd + word_similarity) below which a hit takes no part in the fusion.
 * Measured on the benchmark's labelled set: a question in other words still "matches" notes
 * through a shared stem or a few trigrams, at 0.2-0.43, and those hits pushed the right note
 * out of the top three; a real shared phrase scores 0.76-1.3. Without the floor the hybrid
 * was worse than embeddings alone on paraphrases (74% vs 84% recall@3).
 */
export const LEXICAL_FLOOR = 0.5;
/**
 * Cosine below which a note does not enter the semantic list at all. Set low on purpose
 * (measured: unrelated sentences sit near 0.0-0.2 for MiniLM, paraphrases from about 0.25):
 * it only keeps the semantic list from padding a short answer with notes about nothing.
 */
export const SEMANTIC_FLOOR = 0.2;

const HitRow = z.object({
  source: z.enum(['note', 'case']),
  id: z.union([z.number(), z.string()]).transform(Number),
  kind: z.enum(['fact', 'preference', 'customer_claim', 'commitment', 'case']),
  text: z.string(),
  date: z.string(),
  at: isoTimestamp,
  score: z.union([z.number(), z.string()]).transform(Number),
});
/** A hit with its timestamp, for ordering equals newest first. */
export type RankedHit = MemoryHit & { at: string };

/** The semantic list: the customer's current notes and cases by cosine with the query vector. */
export const SEMANTIC_SQL = `
SELECT source, id, kind, text, date, at, score FROM (
  SELECT 'note' AS source, n.note_id AS id, n.kind, n.text,
         to_char(n.written_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, n.written_at AS at,
         memory_cosine(n.embedding, $2::real[]) AS score
    FROM memory_notes n
   WHERE n.customer_id = $1 AND n.superseded_at IS NULL AND n.expires_at > $4::timestamptz AND n.embedding_model = $3
  UNION ALL
  SELECT 'case', c.case_id, 'case', ${CASE_TEXT_SQL},
         to_char(c.closed_on, 'YYYY-MM-DD'), c.closed_on::timestamp AT TIME ZONE 'UTC',
         memory_cosine(c.embedding, $2::real[])
    FROM memory_cases c
   WHERE c.customer_id = $1 AND c.embedding_model = $3
  -- OFFSET 0 keeps the floor below from being pushed into each branch, which would compute
  -- every cosine twice (once to filter, once to return).
  OFFSET 0
) hits
WHERE score >= $6
ORDER BY score DESC, at DESC, id DESC
LIMIT $5`;

// Both lists in one statement, one round trip: SEARCH_SQL's parameters ($1-$5) first, then the
// semantic list's own (vector, model, floor) renumbered after them.
const SEMANTIC_PARAMS: Record<string, string> = { '1': '1', '2': '6', '3': '7', '4': '4', '5': '5', '6': '8' };
/** The lexical and the semantic list at once, each row tagged with its list. */
export const BOTH_LISTS_SQL = `
SELECT 'lexical' AS list, * FROM (${SEARCH_SQL}) lexical
UNION ALL
SELECT 'semantic', * FROM (${SEMANTIC_SQL.replace(/\$(\d)/g, (_, n: string) => `$${SEMANTIC_PARAMS[n]!}`)}) semantic`;

/** Both lists for one query and its vector, in one round trip. */
export async function bothLists(
  client: PoolClient,
  query: { customerId: string; text: string; vector: number[]; model: string; now: string; limit: number },
): Promise<{ lexical: RankedHit[]; semantic: RankedHit[] }> {
  const { rows } = await client.query(BOTH_LISTS_SQL, [...searchParams(query), query.vector, query.model, SEMANTIC_FLOOR]);
  const hits = parseRows(HitRow.extend({ list: z.enum(['lexical', 'semantic']) }), rows, 'memory hybrid search');
  const strip = ({ list: _list, ...hit }: (typeof hits)[number]): RankedHit => hit;
  // UNION ALL promises no order: each list is put back in the order its own statement sorts by.
  const order = (round: (score: number) => number) => (a: RankedHit, b: RankedHit) => round(b.score) - round(a.score) || b.at.localeCompare(a.at) || b.id - a.id;
  return {
    lexical: hits
      .filter((h) => h.list === 'lexical')
      .map(strip)
      .sort(order((score) => Math.round(score * 100))),
    semantic: hits
      .filter((h) => h.list === 'semantic')
      .map(strip)
      .sort(order((score) => score)),
  };
}

/** The semantic list for one query vector. */
export async function semanticHits(
  client: PoolClient,
  query: { customerId: string; vector: number[]; model: string; now: string; limit: number; floor?: number },
): Promise<RankedHit[]> {
  const { rows } = await client.query(SEMANTIC_SQL, [query.customerId, query.vector, query.model, query.now, query.limit, query.floor ?? SEMANTIC_FLOOR]);
  return parseRows(HitRow, rows, 'memory semantic search');
}

/** How two ranked lists are fused. */
export interface FusionOptions {
  k?: number;
  semanticWeight?: number;
  /** Lexical hits scoring below this take no part in the fusion. */
  lexicalFloor?: number;
}

const keyOf = (hit: MemoryHit) => `${hit.source}:${hit.id}`;

/**
 * Reciprocal rank fusion of the lexical and semantic lists: each hit scores the sum over the
 * lists it is in of weight / (k + rank). Ties (equal fused score) go to the newest. Pure.
 */
export function fuseByRank(lexical: RankedHit[], semantic: RankedHit[], options: FusionOptions = {}): RankedHit[] {
  const k = options.k ?? RRF_K;
  const floor = options.lexicalFloor ?? LEXICAL_FLOOR;
  const lists: [RankedHit[], number][] = [
    [lexical.filter((hit) => hit.score >= floor), 1],
    [semantic, options.semanticWeight ?? SEMANTIC_WEIGHT],
  ];
  const fused = new Map<string, RankedHit>();
  for (const [list, weight] of lists) {
    list.forEach((hit, rank) => {
      const previous = fused.get(keyOf(hit));
      const score = (previous?.score ?? 0) + weight / (k + rank + 1);
      fused.set(keyOf(hit), { ...hit, score });
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || b.at.localeCompare(a.at) || b.id - a.id);
}

/** The lexical list (the existing full-text + trigram statement), with timestamps. */
export async function lexicalHits(client: PoolClient, query: { customerId: string; text: string; now: string; limit: number }): Promise<RankedHit[]> {
  const { rows } = await client.query(SEARCH_SQL, searchParams(query));
  return parseRows(HitRow, rows, 'memory search');
}

/** Options of the hybrid search. */
export interface HybridSearchOptions {
  embedder: Embedder;
  fusion?: FusionOptions;
  /** Told when embedding the query fails (recall then ranks by words alone). */
  onError?: (error: unknown) => void;
}

/**
 * MemorySearch by meaning and words: embeds the query, reads both lists for the customer the
 * transaction is scoped to (row-level security applies to both statements) and fuses them.
 * Notes without a vector of this embedder still come back through the lexical list.
 */
export function createHybridSearch(options: HybridSearchOptions): MemorySearch & { embedder: Embedder; withVector(vector: () => Promise<number[]>): MemorySearch } {
  const { embedder } = options;
  const run = async (client: PoolClient, query: Parameters<MemorySearch['search']>[1], pending: Promise<number[]>, after?: Promise<unknown>): Promise<MemoryHit[]> => {
    // An embedder that fails leaves recall to words alone rather than failing it: the agent
    // still gets an answer.
    let ready: number[] | null | undefined;
    const vectorOrFailure = pending.then(
      (vector) => (ready = vector),
      (error: unknown) => {
        options.onError?.(error);
        return (ready = null);
      },
    );
    await afterSettled(after);
    // Let a vector that is already there settle first (a resolved promise takes two microtask turns).
    await Promise.race([vectorOrFailure, Promise.resolve().then(() => undefined)]);
    let lists: { lexical: RankedHit[]; semantic: RankedHit[] };
    if (ready) {
      // The vector is ready (it was made before the caller's transaction got here): both lists in one round trip.
      lists = await bothLists(client, { ...query, vector: ready, model: embedder.id, limit: CANDIDATES_PER_LIST });
    } else {
      // The model is still at work: the lexical list needs no vector, so Postgres computes it
      // meanwhile and only the semantic list waits for the vector. (Reading the stored vectors
      // meanwhile and ranking them in this process measured no better under load, and what it
      // moves grows with the customer's notes: about 3 KB a note.)
      const lexical = lexicalHits(client, { ...query, limit: CANDIDATES_PER_LIST });
      // Settled together below; handled here so a lexical failure while the model runs is not an unhandled rejection.
      lexical.catch(() => undefined);
      const vector = await vectorOrFailure;
      const lexicalList = await lexical;
      lists = { lexical: lexicalList, semantic: vector ? await semanticHits(client, { ...query, vector, model: embedder.id, limit: CANDIDATES_PER_LIST }) : [] };
    }
    return fuseByRank(lists.lexical, lists.semantic, options.fusion)
      .slice(0, query.limit)
      .map(({ at: _at, ...hit }) => hit);
  };
  return {
    embedder,
    /** The same search with the query's vector made by `vector`, called when the search starts (before `after` settles). */
    withVector: (vector) => ({ search: (client, query, after) => run(client, query, vector(), after) }),
    async search(client, query, after) {
      return run(
        client,
        query,
        embedder.embed([query.text], 'query').then(([v]) => v!),
        after,
      );
    },
  };
}
