import type { Pool } from 'pg';
import { withCustomer } from '../db/pool';
import type { Embedder } from './embedder';
import type { RecordCaseResult } from './record-case';
import type { CaseRecord } from './schemas';
import { listCasesToEmbed, listNotesToEmbed, setCaseEmbedding, setNoteEmbedding } from './vectors';

// Embedding what the post-run pipeline wrote: the case and its commitments. Done after the
// record is committed and outside its transaction, so a slow or failing embedder never loses
// a case; whatever is left without a vector is embedded by the next call or by reindex.

/** A case as one text, exactly as CASE_TEXT_SQL builds it: what recall shows and what is embedded. */
export function caseText(record: Pick<CaseRecord, 'order_ids' | 'problem' | 'resolution'>): string {
  const orders = record.order_ids.length ? `order ${record.order_ids.join(', order ')}` : '';
  return [orders, record.problem, record.resolution ? `resolution: ${record.resolution}` : ''].filter(Boolean).join('; ');
}

/** Most texts embedded in one go after a case is recorded. */
const AFTER_CASE_LIMIT = 50;

/** Embeds the recorded case, its commitments and anything else of the customer still missing a vector of this model. */
export async function embedRecordedCase(pool: Pool, embedder: Embedder, customerId: string, recorded: RecordCaseResult): Promise<number> {
  const pending = await withCustomer(pool, customerId, async (client) => ({
    cases: await listCasesToEmbed(client, { customerId, model: embedder.id, limit: AFTER_CASE_LIMIT }),
    notes: await listNotesToEmbed(client, { customerId, model: embedder.id, limit: AFTER_CASE_LIMIT }),
  }));
  // A retry that changed the case's outcome rewrote its text: its old vector no longer says it.
  if (recorded.written && !pending.cases.some((c) => c.id === recorded.case.case_id)) {
    pending.cases.push({ id: recorded.case.case_id, text: caseText(recorded.case) });
  }
  const texts = [...pending.cases.map((c) => c.text), ...pending.notes.map((n) => n.text)];
  if (!texts.length) return 0;
  const vectors = await embedder.embed(texts, 'document');
  await withCustomer(pool, customerId, async (client) => {
    for (const [i, c] of pending.cases.entries()) await setCaseEmbedding(client, { customerId, caseId: c.id, vector: vectors[i]!, model: embedder.id });
    for (const [i, n] of pending.notes.entries()) {
      await setNoteEmbedding(client, { customerId, noteId: n.id, vector: vectors[pending.cases.length + i]!, model: embedder.id });
    }
  });
  return texts.length;
}
