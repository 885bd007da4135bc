import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { createMemoryActivities } from '../../activities/memory';
import { withCustomer } from '../../db/pool';
import { SEARCH_SQL, searchParams } from '../../memory/search';
import type { Embedder } from '../../memory/embedder';
import { firstRow } from '../../db/rows';
import { seededRng } from '../rng';
import { percentile } from './stats';

// How fast memory is at the start of a run and on recall() with a realistic amount of it:
// 10,000 customers with 50 notes each (500,000 notes) by default. Seeding is done by Postgres
// itself (INSERT … SELECT generate_series), in its own customer-id namespace, one transaction
// per chunk of customers, and a chunk already there is skipped, so a re-run reuses the data.

/** Options for runMemoryBench. `pool` seeds (admin); `appPool` measures (casework_app, under RLS). */
export interface MemoryBenchOptions {
  pool: Pool;
  appPool: Pool;
  customers?: number;
  notesPerCustomer?: number;
  samples?: number;
  out: (line: string) => void;
  json?: boolean;
  /** Measure recall and loadMemory as they run with embeddings (hybrid recall, notes relevant to the first message), query embedding included. */
  embedder?: Embedder;
}

/** Latency of one operation over the samples, in milliseconds. */
export interface LatencyStats {
  samples: number;
  median_ms: number;
  p95_ms: number;
  max_ms: number;
}

/** What runMemoryBench measured. */
export interface MemoryBenchReport {
  customers: number;
  notes_per_customer: number;
  notes_in_namespace: number;
  cases_in_namespace: number;
  seeded_now: boolean;
  seed_seconds: number;
  load_memory: LatencyStats;
  recall: LatencyStats;
  load_memory_block_tokens: { median: number; max: number };
  recall_plan: { indexes: string[]; execution_ms: number };
  /** With an embedder: how fast notes are embedded when written. */
  embedding?: { embedder: string; batch_notes_per_second: number; remember_notes_per_second: number; remember: LatencyStats };
}

/** Customer ids of the benchmark namespace: bench_cust_00001 … */
export const BENCH_PREFIX = 'bench_cust_';
const CHUNK = 1000;
const CASES_PER_CUSTOMER = 3;

// The query whose plan the report shows.
const RECALL_QUERY = 'same problem as last time, the courier left it at the wrong building again';

const QUERIES = ['wrong building', RECALL_QUERY, 'refund', 'damaged box', 'charged twice', 'left with a neighbour', 'invoice copy', 'late delivery rerouted hub'];

/** The benchmark customer id for number `n` of `customers`. */
export function benchCustomerId(n: number, customers: number, prefix = BENCH_PREFIX): string {
  return prefix + String(n).padStart(Math.max(5, String(customers).length), '0');
}

/** Customer ids of the benchmark namespace whose notes and cases carry vectors: bench_vec_00001 … */
export const BENCH_VECTOR_PREFIX = 'bench_vec_';

// With an embedder, each seeded note carries the real embedding of its template (with one
// order number), not of its own order number: 500,000 model runs would take the machine half
// an hour and change no latency, since every vector has the same length and recall reads them
// all. Which note ranks first among near-identical ones is the quality benchmark's business.
const NOTE_TEMPLATES = [
  'Parcel for order 10000 was left at the wrong building; the courier says the gate guard signed',
  'Order 10000 arrived late because the courier rerouted it through another hub',
  'Asked for a copy of the invoice for order 10000',
  'Order 10000 arrived in a damaged box; the items inside were fine',
  'Prefers replacements to refunds, said so about order 10000',
  'Order 10000 was marked delivered but the customer says it never arrived',
  'The courier left order 10000 with a neighbour at number 12',
  'Order 10000 was charged twice; the duplicate charge was voided',
  'Wants order 10000 and later orders delivered on Saturday mornings',
  'Says order 10000 qualifies for free shipping under a promotion',
  'Deliveries must go to Block A, not the main gate',
];
const CASE_TEMPLATES = [
  'order 20000; Parcel left at the wrong building; resolution: refunded in full; courier warned',
  'order 20000; Parcel marked delivered but not received; resolution: replacement sent',
  'order 20000; Charged twice for one order; resolution: duplicate charge voided',
];

