import type { DeskClient, DeskPostKind, DeskPostResult, DeskStatus } from './client';
import { DeskRateLimitedError, toDeskFailure } from './errors';
import { waitingOutRateLimits, type RateLimitPolicy } from './rate-limit-wait';
import { parseDeskTicketId, type DeskName } from './types';

/** The postToDesk activity's one input object. JSON-safe. */
export interface PostToDeskInput {
  /** The investigation's workflow id (part of the idempotency key). */
  workflowId: string;
  /** casework's ticket id: "zendesk-5158" goes to Zendesk ticket 5158; an id from POST /events goes to the generic webhook. */
  ticketId: string;
  kind: DeskPostKind;
  /** The reply's (or note's) number in the investigation, counted by the workflow: 1, 2, 3… */
  sequence: number;
  body: string;
  tags?: string[];
  status?: DeskStatus;
}

/** What postToDesk did. "skipped": no desk is configured for this ticket (the reply stays in the workflow's status, as before). */
export type PostToDeskResult = (DeskPostResult & { desk: DeskName }) | { outcome: 'skipped'; reason: string };

/** Where the activity reports, so the wiring picks the metrics library. */
export interface PostToDeskObserver {
  posted?(desk: DeskName, kind: DeskPostKind, outcome: DeskPostResult['outcome']): void;
  failed?(desk: DeskName, kind: DeskPostKind, error: string): void;
  /** A desk answered 429 asking for `seconds`: waited out in the attempt, or deferred to Temporal's retry. */
  rateLimited?(desk: DeskName, seconds: number, handling: 'waited' | 'deferred'): void;
}

export type { RateLimitPolicy } from './rate-limit-wait';

/**
 * The postToDesk activity. Exactly once: every client checks the desk for the post's key before
 * posting, so Temporal's retries (and a replayed workflow's rescheduled activity) never post
 * twice. A 429 asking for a short wait (the desk's Retry-After, or Intercom's X-RateLimit-Reset)
 * is waited out here, up to the policy's bound, since the call was not applied; failures leave as
 * toDeskFailure makes them: a longer 429 retried after exactly its delay, 5xx and timeouts under
 * the activity's backoff, 401/403/404/4xx non-retryable (the workflow then records needs_human).
 */
export function createPostToDesk(deps: { clients: ReadonlyMap<DeskName, DeskClient>; observer?: PostToDeskObserver; rateLimit?: RateLimitPolicy }) {
  const maxWait = deps.rateLimit?.maxWaitSeconds ?? 0;
  const sleep = deps.rateLimit?.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return async function postToDesk(input: PostToDeskInput): Promise<PostToDeskResult> {
    const ref = parseDeskTicketId(input.ticketId);
    const desk: DeskName = ref?.desk ?? 'webhook';
    const client = deps.clients.get(desk);
    if (!client)
      return { outcome: 'skipped', reason: ref ? `${desk} is not in CASEWORK_DESKS` : 'no desk for tickets from POST /events (set CASEWORK_DESKS=webhook to deliver them)' };
    const post = {
      workflowId: input.workflowId,
      externalTicketId: ref?.externalTicketId ?? input.ticketId,
      kind: input.kind,
      sequence: input.sequence,
      body: input.body,
      ...(input.tags ? { tags: input.tags } : {}),
      ...(input.status ? { status: input.status } : {}),
    };
    const attempt = async () => {
      try {
        return await client.post(post);
      } catch (error) {
        deps.observer?.failed?.(desk, input.kind, (error as Error).name ?? 'Error');
        throw error;
      }
    };
    try {
      // A 429 applied nothing, and the post checks the desk before writing anyway: trying again is safe.
      const result = await waitingOutRateLimits(attempt, { maxWaitSeconds: maxWait, sleep }, (seconds) => deps.observer?.rateLimited?.(desk, seconds, 'waited'));
      deps.observer?.posted?.(desk, input.kind, result.outcome);
      return { ...result, desk };
    } catch (error) {
      const seconds = error instanceof DeskRateLimitedError ? error.retryAfterSeconds : undefined;
      if (seconds !== undefined) deps.observer?.rateLimited?.(desk, seconds, 'deferred');
      throw toDeskFailure(error);
    }
  };
}
