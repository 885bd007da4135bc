import type { InboundDeskName } from '../schemas/desk-ticket';
import type { TicketEvent } from '../schemas/event';

// The shapes every desk adapter shares: what a webhook becomes, and how a casework ticket id
// names the desk ticket it came from (so replies find their way back without a lookup table).

/** The desks casework has adapters for, and the generic signed webhook for all others. */
export const DESK_NAMES = ['zendesk', 'intercom', 'freshdesk', 'webhook'] as const;
/** One of DESK_NAMES. */
export type DeskName = (typeof DESK_NAMES)[number];
/** Desks that send casework webhooks (the generic webhook only receives); defined with the ticket-id helpers in schemas, which workflow code uses. */
export type { InboundDeskName };

/** The desk's own names for what a casework event came from. */
export interface DeskRef {
  desk: InboundDeskName;
  /** The desk's ticket (Zendesk, Freshdesk) or conversation (Intercom) id. */
  externalTicketId: string;
  /** The desk's comment / conversation-part id the event carries, when it has one. */
  externalMessageId?: string;
}

/** A delivery turned into casework's ticket event; the server delivers it as a POST /events body would be. */
export interface AcceptedWebhook {
  outcome: 'accepted';
  event: TicketEvent;
  ref: DeskRef;
}

/** A genuine delivery casework has nothing to do with (a topic it does not handle, an agent's own comment): 202, logged. */
export interface IgnoredWebhook {
  outcome: 'ignored';
  desk: InboundDeskName;
  /** Why, for the log line (never the body). */
  reason: string;
}

/** Why a delivery was refused; each reason is one label of the webhooks-rejected metric. */
export type RejectionReason = 'bad_signature' | 'stale_timestamp' | 'malformed' | 'unmapped_requester';

/** A delivery casework refuses; nothing is started. */
export interface RejectedWebhook {
  outcome: 'rejected';
  desk: InboundDeskName;
  reason: RejectionReason;
  /** 401 (signature, timestamp), 400 (malformed), 422 (requester casework cannot map to a customer). */
  status: 400 | 401 | 422;
  /** Safe to send back and log: names the field or header, never a secret or the body. */
  message: string;
}

/** What an inbound adapter makes of one delivery. */
export type WebhookResult = AcceptedWebhook | IgnoredWebhook | RejectedWebhook;

/** One webhook delivery as the server received it: headers (any case) and the raw body bytes, unparsed. */
export interface WebhookDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export { deskTicketId, isExternalId, parseDeskTicketId } from '../schemas/desk-ticket';

/** A ticket event before the customer is known: adapters build this, the lookup completes it. */
export type TicketEventDraft = Omit<TicketEvent, 'customerId'>;
