import type { DeskClient, DeskPostKind, DeskPostResult, DeskStatus } from './client';
import { toDeskFailure } from './errors';
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
}

/**
 * The postToDesk activity. Exactly once: every client checks the desk for the post's key before
 * posting, so Temporal's retries (and a replayed workflow's rescheduled activity) never post
 * twice. Failures leave as toDeskFailure makes them: 429 retried after Retry-After, 5xx and
 * timeouts under the activity's backoff, 401/403/404/4xx non-retryable (the workflow then
 * records needs_human).
 */
export function createPostToDesk(deps: { clients: ReadonlyMap<DeskName, DeskClient>; observer?: PostToDeskObserver }) {
  return async function postToDesk(input: PostToDeskInput): Promise<PostToDeskResult> {
    const ref = parseDeskTicketId(input.ticketId);
    const desk: DeskName = ref?.desk ?? 'webhook';
    const client = deps.clients.get(desk);
    if (!client)
      return { outcome: 'skipped', reason: ref ? `${desk} is not in CASEWORK_DESKS` : 'no desk for tickets from POST /events (set CASEWORK_DESKS=webhook to deliver them)' };
    try {
      const result = await client.post({
        workflowId: input.workflowId,
        externalTicketId: ref?.externalTicketId ?? input.ticketId,
        kind: input.kind,
        sequence: input.sequence,
        body: input.body,
        ...(input.tags ? { tags: input.tags } : {}),
        ...(input.status ? { status: input.status } : {}),
      });
      deps.observer?.posted?.(desk, input.kind, result.outcome);
      return { ...result, desk };
    } catch (error) {
      deps.observer?.failed?.(desk, input.kind, (error as Error).name ?? 'Error');
      throw toDeskFailure(error);
    }
  };
}
