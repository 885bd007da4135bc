import type { PoolClient } from 'pg';
import { z } from 'zod';
import { CaseRow, NoteRow, ProfileRow, parseRows, type CaseRecord, type Note, type Profile } from './schemas';

// The start-of-run read in one statement: the profile, the newest current notes and the most
// recent cases, each row tagged with its part. One round trip instead of three matters here
// more than anywhere: the first message is embedded at the same time, and the local model
// holds the event loop while it runs, so a statement already sent is answered meanwhile
// while a second one would wait for the model to finish before it could even be sent.

const NOTE_COLUMNS = `n.note_id, n.kind, n.subject, n.text, n.source_run, n.written_at, n.expires_at,
  to_char(n.due_on, 'YYYY-MM-DD') AS due_on, n.superseded_at, n.superseded_by, n.corrected_at`;
const NO_CASE = `NULL::bigint AS case_id, NULL::text AS ticket_id, NULL::text[] AS order_ids, NULL::text AS problem,
  NULL::text AS resolution, NULL::text AS closed_on, NULL::timestamptz AS recorded_at`;

/** The start read; $1 customer, $2 now, $3 notes, $4 cases. Exported so the benchmark can EXPLAIN it. */
export const START_READ_SQL = `
(SELECT 'profile' AS part, p.field AS field, ${NOTE_COLUMNS}, ${NO_CASE}
   FROM memory_profile p JOIN memory_notes n ON n.note_id = p.note_id AND n.customer_id = p.customer_id
  WHERE p.customer_id = $1 AND n.superseded_at IS NULL AND n.expires_at > $2::timestamptz)
UNION ALL
(SELECT 'note', NULL, ${NOTE_COLUMNS}, ${NO_CASE}
   FROM memory_notes n
  WHERE n.customer_id = $1 AND n.superseded_at IS NULL AND n.expires_at > $2::timestamptz
  ORDER BY n.written_at DESC, n.note_id DESC LIMIT $3)
UNION ALL
(SELECT 'case', NULL, NULL, NULL, NULL, NULL, c.source_run, NULL, NULL, NULL, NULL, NULL, NULL,
        c.case_id, c.ticket_id, c.order_ids, c.problem, c.resolution, to_char(c.closed_on, 'YYYY-MM-DD'), c.recorded_at
   FROM memory_cases c
  WHERE c.customer_id = $1
  ORDER BY c.closed_on DESC, c.recorded_at DESC LIMIT $4)`;

const Part = z.object({ part: z.enum(['profile', 'note', 'case']), field: z.string().nullable() });

/** What the start read returns: newest notes and cases first, as listCurrentNotes and listRecentCases order them. */
export interface StartRows {
  profile: Profile;
  notes: Note[];
  cases: CaseRecord[];
}

/** Sends the start read at once (the promise is the statement's answer). */
export async function readStartRows(client: PoolClient, input: { customerId: string; now: string; notes: number; cases: number }): Promise<StartRows> {
  const { rows } = await client.query(START_READ_SQL, [input.customerId, input.now, input.notes, input.cases]);
  const tagged = parseRows(Part, rows, 'memory start read').map((tag, i) => ({ ...tag, row: rows[i] as Record<string, unknown> }));
  const of = (part: string) => tagged.filter((t) => t.part === part).map((t) => t.row);
  const profile: Profile = {};
  const entries = parseRows(
    ProfileRow,
    of('profile').map((row) => ({ ...row, value: row.text })),
    'memory profile',
  );
  for (const entry of entries.sort((a, b) => a.field.localeCompare(b.field))) profile[entry.field] = entry;
  // UNION ALL promises no order across its branches' rows: each part is put back in its own.
  const notes = parseRows(NoteRow, of('note'), 'memory note').sort((a, b) => b.written_at.localeCompare(a.written_at) || b.note_id - a.note_id);
  const cases = parseRows(CaseRow, of('case'), 'memory case').sort((a, b) => b.closed_on.localeCompare(a.closed_on) || b.recorded_at.localeCompare(a.recorded_at));
  return { profile, notes, cases };
}
