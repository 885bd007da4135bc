import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { CustomerLookup } from './customers';
import { finishEvent } from './finish';
import { DeskId } from './ids';
import { deskTicketId, type WebhookDelivery, type WebhookResult } from './types';
import { fieldProblems, header, parseBody, plainText, reject, safeEqual } from './verify';

// Freshdesk automation-rule webhooks (support.freshdesk.com, "Using webhooks in automation
// rules"): Freshdesk signs nothing, and the body is whatever JSON the rule's "Trigger webhook"
// action is given, with Freshdesk placeholders. casework asks for one rule per event and this
// body (Content: Advanced, Encoding: JSON):
//
//   {"freshdesk_webhook": {"casework_event": "ticket.message",
//     "ticket_id": "{{ticket.id}}", "ticket_status": "{{ticket.status}}",
//     "ticket_requester_email": "{{ticket.requester.email}}",
//     "ticket_latest_public_comment": "{{ticket.latest_public_comment}}",
//     "ticket_description": "{{ticket.description}}"}}
//
// casework_event is "ticket.created" (rule on ticket creation: the message is the
// description), "ticket.message" (rule "Customer replies": the latest public comment) or
// "ticket.closed". Authentication: the rule adds the custom header
// X-Casework-Webhook-Token: <CASEWORK_FRESHDESK_WEBHOOK_TOKEN>, compared in constant time. There
// is no signature, so the token must travel over HTTPS only and there is no replay window.
// Freshdesk offers no comment id placeholder, so the event id is a hash of the ticket, the
// event and the text: a redelivery of the same webhook maps to the same id.

/** The header the Freshdesk automation rule must send, holding the shared token. */
export const FRESHDESK_TOKEN_HEADER = 'X-Casework-Webhook-Token';

/** What the Freshdesk adapter needs. */
export interface FreshdeskInboundConfig {
  /** The shared token the rule sends in X-Casework-Webhook-Token. */
  token: string;
  customers: CustomerLookup;
}

const Body = z.looseObject({
  freshdesk_webhook: z.looseObject({
    casework_event: z.enum(['ticket.created', 'ticket.message', 'ticket.closed']),
    ticket_id: DeskId,
    ticket_requester_email: z.string().trim().min(3, 'must be the requester email'),
    ticket_status: z.string().optional(),
    ticket_description: z.string().optional(),
    ticket_latest_public_comment: z.string().optional(),
  }),
});

/** Turns one Freshdesk automation webhook into a casework ticket event or a refusal. Pure. */
export function acceptFreshdeskWebhook(delivery: WebhookDelivery, config: FreshdeskInboundConfig, now: Date): WebhookResult {
  const token = header(delivery, FRESHDESK_TOKEN_HEADER);
  if (!token) return reject('freshdesk', 'bad_signature', `missing ${FRESHDESK_TOKEN_HEADER} header`);
  if (!safeEqual(token.trim(), config.token)) return reject('freshdesk', 'bad_signature', `${FRESHDESK_TOKEN_HEADER} is not the configured token`);
  const body = parseBody(delivery.body);
  if ('problem' in body) return reject('freshdesk', 'malformed', body.problem);
  const parsed = Body.safeParse(body.value);
  if (!parsed.success) return reject('freshdesk', 'malformed', fieldProblems(parsed.error));
  const hook = parsed.data.freshdesk_webhook;
  const kind = hook.casework_event;
  const source = kind === 'ticket.created' ? hook.ticket_description : kind === 'ticket.message' ? hook.ticket_latest_public_comment : '';
  const message = plainText(source ?? '');
  if (kind !== 'ticket.closed' && !message) {
    const field = kind === 'ticket.created' ? 'ticket_description' : 'ticket_latest_public_comment';
    return reject('freshdesk', 'malformed', `freshdesk_webhook.${field}: required for ${kind}`);
  }
  const digest = createHash('sha256').update(`${hook.ticket_id}\n${kind}\n${message}`).digest('hex').slice(0, 32);
  return finishEvent(
    'freshdesk',
    { eventId: `freshdesk-${hook.ticket_id}-${digest}`, type: kind, ticketId: deskTicketId('freshdesk', hook.ticket_id), message, receivedAt: now.toISOString() },
    { desk: 'freshdesk', email: hook.ticket_requester_email },
    config.customers,
    { desk: 'freshdesk', externalTicketId: hook.ticket_id },
  );
}
