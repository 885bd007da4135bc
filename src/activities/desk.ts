import type { DeskClient } from '../desk/client';
import { createPostToDesk, type PostToDeskObserver, type RateLimitPolicy } from '../desk/post';
import type { DeskName } from '../desk/types';

/** What the desk activities need: a client per configured desk (desk/settings.ts), and where to count posts. */
export interface DeskActivityDeps {
  clients: ReadonlyMap<DeskName, DeskClient>;
  observer?: PostToDeskObserver;
  /** How long a post waits out a desk's rate limit itself before leaving it to Temporal's retry; unset, never. */
  rateLimit?: RateLimitPolicy;
}

/**
 * postToDesk: one reply or internal note onto the ticket the case came from, exactly once (the
 * desk clients look for the post's idempotency key before posting). With no desk configured for
 * the ticket it answers "skipped" and posts nothing.
 */
export function createDeskActivities(deps: DeskActivityDeps) {
  return { postToDesk: createPostToDesk(deps) };
}
