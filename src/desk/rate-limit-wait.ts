import { DeskRateLimitedError } from './errors';

// Waiting out a desk's 429 inside one attempt, for posts and reads alike: the desk said how long,
// and a short wait here costs less than failing the attempt and waiting for Temporal's retry.

/** How a call treats a desk's rate limit. */
export interface RateLimitPolicy {
  /** Seconds of rate-limit waits one attempt may take in all; a longer wait is left to Temporal's retry. */
  maxWaitSeconds: number;
  /** Waits; tests pass one that records the delay. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs `call`, waiting out each 429 for exactly the delay the desk asked for while the waits
 * stay within the bound (a 429 applied nothing: callers repeat only what is safe to repeat); past it, or on
 * any other error, the error is thrown as it came.
 */
export async function waitingOutRateLimits<T>(call: () => Promise<T>, limit: RateLimitPolicy, onWait?: (seconds: number) => void): Promise<T> {
  const sleep = limit.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let waited = 0;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const seconds = error instanceof DeskRateLimitedError ? error.retryAfterSeconds : undefined;
      if (seconds === undefined || waited + seconds > limit.maxWaitSeconds) throw error;
      onWait?.(seconds);
      waited += seconds;
      await sleep(seconds * 1000);
    }
  }
}