// Each note is template (n % 10) filled with an order number that grows with n, so the
// normalised text (the natural key) is unique per customer; dates spread over 400 days, so
// about one note in ten has expired, as in a real store.
const SEED_NOTES_SQL = `
INSERT INTO memory_notes (customer_id, kind, subject, text, text_key, source_run, written_at, expires_at, embedding, embedding_model)
SELECT customer_id, kind, subject, text,
       trim(regexp_replace(lower(text), '[^[:alnum:]]+', ' ', 'g')), 'bench-seed', written_at,
       written_at + interval '12 months',
       ($6::real[])[template * $8::int + 1 : (template + 1) * $8::int], $7::text
  FROM (
    SELECT $1 || lpad(c::text, $4::int, '0') AS customer_id,
           CASE WHEN n = 0 THEN 'preference' WHEN n % 10 = 9 THEN 'customer_claim' WHEN n % 10 IN (4, 8) THEN 'preference' ELSE 'fact' END AS kind,
           CASE WHEN n = 0 THEN 'delivery_instructions' END AS subject,
           CASE WHEN n = 0 THEN format('Deliveries must go to Block %s, not the main gate', chr(65 + c % 8))
                ELSE format((ARRAY[
                  'Parcel for order %s was left at the wrong building; the courier says the gate guard signed',
                  'Order %s arrived late because the courier rerouted it through another hub',
                  'Asked for a copy of the invoice for order %s',
                  'Order %s arrived in a damaged box; the items inside were fine',
                  'Prefers replacements to refunds, said so about order %s',
                  'Order %s was marked delivered but the customer says it never arrived',
                  'The courier left order %s with a neighbour at number 12',
                  'Order %s was charged twice; the duplicate charge was voided',
                  'Wants order %s and later orders delivered on Saturday mornings',
                  'Says order %s qualifies for free shipping under a promotion'
                ])[1 + n % 10], 10000 + n * 3)
           END AS text,
           now() - make_interval(days => CASE WHEN n = 0 THEN 1 ELSE (n * 7 + c) % 400 END) AS written_at,
           CASE WHEN n = 0 THEN 10 ELSE n % 10 END AS template
      FROM generate_series($2::int, $3::int) c, generate_series(0, $5::int - 1) n
  ) seed`;

const SEED_PROFILE_SQL = `
INSERT INTO memory_profile (customer_id, field, note_id, updated_at)
SELECT customer_id, subject, note_id, written_at FROM memory_notes
 WHERE customer_id BETWEEN $1 AND $2 AND subject IS NOT NULL`;

const SEED_CASES_SQL = `
INSERT INTO memory_cases (customer_id, source_run, ticket_id, order_ids, problem, resolution, closed_on, recorded_at, embedding, embedding_model)
SELECT $1 || lpad(c::text, $4::int, '0'), format('bench-run-%s-%s', c, k), format('BT-%s-%s', c, k),
       ARRAY[(20000 + k * 11)::text],
       (ARRAY['Parcel left at the wrong building', 'Parcel marked delivered but not received', 'Charged twice for one order'])[1 + k % 3],
       (ARRAY['refunded in full; courier warned', 'replacement sent', 'duplicate charge voided'])[1 + k % 3],
       (now() - make_interval(days => 20 + k * 45 + c % 30))::date, now(),
       ($6::real[])[(k % 3) * $8::int + 1 : (k % 3 + 1) * $8::int], $7::text
  FROM generate_series($2::int, $3::int) c, generate_series(0, $5::int - 1) k`;

async function chunkSeeded(pool: Pool, first: string): Promise<boolean> {
  const { rows } = await pool.query<{ present: boolean }>('SELECT EXISTS (SELECT 1 FROM memory_notes WHERE customer_id = $1) AS present', [first]);
  return firstRow(rows, 'whether the bench customers are seeded').present;
}

