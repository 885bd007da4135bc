import { caseStateOf } from '../schemas/case-state';
import { idempotencyKey, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { deskCall } from './http';
import { hmac, outsideWindow, safeEqual } from './verify';

// The generic outbound webhook, for desks casework has no adapter for. Each reply, note and
// status change is one POST of JSON to CASEWORK_DESK_WEBHOOK_URL:
//
//   POST <url>
//   Content-Type: application/json
//   X-Casework-Delivery: <key>          the idempotency key; the same on every retry of this post
//   Idempotency-Key: <key>              the same value, for receivers that already honour the header
//   X-Casework-Timestamp: <unix seconds> when this attempt was signed
//   X-Casework-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>
//
//   {"id": key, "type": "casework.reply" | "casework.note", "workflow_id", "ticket_id",
//    "sequence", "body", "tags": [...], "status": null | "working" | "awaiting_customer" |
//    "awaiting_approval" | "with_person" | "closed"}   (the case state: docs/desks.md)
//
// A receiver verifies with verifyCaseworkWebhook (or the same three lines in its language):
// recompute the HMAC over the timestamp, a dot and the raw bytes, compare in constant time,
// refuse timestamps older than its window, and store the delivery id: casework retries a post
// it got no 2xx for (429 with Retry-After honoured, 5xx and timeouts with backoff) with the same
// id, so the receiver must treat a repeated id as done and answer 2xx (or 409) again.

/** Headers casework signs its webhooks with. */
export const CASEWORK_WEBHOOK_HEADERS = {
  delivery: 'X-Casework-Delivery',
  timestamp: 'X-Casework-Timestamp',
  signature: 'X-Casework-Signature',
} as const;

/** What the generic webhook client needs. */
export interface WebhookClientConfig {
  url: string;
  secret: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => Date;
}

/** The signature header value for a body signed at `timestamp` (unix seconds). */
export function signCaseworkWebhook(secret: string, timestamp: string, body: string | Buffer): string {
  return `v1=${hmac('sha256', secret, timestamp, '.', body).toString('hex')}`;
}

/**
 * What a receiver runs: true when the signature matches the raw body and the timestamp is
 * within `windowSeconds` of `now`. Exported so receivers in Node (and tests) use exactly this.
 */
export function verifyCaseworkWebhook(input: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer | string;
  now: Date;
  windowSeconds: number;
}): boolean {
  if (!input.timestamp || !input.signature || !/^\d{1,11}$/.test(input.timestamp)) return false;
  if (!safeEqual(signCaseworkWebhook(input.secret, input.timestamp, input.body), input.signature.trim())) return false;
  return outsideWindow(Number(input.timestamp), input.now, input.windowSeconds) === undefined;
}

/** A DeskClient that POSTs signed JSON to one URL. */
export function createWebhookClient(config: WebhookClientConfig): DeskClient {
  const now = config.now ?? (() => new Date());
  return {
    desk: 'webhook',
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const body = JSON.stringify({
        id: key,
        type: post.kind === 'reply' ? 'casework.reply' : 'casework.note',
        workflow_id: post.workflowId,
        ticket_id: post.externalTicketId,
        sequence: post.sequence,
        body: post.body,
        tags: post.tags ?? [],
        status: post.status ? caseStateOf(post.status) : null,
      });
      const timestamp = String(Math.floor(now().getTime() / 1000));
      const headers = {
        [CASEWORK_WEBHOOK_HEADERS.delivery]: key,
        'idempotency-key': key,
        [CASEWORK_WEBHOOK_HEADERS.timestamp]: timestamp,
        [CASEWORK_WEBHOOK_HEADERS.signature]: signCaseworkWebhook(config.secret, timestamp, body),
      };
      const what = `delivering ${post.kind} ${post.sequence} for ${post.workflowId}`;
      // 409: the receiver already has this delivery id, which is what exactly-once asks of it.
      const { status } = await deskCall('webhook', { method: 'POST', url: config.url, headers, body, what, timeoutMs: config.timeoutMs, accept: [409] }, config.fetch);
      return { outcome: status === 409 ? 'already_posted' : 'posted', idempotencyKey: key };
    },
  };
}
