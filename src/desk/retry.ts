import { isTransient, retryAfterOf } from '../errors';
import { DeskRateLimitedError } from './errors';

// Retries outside Temporal (the bench, the demo's direct posts, tests): the same rules the
// postToDesk activity gets from Temporal's retry policy and nextRetryDelay, in one loop.

/** How withDeskRetries retries. */
export interface DeskRetryOptions {
  /** Attempts in all, the first included. */
  attempts?: number;
  /** First backoff for 5xx and timeouts; doubles each time, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Waits; tests pass one that records the delay instead of sleeping. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs `attempt` until it succeeds, a non-transient error ends it (401/403/404/4xx: thrown at
 * once), or the attempts run out. A rate limit waits exactly the Retry-After the desk gave.
 */
export async function withDeskRetries<T>(attempt: () => Promise<T>, options: DeskRetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 5;
  const base = options.baseDelayMs ?? 200;
  const max = options.maxDelayMs ?? 10_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isTransient(error) || n >= attempts) throw error;
      const delay = error instanceof DeskRateLimitedError ? (retryAfterOf(error) ?? 1) * 1000 : Math.min(max, base * 2 ** (n - 1));
      await sleep(delay);
    }
  }
}