/** Seeds every chunk of benchmark customers not already present; returns whether any was written. */
async function seed(pool: Pool, customers: number, notesPerCustomer: number, out: (line: string) => void, embedder?: Embedder): Promise<boolean> {
  const width = Math.max(5, String(customers).length);
  const prefix = embedder ? BENCH_VECTOR_PREFIX : BENCH_PREFIX;
  const id = (n: number) => benchCustomerId(n, customers, prefix);
  let wrote = false;
  let vectors: { notes: number[] | null; cases: number[] | null; model: string | null; dims: number } = { notes: null, cases: null, model: null, dims: 1 };
  for (let lo = 1; lo <= customers; lo += CHUNK) {
    const hi = Math.min(customers, lo + CHUNK - 1);
    if (await chunkSeeded(pool, id(lo))) continue;
    if (embedder && !vectors.model) {
      const made = await embedder.embed([...NOTE_TEMPLATES, ...CASE_TEMPLATES], 'document');
      vectors = { notes: made.slice(0, NOTE_TEMPLATES.length).flat(), cases: made.slice(NOTE_TEMPLATES.length).flat(), model: embedder.id, dims: made[0]?.length ?? 0 };
    }
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(SEED_NOTES_SQL, [prefix, lo, hi, width, notesPerCustomer, vectors.notes, vectors.model, vectors.dims]);
      await client.query(SEED_PROFILE_SQL, [id(lo), id(hi)]);
      await client.query(SEED_CASES_SQL, [prefix, lo, hi, width, CASES_PER_CUSTOMER, vectors.cases, vectors.model, vectors.dims]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    wrote = true;
    if (hi % 10_000 === 0 || hi === customers) out(`seeded customers up to ${hi} of ${customers}`);
  }
  if (wrote) await pool.query('ANALYZE memory_notes, memory_profile, memory_cases');
  return wrote;
}

function stats(ms: number[]): LatencyStats {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => percentile(sorted, q);
  const round = (x: number) => Math.round(x * 100) / 100;
  return { samples: sorted.length, median_ms: round(at(0.5)), p95_ms: round(at(0.95)), max_ms: round(at(1)) };
}

function indexesIn(plan: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(plan)) plan.forEach((p) => indexesIn(p, found));
  else if (plan && typeof plan === 'object') {
    for (const [key, value] of Object.entries(plan)) {
      if (key === 'Index Name' && typeof value === 'string') found.add(value);
      else indexesIn(value, found);
    }
  }
  return found;
}

