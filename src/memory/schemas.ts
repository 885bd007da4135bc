import { z } from 'zod';
import { isoTimestamp, isoTimestampOrNull } from '../db/rows';
import { PROFILE_FIELDS } from './classify';
import { describeIssues } from '../schemas/issues';

// Rows as pg returns them, parsed into JSON-safe values (ISO strings, numbers). Every memory
// query parses through one of these, so a schema change fails loudly here, not in a prompt.

/** A customer id as the ticketing system authenticates it (same bounds as the ticket event). */
export const CustomerId = z.string().trim().min(1, 'a customer id is required').max(100, 'a customer id is at most 100 characters');

/** A bigserial id pg returns as a string, as a JSON-safe number. */
const id = z.union([z.number(), z.string()]).transform(Number);

/** A `date` column: pg returns it as a Date at local midnight unless the query casts it to text. */
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** One remembered note. */
export const NoteRow = z.object({
  note_id: id,
  kind: z.enum(['fact', 'preference', 'customer_claim', 'commitment']),
  subject: z.enum(PROFILE_FIELDS).nullable(),
  text: z.string(),
  source_run: z.string(),
  written_at: isoTimestamp,
  expires_at: isoTimestamp,
  due_on: isoDate.nullable(),
  superseded_at: isoTimestampOrNull,
  superseded_by: id.nullable(),
  corrected_at: isoTimestampOrNull,
});
/** One remembered note, JSON-safe. */
export type Note = z.infer<typeof NoteRow>;

/** One profile field and the note that states it. */
export const ProfileRow = z.object({
  field: z.enum(PROFILE_FIELDS),
  value: z.string(),
  note_id: id,
  source_run: z.string(),
  written_at: isoTimestamp,
  expires_at: isoTimestamp,
});
/** One profile field, JSON-safe. */
export type ProfileEntry = z.infer<typeof ProfileRow>;

/** A customer's profile: the named fields that are currently known. */
export type Profile = Partial<Record<(typeof PROFILE_FIELDS)[number], ProfileEntry>>;

/** One closed case. */
export const CaseRow = z.object({
  case_id: id,
  source_run: z.string(),
  ticket_id: z.string(),
  order_ids: z.array(z.string()),
  problem: z.string(),
  resolution: z.string(),
  closed_on: isoDate,
  recorded_at: isoTimestamp,
});
/** One closed case, JSON-safe. */
export type CaseRecord = z.infer<typeof CaseRow>;

/** One audit entry: who did what to which memory, never the text itself. */
export const AuditRow = z.object({
  audit_id: id,
  action: z.enum(['read', 'correct', 'forget']),
  actor: z.string(),
  target: z.string(),
  detail: z.record(z.string(), z.unknown()),
  at: isoTimestamp,
});
/** One audit entry, JSON-safe. */
export type AuditEntry = z.infer<typeof AuditRow>;

/** Parses every row with `schema`; a row that does not fit throws, naming the query. */
export function parseRows<S extends z.ZodType>(schema: S, rows: unknown[], what: string): z.infer<S>[] {
  return rows.map((row) => {
    const parsed = schema.safeParse(row);
    if (!parsed.success) throw new Error(`unexpected ${what} row: ${describeIssues(parsed.error, '(row)')}`);
    return parsed.data;
  });
}
