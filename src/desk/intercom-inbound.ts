import { z } from 'zod';
import type { CustomerLookup } from './customers';
import { finishEvent } from './finish';
import { DeskId } from './ids';
import { deskTicketId, type WebhookDelivery, type WebhookResult } from './types';
import { fieldProblems, hmac, header, outsideWindow, parseBody, plainText, reject, safeEqual } from './verify';

// Intercom webhook notifications (developers.intercom.com/docs/references/webhooks/webhook-models,
// developers.intercom.com/docs/webhooks/webhook-notifications): every delivery is the
// notification_event envelope {type, app_id, id, topic, created_at, first_sent_at,
// delivery_attempts, data: {type: notification_event_data, item}}; for conversation topics
// the item is a Conversation. Signed with X-Hub-Signature: sha1=<hex HMAC-SHA1(client secret, raw body)>.
//
// Intercom sends no signing timestamp; the replay window is checked against the signed
// envelope's created_at (Intercom retries a failed delivery about a minute later with the same
// created_at, well inside the default 300 s window).
//
//   conversation.user.created -> ticket.created  (eventId from the opening message, source.id)
//   conversation.user.replied -> ticket.message  (eventId from the newest user conversation part)
//   conversation.admin.closed -> ticket.closed   (eventId from the notification id)
//   ping and every other topic -> ignored

/** The signature header Intercom sends. */
export const INTERCOM_SIGNATURE_HEADER = 'X-Hub-Signature';

/** What the Intercom adapter needs. */
export interface IntercomInboundConfig {
  /** The app's client secret (Developer Hub > the app > Basic information). */
  clientSecret: string;
  replayWindowSeconds: number;
  customers: CustomerLookup;
}

const Author = z.looseObject({ type: z.string(), id: DeskId });
const Contact = z.looseObject({ id: DeskId, external_id: z.string().nullish() });
const Conversation = z.looseObject({
  type: z.literal('conversation'),
  id: DeskId,
  source: z.looseObject({ id: DeskId, body: z.string().nullish(), author: Author }),
  contacts: z.looseObject({ contacts: z.array(Contact) }).optional(),
  conversation_parts: z.looseObject({ conversation_parts: z.array(z.looseObject({ id: DeskId, part_type: z.string(), body: z.string().nullish(), author: Author })) }).optional(),
});
const Envelope = z.looseObject({
  type: z.literal('notification_event'),
  id: z.string().trim().min(1, 'must not be blank'),
  topic: z.string().min(1),
  created_at: z.number().int().positive(),
  data: z.looseObject({ item: z.unknown() }),
});

/** Authors Intercom uses for the customer side of a conversation. */
const CUSTOMER_AUTHORS = new Set(['user', 'lead', 'contact']);

/** Signs a body as Intercom does; for tests. */
export function signIntercom(clientSecret: string, body: Buffer | string): string {
  return `sha1=${hmac('sha1', clientSecret, body).toString('hex')}`;
}

/** Turns one Intercom notification into a casework ticket event, an ignore, or a refusal. Pure. */
export function acceptIntercomWebhook(delivery: WebhookDelivery, config: IntercomInboundConfig, now: Date): WebhookResult {
  const signature = header(delivery, INTERCOM_SIGNATURE_HEADER);
  if (!signature) return reject('intercom', 'bad_signature', `missing ${INTERCOM_SIGNATURE_HEADER} header`);
  if (!safeEqual(signIntercom(config.clientSecret, delivery.body), signature.trim().toLowerCase())) {
    return reject('intercom', 'bad_signature', `${INTERCOM_SIGNATURE_HEADER} does not match the body`);
  }
  const body = parseBody(delivery.body);
  if ('problem' in body) return reject('intercom', 'malformed', body.problem);
  const envelope = Envelope.safeParse(body.value);
  if (!envelope.success) return reject('intercom', 'malformed', fieldProblems(envelope.error));
  const { topic, id, created_at: createdAt } = envelope.data;
  const stale = outsideWindow(createdAt, now, config.replayWindowSeconds);
  if (stale) return reject('intercom', 'stale_timestamp', `created_at: ${stale}`);

  const handled = topic === 'conversation.user.created' || topic === 'conversation.user.replied' || topic === 'conversation.admin.closed';
  if (!handled) return { outcome: 'ignored', desk: 'intercom', reason: `topic ${topic} is not one casework handles` };
  const parsed = Conversation.safeParse(envelope.data.data.item);
  if (!parsed.success) return reject('intercom', 'malformed', fieldProblems(parsed.error, 'data.item'));
  const conversation = parsed.data;
  const ticketId = deskTicketId('intercom', conversation.id);
  const receivedAt = now.toISOString();
  const contactOf = (authorId: string) => conversation.contacts?.contacts.find((c) => c.id === authorId) ?? conversation.contacts?.contacts[0];
  const requesterOf = (authorId: string) => ({ desk: 'intercom' as const, id: authorId, externalId: contactOf(authorId)?.external_id ?? null });

  if (topic === 'conversation.user.created') {
    const { source } = conversation;
    if (!CUSTOMER_AUTHORS.has(source.author.type)) return { outcome: 'ignored', desk: 'intercom', reason: `conversation ${conversation.id} opened by ${source.author.type}` };
    const message = plainText(source.body ?? '');
    if (!message) return reject('intercom', 'malformed', 'data.item.source.body: empty');
    return finishEvent(
      'intercom',
      { eventId: `intercom-part-${source.id}`, type: 'ticket.created', ticketId, message, receivedAt },
      requesterOf(source.author.id),
      config.customers,
      { desk: 'intercom', externalTicketId: conversation.id, externalMessageId: source.id },
    );
  }
  if (topic === 'conversation.user.replied') {
    const parts = conversation.conversation_parts?.conversation_parts ?? [];
    const part = [...parts].reverse().find((p) => p.part_type === 'comment' && CUSTOMER_AUTHORS.has(p.author.type));
    if (!part) return reject('intercom', 'malformed', 'data.item.conversation_parts.conversation_parts: no comment by the user');
    const message = plainText(part.body ?? '');
    if (!message) return reject('intercom', 'malformed', 'data.item.conversation_parts.conversation_parts.body: empty');
    return finishEvent('intercom', { eventId: `intercom-part-${part.id}`, type: 'ticket.message', ticketId, message, receivedAt }, requesterOf(part.author.id), config.customers, {
      desk: 'intercom',
      externalTicketId: conversation.id,
      externalMessageId: part.id,
    });
  }
  // conversation.admin.closed: the customer is the conversation's contact, not the admin who closed it.
  const contact = conversation.contacts?.contacts[0];
  if (!contact) return reject('intercom', 'malformed', 'data.item.contacts.contacts: required to close a conversation');
  return finishEvent(
    'intercom',
    { eventId: `intercom-${id}`, type: 'ticket.closed', ticketId, message: '', receivedAt },
    { desk: 'intercom', id: contact.id, externalId: contact.external_id ?? null },
    config.customers,
    { desk: 'intercom', externalTicketId: conversation.id },
  );
}
