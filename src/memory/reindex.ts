import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { withCustomer } from '../db/pool';
import type { Embedder } from './embedder';
import { CUSTOMERS_TO_EMBED_SQL, listCasesToEmbed, listNotesToEmbed, setCaseEmbedding, setNoteEmbedding } from './vectors';

// `casework memory reindex`: embeds every note and case with no vector, or with a vector of
// another model (the model id is stored with each vector), so recall by meaning covers what
// was stored before embeddings existed and survives a change of model. Idempotent and
// resumable: what is done is skipped, so an interrupted run simply continues.

/** Texts embedded per batch (one ONNX run or one API request). */
export const REINDEX_BATCH = 64;
const CUSTOMERS_PER_PAGE = 200;

/** What reindexMemory() did. */
export interface ReindexReport {
  model: string;
  customers: number;
  notes: number;
  cases: number;
  seconds: number;
  per_second: number;
}

/**
 * Re-embeds what needs it, customer by customer. `admin` lists the customers (it spans them
 * all); every read and write of a customer's memory goes through `app`, under row-level security.
 */
export async function reindexMemory(options: {
  admin: Pool;
  app: Pool;
  embedder: Embedder;
  customerId?: string;
  batch?: number;
  log?: (line: string) => void;
}): Promise<ReindexReport> {
  const { embedder } = options;
  const batch = options.batch ?? REINDEX_BATCH;
  const started = performance.now();
  let customers = 0;
  let notes = 0;
  let cases = 0;
  let after = '';
  for (;;) {
    const page = options.customerId
      ? after
        ? []
        : [options.customerId]
      : (await options.admin.query<{ customer_id: string }>(CUSTOMERS_TO_EMBED_SQL, [embedder.id, after, CUSTOMERS_PER_PAGE])).rows.map((r) => r.customer_id);
    if (!page.length) break;
    for (const customerId of page) {
      let touched = false;
      for (;;) {
        const pending = await withCustomer(options.app, customerId, async (client) => ({
          notes: await listNotesToEmbed(client, { customerId, model: embedder.id, limit: batch }),
          cases: await listCasesToEmbed(client, { customerId, model: embedder.id, limit: batch }),
        }));
        const texts = [...pending.notes.map((n) => n.text), ...pending.cases.map((c) => c.text)];
        if (!texts.length) break;
        touched = true;
        const vectors = await embedder.embed(texts, 'document');
        await withCustomer(options.app, customerId, async (client) => {
          for (const [i, n] of pending.notes.entries()) await setNoteEmbedding(client, { customerId, noteId: n.id, vector: vectors[i]!, model: embedder.id });
          for (const [i, c] of pending.cases.entries()) {
            await setCaseEmbedding(client, { customerId, caseId: c.id, vector: vectors[pending.notes.length + i]!, model: embedder.id });
          }
        });
        notes += pending.notes.length;
        cases += pending.cases.length;
      }
      if (touched) customers++;
      after = customerId;
      if (customers && customers % 100 === 0) options.log?.(`reindexed ${customers} customers (${notes} notes, ${cases} cases)`);
    }
  }
  const seconds = Math.round((performance.now() - started) / 10) / 100;
  return { model: embedder.id, customers, notes, cases, seconds, per_second: seconds > 0 ? Math.round((notes + cases) / seconds) : 0 };
}
