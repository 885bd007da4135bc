import { Context } from '@temporalio/activity';
import { mapPgError } from '../db/errors';
import { isTransient } from '../errors';
import { withHeartbeat } from './heartbeat';

// A write whose input cost money to make. The model step writes the reply it was just sent to
// the transcript log; if Postgres is away for that moment and the write fails the activity,
// Temporal retries the whole activity and the model is asked (and paid) again for the same
// step. So such a write is retried in place, with the activity heartbeating, for as long as
// the attempt has time left; only then does it fail the attempt as before.

/** First wait between tries; it doubles up to MAX_WAIT_MS. */
export const FIRST_WAIT_MS = 250;
export const MAX_WAIT_MS = 5_000;
/** Time an attempt keeps for itself after the last try: failing and reporting it. */
export const DEADLINE_MARGIN_MS = 10_000;
/** How long to keep trying outside an activity (the bench, tests). */
export const PATIENCE_OUTSIDE_ACTIVITY_MS = 30_000;

/** Options, for tests: how long to keep trying, and the clock and sleep to do it with. */
export interface PatienceOptions {
  patienceMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** How long this activity attempt may keep retrying: until its start-to-close deadline, less a margin. */
function attemptTimeLeft(now: number): number {
  try {
    const { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs } = Context.current().info;
    return Math.max(0, currentAttemptScheduledTimestampMs + startToCloseTimeoutMs - now - DEADLINE_MARGIN_MS);
  } catch {
    return PATIENCE_OUTSIDE_ACTIVITY_MS;
  }
}

/**
 * Runs `write` until it succeeds, fails for a reason other than Postgres being unreachable, or
 * the attempt's time runs out (then the last error is thrown, as it would have been at once).
 * `write` must be idempotent: the log's writes are (an entry written twice with the same body
 * is written once).
 */
export async function writePatiently<T>(write: () => Promise<T>, options: PatienceOptions = {}): Promise<T> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const giveUpAt = now() + (options.patienceMs ?? attemptTimeLeft(now()));
  return withHeartbeat(async () => {
    for (let wait = FIRST_WAIT_MS; ; wait = Math.min(MAX_WAIT_MS, wait * 2)) {
      try {
        return await write();
      } catch (error) {
        if (!isTransient(mapPgError(error)) || now() + wait > giveUpAt) throw error;
        await sleep(wait);
      }
    }
  });
}
