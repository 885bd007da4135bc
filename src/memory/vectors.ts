import type { PoolClient } from 'pg';
import { z } from 'zod';
import { parseRows } from './schemas';

// One function per statement on the embedding columns of memory_notes and memory_cases
// (migration 011). Vectors travel as real[] parameters; similarity is memory_cosine() in SQL.

/** A vector and the id of the model that made it: never stored one without the other. */
export interface StoredVector {
  vector: number[];
  model: string;
}

/** Stores the embedding of one of the customer's notes. */
export async function setNoteEmbedding(client: PoolClient, input: { customerId: string; noteId: number } & StoredVector): Promise<void> {
  await client.query('UPDATE memory_notes SET embedding = $3::real[], embedding_model = $4 WHERE customer_id = $1 AND note_id = $2', [
    input.customerId,
    input.noteId,
    input.vector,
    input.model,
  ]);
}

/** Stores the embedding of one of the customer's cases. */
export async function setCaseEmbedding(client: PoolClient, input: { customerId: string; caseId: number } & StoredVector): Promise<void> {
  await client.query('UPDATE memory_cases SET embedding = $3::real[], embedding_model = $4 WHERE customer_id = $1 AND case_id = $2', [
    input.customerId,
    input.caseId,
    input.vector,
    input.model,
  ]);
}

const Pending = z.object({ id: z.union([z.number(), z.string()]).transform(Number), text: z.string() });
/** A stored text whose vector is missing or made by another model. */
export type PendingEmbedding = z.infer<typeof Pending>;

/** The case as one text: what recall shows and what is embedded for it. */
export const CASE_TEXT_SQL = `concat_ws('; ', 'order ' || nullif(array_to_string(c.order_ids, ', order '), ''), c.problem,
                   'resolution: ' || nullif(c.resolution, ''))`;

/** The customer's notes (every state: a superseded note can come back) without a vector of `model`. */
export async function listNotesToEmbed(client: PoolClient, input: { customerId: string; model: string; limit: number }): Promise<PendingEmbedding[]> {
  const { rows } = await client.query(
    `SELECT note_id AS id, text FROM memory_notes
      WHERE customer_id = $1 AND embedding_model IS DISTINCT FROM $2 ORDER BY note_id LIMIT $3`,
    [input.customerId, input.model, input.limit],
  );
  return parseRows(Pending, rows, 'note to embed');
}

/** The customer's cases without a vector of `model`. */
export async function listCasesToEmbed(client: PoolClient, input: { customerId: string; model: string; limit: number }): Promise<PendingEmbedding[]> {
  const { rows } = await client.query(
    `SELECT c.case_id AS id, ${CASE_TEXT_SQL} AS text FROM memory_cases c
      WHERE c.customer_id = $1 AND c.embedding_model IS DISTINCT FROM $2 ORDER BY c.case_id LIMIT $3`,
    [input.customerId, input.model, input.limit],
  );
  return parseRows(Pending, rows, 'case to embed');
}

/**
 * Customers with any note or case lacking a vector of `model`, after `after`, in id order.
 * Run on the admin pool: it spans customers, which the application role cannot see at once.
 */
export const CUSTOMERS_TO_EMBED_SQL = `
SELECT customer_id FROM (
  SELECT customer_id FROM memory_notes WHERE embedding_model IS DISTINCT FROM $1 AND customer_id > $2
  UNION
  SELECT customer_id FROM memory_cases WHERE embedding_model IS DISTINCT FROM $1 AND customer_id > $2
) todo ORDER BY customer_id LIMIT $3`;
