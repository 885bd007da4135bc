import type { PoolClient } from 'pg';
import { getNote } from './notes';
import type { MemoryParts } from './render';
import type { Note } from './schemas';
import type { MemorySearch } from './search';
import { readStartRows } from './start-read';

/** Cases read at the start of a run ("the few most recent"). */
export const RECENT_CASES = 3;
/** Open commitments read at the start of a run. */
export const OPEN_COMMITMENTS = 5;
/** Other notes read at the start of a run; recall() reaches the rest. */
export const START_NOTES = 8;
// Enough current notes to fill every section even when the newest are all profile notes.
const NOTES_SCANNED = 40;

/** Notes read at the start of a run for their relevance to the customer's first message. */
export const RELEVANT_NOTES = 3;

/**
 * The start-of-run memory of the customer the transaction is scoped to: current items only.
 * With the customer's first message and a search, it also carries the few current notes most
 * relevant to what they just wrote (those already in the profile are not repeated).
 */
export async function readStartMemory(client: PoolClient, input: { customerId: string; now: string; message?: string; search?: MemorySearch }): Promise<MemoryParts> {
  // The start read is sent first; the search (which embeds the message, holding the event loop
  // while an in-thread model runs) starts after it, so Postgres answers the one while the other
  // runs; the search sends its own statements once the start read is answered (`after`).
  const reading = readStartRows(client, { customerId: input.customerId, now: input.now, notes: NOTES_SCANNED, cases: RECENT_CASES });
  const message = input.message?.trim();
  const searching =
    message && input.search
      ? input.search.search(client, { customerId: input.customerId, text: message.slice(0, 1000), now: input.now, limit: RELEVANT_NOTES + 4 }, reading)
      : Promise.resolve([]);
  // Both settle before either failure is rethrown: the transaction must not be ended under a query still queued on it.
  const [read, searched] = await Promise.allSettled([reading, searching]);
  if (read.status === 'rejected') throw read.reason;
  if (searched.status === 'rejected') throw searched.reason;
  const { profile, notes: current, cases: recentCases } = read.value;
  const inProfile = new Set(Object.values(profile).map((entry) => entry.note_id));
  const relevant: Note[] = [];
  for (const hit of searched.value) {
    if (hit.source !== 'note' || hit.kind === 'commitment' || inProfile.has(hit.id) || relevant.length >= RELEVANT_NOTES) continue;
    const note = current.find((n) => n.note_id === hit.id) ?? (await getNote(client, input.customerId, hit.id));
    if (note) relevant.push(note);
  }
  const shown = new Set([...inProfile, ...relevant.map((n) => n.note_id)]);
  return {
    profile,
    recentCases,
    commitments: current.filter((n) => n.kind === 'commitment').slice(0, OPEN_COMMITMENTS),
    notes: current.filter((n) => n.kind !== 'commitment' && !shown.has(n.note_id)).slice(0, START_NOTES),
    ...(relevant.length ? { relevant } : {}),
    now: input.now,
  };
}
