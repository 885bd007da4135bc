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
// Intercom sends no signing timestamp; the freshness check reads the signed envelope's
// created_at against a window as long as the idempotency horizon (7 days by default): Intercom
// documents throttled deliveries arriving up to two hours late and webhooks paused for 15
// minutes, so a short window would refuse genuine notifications. Replays inside the window are
// stopped by the idempotency record (the event id from Intercom's own part id), not by the clock.
//
// Both webhook API versions are read. 2.x items carry `source` and `contacts`; 1.x items carry
// `conversation_message` and `user` (the shape Intercom's own fixtures and older apps send).
//
//   conversation.user.created -> ticket.created  (eventId from the opening message's id)
//   conversation.user.replied -> ticket.message  (eventId from the newest user conversation part)
//   conversation.admin.closed -> ticket.closed   (eventId from the notification id)
//   ping (whose id is null) and every other topic -> ignored

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
const Message = z.looseObject({ id: DeskId, body: z.string().nullish(), author: Author });
const Parts = z.looseObject({ conversation_parts: z.array(z.looseObject({ id: DeskId, part_type: z.string(), body: z.string().nullish(), author: Author })) });
/** A 2.x conversation item. */
const ConversationV2 = z.looseObject({
  type: z.literal('conversation'),
  id: DeskId,
  source: Message,
  contacts: z.looseObject({ contacts: z.array(Contact) }).optional(),
  conversation_parts: Parts.optional(),
});
/** A 1.x conversation item: the opening message is `conversation_message`, the customer is `user` (its `user_id` the external id). */
const ConversationV1 = z
  .looseObject({
    type: z.literal('conversation'),
    id: DeskId,
    conversation_message: Message,
    user: z.looseObject({ id: DeskId, user_id: z.string().nullish() }).optional(),
    conversation_parts: Parts.optional(),
  })
  .transform(({ conversation_message, user, ...rest }) => ({
    ...rest,
    source: conversation_message,
    contacts: user ? { contacts: [{ id: user.id, external_id: user.user_id ?? null }] } : undefined,
  }));
/** Either version, read as the 2.x shape. */
const Conversation = z.union([ConversationV2, ConversationV1]);
const Envelope = z.looseObject({
  type: z.literal('notification_event'),
  // The ping's id is null; every notification casework acts on has one.
  id: z.string().trim().min(1, 'must not be blank').nullable(),
  topic: z.string().min(1),
  created_at: z.number().int().positive(),
  data: z.looseObject({ item: z.unknown() }),
});

/** Authors Intercom uses for the customer side of a conversation. */
const CUSTOMER_AUTHORS = new Set(['user', 'lead', 'contact']);

/**
 * The problems of an item that is neither version, named for the version it looks like: a union's
 * own message ("invalid input") would name no field.
 */
function conversationProblems(item: unknown, error: z.ZodError): string {
  const v1 = typeof item === 'object' && item !== null && 'conversation_message' in item;
  const again = (v1 ? ConversationV1 : ConversationV2).safeParse(item);
  return fieldProblems(again.success ? error : again.error, 'data.item');
}

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
  if (topic === 'ping') return { outcome: 'ignored', desk: 'intercom', reason: 'ping: Intercom checking the webhook answers' };
  const stale = outsideWindow(createdAt, now, config.replayWindowSeconds);
  if (stale) return reject('intercom', 'stale_timestamp', `created_at: ${stale}`);

  const handled = topic === 'conversation.user.created' || topic === 'conversation.user.replied' || topic === 'conversation.admin.closed';
  if (!handled) return { outcome: 'ignored', desk: 'intercom', reason: `topic ${topic} is not one casework handles` };
  const parsed = Conversation.safeParse(envelope.data.data.item);
  if (!parsed.success) return reject('intercom', 'malformed', conversationProblems(envelope.data.data.item, parsed.error));
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
  if (!id) return reject('intercom', 'malformed', 'id: required to close a conversation');
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
