import { z } from 'zod';
import type { CustomerLookup } from './customers';
import { finishEvent } from './finish';
import { DeskId } from './ids';
import { deskTicketId, type WebhookDelivery, type WebhookResult } from './types';
import { fieldProblems, hmac, header, outsideWindow, parseBody, plainText, reject, safeEqual, timestampSeconds } from './verify';

// Zendesk webhooks subscribed to ticket events (developer.zendesk.com/api-reference/webhooks/
// event-types/ticket-events): the shared envelope {type, account_id, id, time, subject,
// zendesk_event_version, detail: the ticket, event: what happened}. Signed as documented in
// developer.zendesk.com/documentation/webhooks/verifying: base64(HMAC-SHA256(secret, timestamp + body)).
//
// What becomes a casework event:
//   zen:event-type:ticket.comment_added, public, by a non-staff author -> ticket.message
//       (eventId from the comment id; the ticket's opening comment arrives this way too, which
//       is why ticket.created itself is ignored: mapping both would deliver the first message twice)
//   zen:event-type:ticket.status_changed to SOLVED or CLOSED -> ticket.closed (eventId from the envelope id)
// Private comments and staff comments (casework's own replies among them) are ignored, so
// casework never answers itself.
//
// Zendesk triggers (a ticket trigger's "Notify by > Active webhook" action, signed the same
// way) send the body the trigger defines; casework's is, with Zendesk placeholders
// (support.zendesk.com, "Zendesk Support placeholders reference"):
//   {"casework_event": "ticket.message", "ticket_id": "{{ticket.id}}",
//    "requester_id": "{{ticket.requester.id}}", "comment_id": "{{ticket.latest_comment.id}}",
//    "comment_author_id": "{{ticket.latest_comment.author.id}}",
//    "comment_public": "{{ticket.latest_comment.is_public}}", "comment_body": "{{ticket.latest_comment.value}}"}
// with trigger conditions "Comment is Public" and "Current user is (end user)"; a second
// trigger on "Status changed to Solved" sends {"casework_event": "ticket.closed", "ticket_id",
// "requester_id", "status_event_id": "{{ticket.id}}-solved-{{ticket.updated_at_with_timestamp}}"}.
// A mistyped placeholder renders as "", which is refused as a blank id.

/** The signature header Zendesk sends. */
export const ZENDESK_SIGNATURE_HEADER = 'X-Zendesk-Webhook-Signature';
/** The timestamp header the signature covers. */
export const ZENDESK_TIMESTAMP_HEADER = 'X-Zendesk-Webhook-Signature-Timestamp';

/** What the Zendesk adapter needs. */
export interface ZendeskInboundConfig {
  /** The webhook's signing secret (Admin Center > Webhooks > the webhook > Signing secret). */
  signingSecret: string;
  replayWindowSeconds: number;
  customers: CustomerLookup;
}

const Envelope = z.looseObject({
  type: z.string().min(1),
  id: z.string().trim().min(1, 'must not be blank'),
  subject: z.string().optional(),
  detail: z.looseObject({ id: DeskId, requester_id: DeskId.optional() }),
  event: z.looseObject({}).default({}),
});

const CommentAdded = z.looseObject({
  comment: z.looseObject({
    id: DeskId,
    body: z.string(),
    is_public: z.boolean(),
    author: z.looseObject({ id: DeskId, is_staff: z.boolean() }),
  }),
});

const StatusChanged = z.looseObject({ current: z.string(), previous: z.string().optional() });

const CLOSING = new Set(['SOLVED', 'CLOSED']);

const Trigger = z.discriminatedUnion('casework_event', [
  z.looseObject({
    casework_event: z.literal('ticket.message'),
    ticket_id: DeskId,
    requester_id: DeskId,
    comment_id: DeskId,
    comment_author_id: DeskId,
    comment_public: z.enum(['true', 'false']),
    comment_body: z.string(),
  }),
  z.looseObject({ casework_event: z.literal('ticket.closed'), ticket_id: DeskId, requester_id: DeskId, status_event_id: z.string().trim().min(1, 'must not be blank').max(120) }),
]);

