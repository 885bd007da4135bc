import type { PoolClient } from 'pg';
import { classifyFact, distinguishingTokens, normaliseFact, tidyFact, type Classification } from './classify';
import { addMonths } from './dates';
import { findNoteByKey, findSimilarNotes, insertNote, lockCustomerMemory, refreshNote, supersedeSubject } from './notes';
import { setProfileField } from './profile';
import type { Note } from './schemas';
import { findSensitive } from './sensitive';

/** Longest fact remember() stores, in characters (the remember tool's own input limit). */
export const MAX_FACT_CHARS = 500;

/** Trigram similarity above which two notes of the same kind and subject are one memory restated. */
export const NEAR_DUPLICATE_SIMILARITY = 0.8;

/** A fact code accepted, tidied and filed; or the reason it refused it. */
export type FactCheck = { ok: true; text: string; textKey: string; filed: Classification } | { ok: false; reason: string };

/** Decides, in code, whether `fact` may be stored and how it is filed. Pure. */
export function checkFact(fact: string): FactCheck {
  const text = tidyFact(fact);
  const textKey = normaliseFact(text);
  if (!text || !textKey) return { ok: false, reason: 'the fact is empty. Give one short sentence the customer stated.' };
  if (text.length > MAX_FACT_CHARS) {
    return { ok: false, reason: `the fact is ${text.length} characters; at most ${MAX_FACT_CHARS}. Save one short sentence.` };
  }
  const finding = findSensitive(text);
  if (finding) return { ok: false, reason: finding.reason };
  return { ok: true, text, textKey, filed: classifyFact(text) };
}

/** What remember() did: stored a new note, merged it into an existing one, or refused it. */
export type RememberResult =
  | { status: 'saved' | 'merged'; note: Note; superseded: number[] }
  | { status: 'refused'; reason: string };

/**
 * Stores one fact for the customer the transaction is scoped to. A restatement (same
 * normalised text, or a near-duplicate with the same numbers and letters) refreshes the
 * existing note's dates instead of adding a row; a new note on a profile subject supersedes
 * the older note on it and becomes the profile field.
 */
export async function rememberFact(
  client: PoolClient,
  input: { customerId: string; fact: string; sourceRun: string; now: string; ttlMonths: number },
): Promise<RememberResult> {
  const check = checkFact(input.fact);
  if (!check.ok) return { status: 'refused', reason: check.reason };
  const { text, textKey, filed } = check;
  const writtenAt = input.now;
  const expiresAt = addMonths(input.now, input.ttlMonths);
  await lockCustomerMemory(client, input.customerId);

  let note: Note | undefined;
  let status: 'saved' | 'merged' = 'merged';
  const same = await findNoteByKey(client, input.customerId, textKey);
  if (same) {
    note = await refreshNote(client, { customerId: input.customerId, noteId: same.note_id, text, textKey, writtenAt, expiresAt });
  } else {
    const tokens = distinguishingTokens(text);
    const similar = (
      await findSimilarNotes(client, { customerId: input.customerId, now: input.now, kind: filed.kind, textKey, threshold: NEAR_DUPLICATE_SIMILARITY })
    ).find((n) => n.subject === filed.subject && distinguishingTokens(n.text) === tokens);
    note = similar
      ? await refreshNote(client, { customerId: input.customerId, noteId: similar.note_id, text, textKey, writtenAt, expiresAt })
      : undefined;
    if (!note) {
      status = 'saved';
      note = await insertNote(client, {
        customerId: input.customerId,
        kind: filed.kind,
        subject: filed.subject,
        text,
        textKey,
        sourceRun: input.sourceRun,
        writtenAt,
        expiresAt,
      });
    }
  }

  let superseded: number[] = [];
  if (note.subject) {
    // The newest statement on a subject wins; the older one stays, marked, for the customer to see.
    superseded = await supersedeSubject(client, { customerId: input.customerId, now: input.now, subject: note.subject, byNoteId: note.note_id });
    await setProfileField(client, { customerId: input.customerId, field: note.subject, noteId: note.note_id, now: input.now });
  }
  return { status, note, superseded };
}
