import type { PoolClient } from 'pg';
import { z } from 'zod';
import type { ProfileField } from './classify';
import { NoteRow, parseRows, type Note } from './schemas';
import type { StoredVector } from './vectors';

// One function per statement for true supersession (issue 11): which older notes a new note
// might replace, and marking the ones the judge said it does. Nothing here decides: the
// candidates go to a SupersessionJudge, and only its clear "replaces" is acted on.

/** Cosine above which an older note is worth asking the judge about (measured in the quality benchmark). */
export const CANDIDATE_COSINE = 0.3;
/** Most older notes put to the judge for one new note. */
export const MAX_CANDIDATES = 5;

const CandidateRow = NoteRow.extend({ cosine: z.union([z.number(), z.string()]).transform(Number).nullable() });
/** An older note that might be replaced, with its cosine to the new note (null without vectors). */
export type Candidate = Note & { cosine: number | null };

const COLUMNS = `note_id, kind, subject, text, source_run, written_at, expires_at,
  to_char(due_on, 'YYYY-MM-DD') AS due_on, superseded_at, superseded_by, corrected_at`;

/**
 * Current facts and preferences of the customer that a new note might replace: those on the
 * same profile subject, and those whose embedding is close to the new note's. Claims and
 * commitments are never candidates: a claim cannot displace a fact, nor the other way round.
 */
export async function findSupersessionCandidates(
  client: PoolClient,
  input: { customerId: string; now: string; textKey: string; subject: ProfileField | null; vector?: StoredVector; limit?: number; minCosine?: number },
): Promise<Candidate[]> {
  const { rows } = await client.query(
    `SELECT * FROM (
       SELECT ${COLUMNS}, CASE WHEN embedding_model = $6 THEN memory_cosine(embedding, $4::real[]) END AS cosine
         FROM memory_notes
        WHERE customer_id = $1 AND superseded_at IS NULL AND expires_at > $2::timestamptz
          AND kind IN ('fact', 'preference') AND text_key <> $3
       OFFSET 0 -- computes each cosine once, not again for the filter below
     ) c
     WHERE (subject IS NOT NULL AND subject = $5) OR cosine >= $7
     ORDER BY (subject IS NOT NULL AND subject = $5) DESC, cosine DESC NULLS LAST, written_at DESC
     LIMIT $8`,
    [
      input.customerId,
      input.now,
      input.textKey,
      input.vector?.vector ?? null,
      input.subject,
      input.vector?.model ?? null,
      input.minCosine ?? CANDIDATE_COSINE,
      input.limit ?? MAX_CANDIDATES,
    ],
  );
  return parseRows(CandidateRow, rows, 'supersession candidate');
}

/** Marks the listed notes, if still current, as superseded by `byNoteId`; returns the ids marked. */
export async function supersedeNotes(client: PoolClient, input: { customerId: string; now: string; noteIds: number[]; byNoteId: number }): Promise<number[]> {
  if (!input.noteIds.length) return [];
  const { rows } = await client.query<{ note_id: string }>(
    `UPDATE memory_notes SET superseded_at = $2::timestamptz, superseded_by = $4
      WHERE customer_id = $1 AND superseded_at IS NULL AND note_id = ANY($3::bigint[]) AND note_id <> $4
        AND kind IN ('fact', 'preference')
      RETURNING note_id`,
    [input.customerId, input.now, input.noteIds, input.byNoteId],
  );
  return rows.map((r) => Number(r.note_id)).sort((a, b) => a - b);
}
