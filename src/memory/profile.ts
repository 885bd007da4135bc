import type { PoolClient } from 'pg';
import type { ProfileField } from './classify';
import { ProfileRow, parseRows, type Profile } from './schemas';

// One function per statement on memory_profile. A field points at the note that states it,
// so the profile can never disagree with the notes it was built from.

/** Points profile `field` at `noteId` (the newest note on that subject). */
export async function setProfileField(client: PoolClient, input: { customerId: string; field: ProfileField; noteId: number; now: string }): Promise<void> {
  await client.query(
    `INSERT INTO memory_profile (customer_id, field, note_id, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (customer_id, field) DO UPDATE SET note_id = EXCLUDED.note_id, updated_at = EXCLUDED.updated_at`,
    [input.customerId, input.field, input.noteId, input.now],
  );
}

/** Removes whatever profile field points at `noteId` (the note no longer states one). */
export async function clearProfileForNote(client: PoolClient, customerId: string, noteId: number): Promise<void> {
  await client.query('DELETE FROM memory_profile WHERE customer_id = $1 AND note_id = $2', [customerId, noteId]);
}

/** The customer's profile fields whose notes are still current at `now`. */
export async function readProfile(client: PoolClient, customerId: string, now: string): Promise<Profile> {
  const { rows } = await client.query(
    `SELECT p.field, n.text AS value, n.note_id, n.source_run, n.written_at, n.expires_at
       FROM memory_profile p JOIN memory_notes n ON n.note_id = p.note_id AND n.customer_id = p.customer_id
      WHERE p.customer_id = $1 AND n.superseded_at IS NULL AND n.expires_at > $2::timestamptz
      ORDER BY p.field`,
    [customerId, now],
  );
  const profile: Profile = {};
  for (const entry of parseRows(ProfileRow, rows, 'memory profile')) profile[entry.field] = entry;
  return profile;
}

/** Deletes every profile field of the customer; returns how many. */
export async function deleteProfile(client: PoolClient, customerId: string): Promise<number> {
  const { rowCount } = await client.query('DELETE FROM memory_profile WHERE customer_id = $1', [customerId]);
  return rowCount ?? 0;
}
