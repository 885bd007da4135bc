import type { Pool } from 'pg';
import { withCustomer } from '../db/pool';
import { appendAudit, listAudit } from './audit';
import { deleteAllCases, listRecentCases } from './cases';
import { type NoteKind, type ProfileField } from './classify';
import { MemoryInputError, NoteNotFoundError } from './errors';
import { correctNoteText, deleteAllNotes, deleteNote, findNoteByKey, getNote, listAllNotes, lockCustomerMemory } from './notes';
import { clearProfileForNote, deleteProfile, readProfile, setProfileField } from './profile';
import { checkFact } from './remember';
import { CustomerId, type AuditEntry, type CaseRecord, type Note, type Profile } from './schemas';

// What the customer (through support) can do with their memory: see all of it, correct a
// note, delete a note or everything (docs/architecture.md, "Long-term memory": the right to see and delete). Each
// is recorded in the audit trail in the same transaction as the change it records.

/** Who acts when the caller names nobody: the support console. */
export const DEFAULT_ACTOR = 'support-console';
/** Most cases showMemory() lists. */
const SHOWN_CASES = 500;

/** A note as the customer sees it, with whether it is still used. */
export type ShownNote = Note & { status: 'current' | 'expired' | 'superseded' };

/** Everything stored about one customer. */
export interface CustomerMemory {
  customer_id: string;
  profile: Profile;
  notes: ShownNote[];
  cases: CaseRecord[];
  audit: AuditEntry[];
}

/** Parses a customer id, or throws MemoryInputError saying what is wrong with it. */
export function parseCustomerId(value: unknown): string {
  const parsed = CustomerId.safeParse(value);
  if (!parsed.success) throw new MemoryInputError(parsed.error.issues[0]?.message ?? 'invalid customer id');
  return parsed.data;
}

/** Parses a note id (a positive whole number), or throws NoteNotFoundError naming it. */
export function parseNoteId(value: unknown, customerId: string): number {
  const text = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) throw new NoteNotFoundError(text || '(none)', customerId);
  return Number(text);
}

function parseActor(actor: string | undefined): string {
  const trimmed = (actor ?? '').trim().slice(0, 200);
  return trimmed || DEFAULT_ACTOR;
}

function noteStatus(note: Note, now: string): ShownNote['status'] {
  if (note.superseded_at) return 'superseded';
  return note.expires_at <= now ? 'expired' : 'current';
}

/** Everything stored about the customer, expired and superseded notes included; recorded as a read. */
export async function showMemory(pool: Pool, customerId: string, options: { actor?: string; now?: string } = {}): Promise<CustomerMemory> {
  const id = parseCustomerId(customerId);
  const now = options.now ?? new Date().toISOString();
  return withCustomer(pool, id, async (client) => {
    const profile = await readProfile(client, id, now);
    const notes = (await listAllNotes(client, id)).map((n) => ({ ...n, status: noteStatus(n, now) }));
    const cases = await listRecentCases(client, id, SHOWN_CASES);
    await appendAudit(client, {
      customerId: id,
      action: 'read',
      actor: parseActor(options.actor),
      target: 'all',
      detail: { notes: notes.length, cases: cases.length, profile_fields: Object.keys(profile).length },
      at: now,
    });
    return { customer_id: id, profile, notes, cases, audit: await listAudit(client, id) };
  });
}

/**
 * Replaces the text of one of the customer's notes. The new text passes the same checks as
 * remember() and is re-filed by code: a correction cannot turn a claim into a fact.
 */
export async function correctNote(pool: Pool, customerId: string, noteId: number | string, text: string, actor?: string, options: { now?: string } = {}): Promise<Note> {
  const id = parseCustomerId(customerId);
  const note = parseNoteId(noteId, id);
  const check = checkFact(text ?? '');
  if (!check.ok) throw new MemoryInputError(`Not changed: ${check.reason}`);
  const now = options.now ?? new Date().toISOString();
  return withCustomer(pool, id, async (client) => {
    await lockCustomerMemory(client, id);
    const before = await getNote(client, id, note);
    if (!before) throw new NoteNotFoundError(note, id);
    const clash = await findNoteByKey(client, id, check.textKey);
    if (clash && clash.note_id !== note) throw new MemoryInputError(`Not changed: note ${clash.note_id} already says that; forget one of them instead.`);
    // Commitments are written by code from a closed case; a correction rewords one, it stays one.
    const kind: NoteKind = before.kind === 'commitment' ? 'commitment' : check.filed.kind;
    const subject: ProfileField | null = before.kind === 'commitment' ? null : check.filed.subject;
    const after = await correctNoteText(client, { customerId: id, noteId: note, text: check.text, textKey: check.textKey, kind, subject, now });
    if (!after) throw new NoteNotFoundError(note, id);
    if (before.subject !== subject) await clearProfileForNote(client, id, note);
    // A correction rewords one note; it does not retire others that share its subject (issue 11:
    // only a true replacement supersedes, and a person correcting a note has not said one).
    if (subject && !after.superseded_at) {
      await setProfileField(client, { customerId: id, field: subject, noteId: note, now });
    }
    await appendAudit(client, {
      customerId: id,
      action: 'correct',
      actor: parseActor(actor),
      target: `note ${note}`,
      detail: { note_id: note, kind_before: before.kind, kind_after: kind, subject_before: before.subject, subject_after: subject },
      at: now,
    });
    return after;
  });
}

/** What forgetMemory() deleted, as counts and ids (never the text). */
export interface ForgetResult {
  customer_id: string;
  target: string;
  deleted: { notes: number; cases: number; profile_fields: number; note_ids: number[] };
}

/**
 * Deletes one note of the customer, or, when no note is named, all of the customer's memory
 * in every memory table. The audit trail keeps a row saying what went, without its text.
 */
export async function forgetMemory(pool: Pool, customerId: string, options: { noteId?: number | string; actor?: string; now?: string } = {}): Promise<ForgetResult> {
  const id = parseCustomerId(customerId);
  const note = options.noteId === undefined ? undefined : parseNoteId(options.noteId, id);
  const now = options.now ?? new Date().toISOString();
  return withCustomer(pool, id, async (client) => {
    await lockCustomerMemory(client, id);
    let deleted: ForgetResult['deleted'];
    if (note !== undefined) {
      const existing = await getNote(client, id, note);
      if (!existing) throw new NoteNotFoundError(note, id);
      const profileFields = existing.subject && (await readProfile(client, id, now))[existing.subject]?.note_id === note ? 1 : 0;
      await deleteNote(client, id, note);
      deleted = { notes: 1, cases: 0, profile_fields: profileFields, note_ids: [note] };
    } else {
      const noteIds = (await listAllNotes(client, id)).map((n) => n.note_id);
      const profileFields = await deleteProfile(client, id);
      const notes = await deleteAllNotes(client, id);
      const cases = await deleteAllCases(client, id);
      deleted = { notes, cases, profile_fields: profileFields, note_ids: noteIds };
    }
    const target = note === undefined ? 'all' : `note ${note}`;
    await appendAudit(client, { customerId: id, action: 'forget', actor: parseActor(options.actor), target, detail: deleted, at: now });
    return { customer_id: id, target, deleted };
  });
}