/** A delivery from a casework-shaped Zendesk trigger (see the header comment). */
function acceptTrigger(value: Record<string, unknown>, config: ZendeskInboundConfig, now: Date): WebhookResult {
  const parsed = Trigger.safeParse(value);
  if (!parsed.success) return reject('zendesk', 'malformed', fieldProblems(parsed.error));
  const hook = parsed.data;
  const ticketId = deskTicketId('zendesk', hook.ticket_id);
  const receivedAt = now.toISOString();
  if (hook.casework_event === 'ticket.closed') {
    const eventId = `zendesk-status-${hook.status_event_id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    return finishEvent('zendesk', { eventId, type: 'ticket.closed', ticketId, message: '', receivedAt }, { desk: 'zendesk', id: hook.requester_id }, config.customers, {
      desk: 'zendesk',
      externalTicketId: hook.ticket_id,
    });
  }
  if (hook.comment_public !== 'true') return { outcome: 'ignored', desk: 'zendesk', reason: `private comment ${hook.comment_id} on ticket ${hook.ticket_id}` };
  const message = plainText(hook.comment_body);
  if (!message) return reject('zendesk', 'malformed', 'comment_body: empty');
  return finishEvent(
    'zendesk',
    { eventId: `zendesk-comment-${hook.comment_id}`, type: 'ticket.message', ticketId, message, receivedAt },
    { desk: 'zendesk', id: hook.comment_author_id },
    config.customers,
    { desk: 'zendesk', externalTicketId: hook.ticket_id, externalMessageId: hook.comment_id },
  );
}

/** Signs a body as Zendesk does; for the stand-in and tests. */
export function signZendesk(secret: string, timestamp: string, body: Buffer | string): string {
  return hmac('sha256', secret, timestamp, body).toString('base64');
}

/** Turns one Zendesk webhook delivery into a casework ticket event, an ignore, or a refusal. Pure. */
export function acceptZendeskWebhook(delivery: WebhookDelivery, config: ZendeskInboundConfig, now: Date): WebhookResult {
  const signature = header(delivery, ZENDESK_SIGNATURE_HEADER);
  const timestamp = header(delivery, ZENDESK_TIMESTAMP_HEADER);
  if (!signature) return reject('zendesk', 'bad_signature', `missing ${ZENDESK_SIGNATURE_HEADER} header`);
  if (!timestamp) return reject('zendesk', 'bad_signature', `missing ${ZENDESK_TIMESTAMP_HEADER} header`);
  if (!safeEqual(signZendesk(config.signingSecret, timestamp, delivery.body), signature.trim())) {
    return reject('zendesk', 'bad_signature', `${ZENDESK_SIGNATURE_HEADER} does not match the body and timestamp`);
  }
  const sentAt = timestampSeconds(timestamp);
  if (sentAt === undefined) return reject('zendesk', 'stale_timestamp', `${ZENDESK_TIMESTAMP_HEADER} is not a timestamp`);
  const stale = outsideWindow(sentAt, now, config.replayWindowSeconds);
  if (stale) return reject('zendesk', 'stale_timestamp', stale);

  const body = parseBody(delivery.body);
  if ('problem' in body) return reject('zendesk', 'malformed', body.problem);
  if ('casework_event' in body.value) return acceptTrigger(body.value, config, now);
  const envelope = Envelope.safeParse(body.value);
  if (!envelope.success) return reject('zendesk', 'malformed', fieldProblems(envelope.error));
  const { type, detail, event, id } = envelope.data;
  const ticketId = deskTicketId('zendesk', detail.id);
  const receivedAt = now.toISOString();

  if (type === 'zen:event-type:ticket.comment_added') {
    const parsed = CommentAdded.safeParse(event);
    if (!parsed.success) return reject('zendesk', 'malformed', fieldProblems(parsed.error, 'event'));
    const { comment } = parsed.data;
    if (!comment.is_public) return { outcome: 'ignored', desk: 'zendesk', reason: `private comment ${comment.id} on ticket ${detail.id}` };
    if (comment.author.is_staff) return { outcome: 'ignored', desk: 'zendesk', reason: `staff comment ${comment.id} on ticket ${detail.id}` };
    const message = plainText(comment.body);
    if (!message) return reject('zendesk', 'malformed', 'event.comment.body: empty');
    return finishEvent(
      'zendesk',
      { eventId: `zendesk-comment-${comment.id}`, type: 'ticket.message', ticketId, message, receivedAt },
      { desk: 'zendesk', id: comment.author.id },
      config.customers,
      { desk: 'zendesk', externalTicketId: detail.id, externalMessageId: comment.id },
    );
  }
  if (type === 'zen:event-type:ticket.status_changed') {
    const parsed = StatusChanged.safeParse(event);
    if (!parsed.success) return reject('zendesk', 'malformed', fieldProblems(parsed.error, 'event'));
    if (!CLOSING.has(parsed.data.current.toUpperCase())) {
      return { outcome: 'ignored', desk: 'zendesk', reason: `ticket ${detail.id} status changed to ${parsed.data.current}` };
    }
    if (!detail.requester_id) return reject('zendesk', 'malformed', 'detail.requester_id: required');
    return finishEvent(
      'zendesk',
      { eventId: `zendesk-event-${id}`, type: 'ticket.closed', ticketId, message: '', receivedAt },
      { desk: 'zendesk', id: detail.requester_id },
      config.customers,
      { desk: 'zendesk', externalTicketId: detail.id },
    );
  }
  return { outcome: 'ignored', desk: 'zendesk', reason: `event type ${type} is not one casework handles` };
}