/** EXPLAIN ANALYZE of the exact recall statement for one customer, as casework_app under RLS. */
export async function explainRecall(appPool: Pool, customerId: string, text: string): Promise<{ indexes: string[]; execution_ms: number; plan: unknown }> {
  return withCustomer(appPool, customerId, async (client) => {
    const params = searchParams({ customerId, text, now: new Date().toISOString(), limit: 6 });
    const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${SEARCH_SQL}`, params);
    const plan = (firstRow(rows, 'EXPLAIN') as Record<string, unknown>)['QUERY PLAN'] as { 'Execution Time': number }[];
    return { indexes: [...indexesIn(plan)].sort(), execution_ms: firstRow(plan, 'EXPLAIN plan')['Execution Time'], plan };
  });
}

/** Embedding throughput: a batch of distinct notes through the embedder, and remember() end to end for a fresh customer. */
async function measureEmbedding(admin: Pool, appPool: Pool, embedder: Embedder): Promise<NonNullable<MemoryBenchReport['embedding']>> {
  const texts = Array.from({ length: 256 }, (_, i) => `${NOTE_TEMPLATES[i % NOTE_TEMPLATES.length]!.replace('10000', String(30000 + i))} (note ${i})`);
  let t = performance.now();
  await embedder.embed(texts, 'document');
  const batchRate = Math.round(texts.length / ((performance.now() - t) / 1000));
  const customerId = `bench-embed-${process.pid}`;
  const memory = createMemoryActivities({ pool: appPool, embedder });
  const ms: number[] = [];
  try {
    const started = performance.now();
    for (let i = 0; i < 50; i++) {
      t = performance.now();
      await memory.remember({ name: 'remember', input: { fact: texts[i] }, context: { customerId, ticketId: 'bench', workflowId: 'bench', toolUseId: `b${i}` } });
      ms.push(performance.now() - t);
    }
    const rate = Math.round((50 / ((performance.now() - started) / 1000)) * 10) / 10;
    return { embedder: embedder.label, batch_notes_per_second: batchRate, remember_notes_per_second: rate, remember: stats(ms) };
  } finally {
    await admin.query('DELETE FROM memory_notes WHERE customer_id = $1', [customerId]);
  }
}

/** Seeds (if needed) and measures start-of-run loadMemory and recall latency; prints a table or JSON. */
export async function runMemoryBench(options: MemoryBenchOptions): Promise<MemoryBenchReport> {
  const customers = options.customers ?? 10_000;
  const notesPerCustomer = options.notesPerCustomer ?? 50;
  const samples = options.samples ?? 200;
  const started = performance.now();
  const embedder = options.embedder;
  const prefix = embedder ? BENCH_VECTOR_PREFIX : BENCH_PREFIX;
  const seededNow = await seed(options.pool, customers, notesPerCustomer, options.json ? () => undefined : options.out, embedder);
  const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
  const counts = await options.pool.query<{ notes: string; cases: string }>(
    `SELECT (SELECT count(*) FROM memory_notes WHERE customer_id BETWEEN $1 AND $2) AS notes,
            (SELECT count(*) FROM memory_cases WHERE customer_id BETWEEN $1 AND $2) AS cases`,
    [benchCustomerId(1, customers, prefix), benchCustomerId(customers, customers, prefix)],
  );
  const namespaceCounts = firstRow(counts.rows, 'notes and cases in the bench namespace');

  const memory = createMemoryActivities({ pool: options.appPool, embedder });
  // Seeded, so two runs sample the same customers and compare like for like.
  const next = seededRng(42).next;
  const pick = () => benchCustomerId(1 + Math.floor(next() * customers), customers, prefix);
  // With embeddings, the start of a run also ranks notes against the first message (embedding it).
  const firstMessage = () => (embedder ? QUERIES[Math.floor(next() * QUERIES.length)] : undefined);
  for (let i = 0; i < 5; i++) await memory.loadMemory({ customerId: pick(), now: new Date().toISOString(), message: firstMessage() });

  const loadMs: number[] = [];
  const tokens: number[] = [];
  const recallMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const customerId = pick();
    let t = performance.now();
    const loaded = await memory.loadMemory({ customerId, now: new Date().toISOString(), message: firstMessage() });
    loadMs.push(performance.now() - t);
    tokens.push(loaded.tokens);
    const query = QUERIES[Math.floor(next() * QUERIES.length)];
    t = performance.now();
    const outcome = await memory.recall({
      name: 'recall',
      input: { query },
      context: { customerId, ticketId: 'bench', workflowId: 'bench', toolUseId: `bench-${i}` },
    });
    recallMs.push(performance.now() - t);
    if (outcome.is_error) throw new Error(`recall failed in the benchmark: ${outcome.content}`);
  }
  const plan = await explainRecall(options.appPool, benchCustomerId(1, customers, prefix), QUERIES[1]!);
  const embedding = embedder ? await measureEmbedding(options.pool, options.appPool, embedder) : undefined;
  tokens.sort((a, b) => a - b);

  const report: MemoryBenchReport = {
    customers,
    notes_per_customer: notesPerCustomer,
    notes_in_namespace: Number(namespaceCounts.notes),
    cases_in_namespace: Number(namespaceCounts.cases),
    seeded_now: seededNow,
    seed_seconds: seedSeconds,
    load_memory: stats(loadMs),
    recall: stats(recallMs),
    load_memory_block_tokens: { median: tokens[Math.floor(tokens.length / 2)] ?? 0, max: tokens[tokens.length - 1] ?? 0 },
    recall_plan: { indexes: plan.indexes, execution_ms: Math.round(plan.execution_ms * 1000) / 1000 },
    ...(embedding ? { embedding } : {}),
  };
  if (options.json) {
    options.out(JSON.stringify(report, null, 2));
    return report;
  }
  const row = (name: string, s: LatencyStats) =>
    `${name.padEnd(12)} ${String(s.samples).padStart(7)} ${s.median_ms.toFixed(2).padStart(10)} ${s.p95_ms.toFixed(2).padStart(8)} ${s.max_ms.toFixed(2).padStart(8)}`;
  options.out(
    `memory benchmark: ${customers} customers, ${report.notes_in_namespace} notes, ${report.cases_in_namespace} cases` +
      (embedder ? `, hybrid recall with ${embedder.label} (query embedding included) ` : ' ') +
      (seededNow ? `(seeded in ${seedSeconds} s)` : '(already seeded, reused)'),
  );
  options.out(`${'operation'.padEnd(12)} ${'samples'.padStart(7)} ${'median ms'.padStart(10)} ${'p95 ms'.padStart(8)} ${'max ms'.padStart(8)}`);
  options.out(row('loadMemory', report.load_memory));
  options.out(row('recall', report.recall));
  options.out(`memory block: median ${report.load_memory_block_tokens.median} tokens, max ${report.load_memory_block_tokens.max}`);
  options.out(`recall plan (casework_app, under RLS): indexes ${plan.indexes.join(', ') || 'none'}; executes in ${report.recall_plan.execution_ms} ms`);
  if (embedding) {
    options.out(row('remember', embedding.remember));
    options.out(
      `embedding when writing: ${embedding.batch_notes_per_second} notes/s batched (${embedding.embedder}); ${embedding.remember_notes_per_second} notes/s through remember() one at a time (embed + judge + store)`,
    );
  }
  return report;
}
