import type { Pool, PoolClient } from 'pg';
import { withCustomer } from '../db/pool';
import { classifyFact, distinguishingTokens, normaliseFact, tidyFact, type Classification } from './classify';
import { addMonths } from './dates';
import type { Embedder } from './embedder';
import { findNoteByKey, findSimilarNotes, insertNote, lockCustomerMemory, refreshNote } from './notes';
import { readProfile, setProfileField } from './profile';
import type { Note } from './schemas';
import { findSensitive } from './sensitive';
import type { SupersessionJudge, SupersessionVerdict } from './supersede-judge';
import { findSupersessionCandidates, supersedeNotes } from './supersession';
import { setNoteEmbedding, type StoredVector } from './vectors';

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
export type RememberResult = { status: 'saved' | 'merged'; note: Note; superseded: number[] } | { status: 'refused'; reason: string };

/** What the judge said about the older notes a new note was compared with (none: nothing is replaced). */
export type Verdicts = ReadonlyMap<number, SupersessionVerdict>;

/**
 * Stores one fact for the customer the transaction is scoped to. A restatement (same
 * normalised text, or a near-duplicate with the same numbers and letters) refreshes the
 * existing note's dates instead of adding a row. Older notes are superseded only where
 * `verdicts` says the new note replaces them (true supersession); a note on a profile subject
 * becomes the profile field unless the judge found it compatible with the note there now (a
 * different facet of the same subject, such as a safe place beside where deliveries go).
 */
export async function rememberFact(
  client: PoolClient,
  input: { customerId: string; fact: string; sourceRun: string; now: string; ttlMonths: number; vector?: StoredVector; verdicts?: Verdicts },
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
    const similar = (await findSimilarNotes(client, { customerId: input.customerId, now: input.now, kind: filed.kind, textKey, threshold: NEAR_DUPLICATE_SIMILARITY })).find(
      (n) => n.subject === filed.subject && distinguishingTokens(n.text) === tokens,
    );
    note = similar ? await refreshNote(client, { customerId: input.customerId, noteId: similar.note_id, text, textKey, writtenAt, expiresAt }) : undefined;
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
  if (input.vector) await setNoteEmbedding(client, { customerId: input.customerId, noteId: note.note_id, ...input.vector });

  const verdicts = input.verdicts ?? new Map<number, SupersessionVerdict>();
  let superseded: number[] = [];
  if (note.kind === 'fact' || note.kind === 'preference') {
    const replaced = [...verdicts].filter(([, verdict]) => verdict === 'replaces').map(([id]) => id);
    // The older notes stay, marked, for the customer to see; only their currency changes.
    superseded = await supersedeNotes(client, { customerId: input.customerId, now: input.now, noteIds: replaced, byNoteId: note.note_id });
  }
  if (note.subject) {
    const holder = (await readProfile(client, input.customerId, input.now))[note.subject];
    // Unsure, or not asked: the newest statement wins at read time, and the older stays current beside it.
    if (!holder || holder.note_id === note.note_id || superseded.includes(holder.note_id) || verdicts.get(holder.note_id) !== 'compatible') {
      await setProfileField(client, { customerId: input.customerId, field: note.subject, noteId: note.note_id, now: input.now });
    }
  }
  return { status, note, superseded };
}

/** What rememberNote() uses besides the pool: both optional, so memory works with neither. */
export interface RememberDeps {
  /** Embeds the note when it is written; unset or failing, the note is stored without a vector (reindex adds it). */
  embedder?: Embedder;
  /** Judges which older notes the new one replaces; unset, nothing is replaced. */
  judge?: SupersessionJudge;
  /** Told when the embedder fails, so the caller can log it; the note is still stored. */
  onEmbedError?: (error: unknown) => void;
}

/**
 * remember() end to end, in three steps so no transaction is held open while a model works:
 * embed the fact and read the older notes it might replace (by subject and embedding
 * similarity); ask the judge; then store it, superseding only what the judge said it
 * replaces and is still current.
 */
export async function rememberNote(
  pool: Pool,
  input: { customerId: string; fact: string; sourceRun: string; now: string; ttlMonths: number },
  deps: RememberDeps = {},
): Promise<RememberResult> {
  const check = checkFact(input.fact);
  if (!check.ok) return { status: 'refused', reason: check.reason };
  let vector: StoredVector | undefined;
  if (deps.embedder) {
    try {
      const [embedded] = await deps.embedder.embed([check.text], 'document');
      if (embedded) vector = { vector: embedded, model: deps.embedder.id };
    } catch (error) {
      deps.onEmbedError?.(error);
    }
  }
  let verdicts: Verdicts | undefined;
  if (deps.judge && check.filed.kind !== 'customer_claim') {
    const candidates = await withCustomer(pool, input.customerId, (client) =>
      findSupersessionCandidates(client, { customerId: input.customerId, now: input.now, textKey: check.textKey, subject: check.filed.subject, vector }),
    );
    verdicts = await deps.judge.judge({ newer: check.text, older: candidates.map((c) => ({ id: c.note_id, text: c.text })) });
  }
  return withCustomer(pool, input.customerId, (client) => rememberFact(client, { ...input, vector, verdicts }));
}
