import type { PoolClient } from 'pg';
import type { NoteKind, ProfileField } from './classify';
import { NoteRow, parseRows, type Note } from './schemas';
import { firstRow } from '../db/rows';

// One function per statement on memory_notes. Every statement names the customer as well as
// relying on row-level security: the filter keeps the plans on the customer index, the policy
// keeps a forgotten filter harmless. Callers run these inside withCustomer().

const COLUMNS = `note_id, kind, subject, text, source_run, written_at, expires_at,
  to_char(due_on, 'YYYY-MM-DD') AS due_on, superseded_at, superseded_by, corrected_at`;

/** A note current at `now`: not expired and not superseded. */
const CURRENT = 'superseded_at IS NULL AND expires_at > $2::timestamptz';

/** Serialises memory writes for one customer, so two remembers of one fact cannot both insert. */
export async function lockCustomerMemory(client: PoolClient, customerId: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('casework.memory:' || $1))", [customerId]);
}

/** The note with this natural key (normalised text), current or not. */
export async function findNoteByKey(client: PoolClient, customerId: string, textKey: string): Promise<Note | undefined> {
  const { rows } = await client.query(`SELECT ${COLUMNS} FROM memory_notes WHERE customer_id = $1 AND text_key = $2`, [customerId, textKey]);
  return parseRows(NoteRow, rows, 'memory note')[0];
}

/** Current notes of `kind` whose text is at least `threshold` trigram-similar to `textKey`, most similar first. */
export async function findSimilarNotes(client: PoolClient, input: { customerId: string; now: string; kind: NoteKind; textKey: string; threshold: number }): Promise<Note[]> {
  const { rows } = await client.query(
    `SELECT ${COLUMNS} FROM memory_notes
      WHERE customer_id = $1 AND ${CURRENT} AND kind = $3 AND similarity(text_key, $4) >= $5
      ORDER BY similarity(text_key, $4) DESC, written_at DESC LIMIT 5`,
    [input.customerId, input.now, input.kind, input.textKey, input.threshold],
  );
  return parseRows(NoteRow, rows, 'memory note');
}

