import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { BENCH_VECTOR_PREFIX, benchCustomerId } from '../src/dev/bench/memory';
import { createThreadedEmbedder } from '../src/memory/embed-thread';
import { BOTH_LISTS_SQL, SEMANTIC_SQL } from '../src/memory/hybrid-search';
import { SEARCH_SQL, searchParams } from '../src/memory/search';
import { START_READ_SQL } from '../src/memory/start-read';

// `DATABASE_URL=… npx tsx scripts/bench-memory-parts.ts`, after `npm run bench:memory:quality`
// has seeded its 10,000 customers with vectors: where loadMemory's and recall's time goes,
// part by part, in one run. The question's embedding (local model, worker thread), each
// statement's execution on the server (EXPLAIN ANALYZE, under row-level security as
// casework_app) and one bare round trip, so a slow total can be told apart from a slow part.

const QUERIES = ['wrong building', 'same problem as last time, the courier left it at the wrong building again', 'refund', 'damaged box', 'charged twice'];

async function main(): Promise<void> {
  const url = loadConfig().DATABASE_URL;
  if (!url) throw new Error('set DATABASE_URL to the database the memory benchmark seeded');
  const client = new Client({ connectionString: url });
  await client.connect();
  const embedder = createThreadedEmbedder();
  try {
    await embedder.embed(['warm up the model'], 'query');
    const embedMs: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await embedder.embed([QUERIES[i % QUERIES.length]!], 'query');
      embedMs.push(performance.now() - t);
    }
    const executionMs = async (sql: string, params: unknown[]) => {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE) ${sql}`, params);
      return Number(/Execution Time: ([\d.]+)/.exec(rows.map((r) => r['QUERY PLAN']).join('\n'))?.[1] ?? Number.NaN);
    };
    const start: number[] = [];
    const both: number[] = [];
    const trip: number[] = [];
    const lexicalOnly: number[] = [];
    const semanticOnly: number[] = [];
    for (let i = 0; i < 30; i++) {
      const customerId = benchCustomerId(1 + ((i * 337) % 10_000), 10_000, BENCH_VECTOR_PREFIX);
      const { rows } = await client.query<{ embedding: number[]; embedding_model: string }>(
        'SELECT embedding, embedding_model FROM memory_notes WHERE customer_id = $1 AND embedding IS NOT NULL LIMIT 1',
        [customerId],
      );
      const vector = rows[0];
      if (!vector) throw new Error(`${customerId} has no notes with vectors: run npm run bench:memory:quality first`);
      await client.query(`BEGIN; SET LOCAL ROLE casework_app; SELECT set_config('casework.customer_id', ${client.escapeLiteral(customerId)}, true)`);
      const now = new Date().toISOString();
      start.push(await executionMs(START_READ_SQL, [customerId, now, 40, 3]));
      const text = QUERIES[i % QUERIES.length]!;
      both.push(await executionMs(BOTH_LISTS_SQL, [...searchParams({ customerId, text, now, limit: 20 }), vector.embedding, vector.embedding_model, 0.2]));
      // Each list alone: while the model embeds the query, recall runs the lexical list; the semantic one waits for the vector.
      lexicalOnly.push(await executionMs(SEARCH_SQL, searchParams({ customerId, text, now, limit: 20 })));
      semanticOnly.push(await executionMs(SEMANTIC_SQL, [customerId, vector.embedding, vector.embedding_model, now, 20, 0.2]));
      const t = performance.now();
      await client.query('SELECT 1');
      trip.push(performance.now() - t);
      await client.query('ROLLBACK');
    }
    const at = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!.toFixed(2);
    const row = (name: string, values: number[]) => `${name.padEnd(36)} ${String(values.length).padStart(7)} ${at(values, 0.5).padStart(10)} ${at(values, 0.95).padStart(8)}`;
    console.log(`${'part'.padEnd(36)} ${'samples'.padStart(7)} ${'median ms'.padStart(10)} ${'p95 ms'.padStart(8)}`);
    console.log(row('query embedding (worker thread)', embedMs));
    console.log(row('start read, server execution', start));
    console.log(row('both lists, server execution', both));
    console.log(row('lexical list, server execution', lexicalOnly));
    console.log(row('semantic list, server execution', semanticOnly));
    console.log(row('one round trip (SELECT 1)', trip));
  } finally {
    await embedder.close();
    await client.end();
  }
}

main().catch((error: Error) => {
  console.error(`bench memory parts: ${error.message}`);
  process.exit(1);
});
