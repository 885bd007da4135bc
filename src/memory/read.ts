import type { PoolClient } from 'pg';
import { listRecentCases } from './cases';
import { listCurrentNotes } from './notes';
import { readProfile } from './profile';
import type { MemoryParts } from './render';

/** Cases read at the start of a run ("the few most recent"). */
export const RECENT_CASES = 3;
/** Open commitments read at the start of a run. */
export const OPEN_COMMITMENTS = 5;
/** Other notes read at the start of a run; recall() reaches the rest. */
export const START_NOTES = 8;
// Enough current notes to fill every section even when the newest are all profile notes.
const NOTES_SCANNED = 40;

/** The start-of-run memory of the customer the transaction is scoped to: current items only. */
export async function readStartMemory(client: PoolClient, input: { customerId: string; now: string }): Promise<MemoryParts> {
  const profile = await readProfile(client, input.customerId, input.now);
  const current = await listCurrentNotes(client, { customerId: input.customerId, now: input.now, limit: NOTES_SCANNED });
  const recentCases = await listRecentCases(client, input.customerId, RECENT_CASES);
  const inProfile = new Set(Object.values(profile).map((entry) => entry.note_id));
  return {
    profile,
    recentCases,
    commitments: current.filter((n) => n.kind === 'commitment').slice(0, OPEN_COMMITMENTS),
    notes: current.filter((n) => n.kind !== 'commitment' && !inProfile.has(n.note_id)).slice(0, START_NOTES),
    now: input.now,
  };
}