/** Stores a new note and returns it. */
export async function insertNote(
  client: PoolClient,
  note: {
    customerId: string;
    kind: NoteKind;
    subject: ProfileField | null;
    text: string;
    textKey: string;
    sourceRun: string;
    writtenAt: string;
    expiresAt: string;
    dueOn?: string | null;
  },
): Promise<Note> {
  const { rows } = await client.query(
    `INSERT INTO memory_notes (customer_id, kind, subject, text, text_key, source_run, written_at, expires_at, due_on)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
    [note.customerId, note.kind, note.subject, note.text, note.textKey, note.sourceRun, note.writtenAt, note.expiresAt, note.dueOn ?? null],
  );
  return firstRow(parseRows(NoteRow, rows, 'memory note'), 'memory note written');
}

/**
 * Merges a restated note into an existing one: newest wording and dates, current again.
 * `sourceRun` stays that of the run that first wrote it, so a note can always be traced back.
 */
export async function refreshNote(
  client: PoolClient,
  input: { customerId: string; noteId: number; text: string; textKey: string; writtenAt: string; expiresAt: string },
): Promise<Note> {
  const { rows } = await client.query(
    `UPDATE memory_notes SET text = $3, text_key = $4, written_at = $5, expires_at = GREATEST(expires_at, $6::timestamptz),
            superseded_at = NULL, superseded_by = NULL
      WHERE customer_id = $1 AND note_id = $2 RETURNING ${COLUMNS}`,
    [input.customerId, input.noteId, input.text, input.textKey, input.writtenAt, input.expiresAt],
  );
  return firstRow(parseRows(NoteRow, rows, 'memory note'), 'memory note written');
}

/** Marks every other current note on `subject` as superseded by `byNoteId`; returns their ids. */
export async function supersedeSubject(client: PoolClient, input: { customerId: string; now: string; subject: ProfileField; byNoteId: number }): Promise<number[]> {
  const { rows } = await client.query<{ note_id: string }>(
    `UPDATE memory_notes SET superseded_at = $2::timestamptz, superseded_by = $4
      WHERE customer_id = $1 AND superseded_at IS NULL AND subject = $3 AND note_id <> $4 RETURNING note_id`,
    [input.customerId, input.now, input.subject, input.byNoteId],
  );
  return rows.map((r) => Number(r.note_id));
}

/** The customer's current notes, newest first. */
export async function listCurrentNotes(client: PoolClient, input: { customerId: string; now: string; limit: number }): Promise<Note[]> {
  const { rows } = await client.query(
    `SELECT ${COLUMNS} FROM memory_notes WHERE customer_id = $1 AND ${CURRENT}
      ORDER BY written_at DESC, note_id DESC LIMIT $3`,
    [input.customerId, input.now, input.limit],
  );
  return parseRows(NoteRow, rows, 'memory note');
}

/** Every note stored for the customer, expired and superseded included, newest first. */
export async function listAllNotes(client: PoolClient, customerId: string): Promise<Note[]> {
  const { rows } = await client.query(`SELECT ${COLUMNS} FROM memory_notes WHERE customer_id = $1 ORDER BY written_at DESC, note_id DESC`, [customerId]);
  return parseRows(NoteRow, rows, 'memory note');
}

/** One of the customer's notes, or undefined (another customer's note looks the same as none). */
export async function getNote(client: PoolClient, customerId: string, noteId: number): Promise<Note | undefined> {
  const { rows } = await client.query(`SELECT ${COLUMNS} FROM memory_notes WHERE customer_id = $1 AND note_id = $2`, [customerId, noteId]);
  return parseRows(NoteRow, rows, 'memory note')[0];
}

/** Replaces a note's text (a correction by the customer or support), re-filed under `kind`/`subject`. */
export async function correctNoteText(
  client: PoolClient,
  input: { customerId: string; noteId: number; text: string; textKey: string; kind: NoteKind; subject: ProfileField | null; now: string },
): Promise<Note | undefined> {
  const { rows } = await client.query(
    `UPDATE memory_notes SET text = $3, text_key = $4, kind = $5, subject = $6, corrected_at = $7::timestamptz
      WHERE customer_id = $1 AND note_id = $2 RETURNING ${COLUMNS}`,
    [input.customerId, input.noteId, input.text, input.textKey, input.kind, input.subject, input.now],
  );
  return parseRows(NoteRow, rows, 'memory note')[0];
}

/** Deletes one note (its profile field goes with it); returns whether it existed. */
export async function deleteNote(client: PoolClient, customerId: string, noteId: number): Promise<boolean> {
  const { rowCount } = await client.query('DELETE FROM memory_notes WHERE customer_id = $1 AND note_id = $2', [customerId, noteId]);
  return (rowCount ?? 0) > 0;
}

/** Deletes every note of the customer; returns how many. */
export async function deleteAllNotes(client: PoolClient, customerId: string): Promise<number> {
  const { rowCount } = await client.query('DELETE FROM memory_notes WHERE customer_id = $1', [customerId]);
  return rowCount ?? 0;
}

/**
 * Stores a commitment from a closed case. Keyed on its normalised text, so a retried post-run
 * activity (or the same promise recorded twice) keeps one row, with the latest due date.
 * Returns undefined when the same words are already stored as another kind of note.
 */
export async function upsertCommitment(
  client: PoolClient,
  input: { customerId: string; text: string; textKey: string; dueOn: string | null; sourceRun: string; writtenAt: string; expiresAt: string },
): Promise<Note | undefined> {
  const { rows } = await client.query(
    `INSERT INTO memory_notes (customer_id, kind, subject, text, text_key, source_run, written_at, expires_at, due_on)
     VALUES ($1, 'commitment', NULL, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (customer_id, text_key) DO UPDATE
        SET due_on = EXCLUDED.due_on, expires_at = GREATEST(memory_notes.expires_at, EXCLUDED.expires_at),
            superseded_at = NULL, superseded_by = NULL
      WHERE memory_notes.kind = 'commitment'
     RETURNING ${COLUMNS}`,
    [input.customerId, input.text, input.textKey, input.sourceRun, input.writtenAt, input.expiresAt, input.dueOn],
  );
  return parseRows(NoteRow, rows, 'memory note')[0];
}
