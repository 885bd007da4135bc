import type { TicketEvent } from '../schemas/event';

// The shapes every desk adapter shares: what a webhook becomes, and how a casework ticket id
// names the desk ticket it came from (so replies find their way back without a lookup table).

/** The desks casework has adapters for, and the generic signed webhook for all others. */
export const DESK_NAMES = ['zendesk', 'intercom', 'freshdesk', 'webhook'] as const;
/** One of DESK_NAMES. */
export type DeskName = (typeof DESK_NAMES)[number];
/** Desks that send casework webhooks (the generic webhook only receives). */
export type InboundDeskName = Exclude<DeskName, 'webhook'>;

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

const TICKET_ID = /^(zendesk|intercom|freshdesk)-([A-Za-z0-9_]{1,80})$/;
const EXTERNAL_ID = /^[A-Za-z0-9_]{1,80}$/;

/** True when a desk's id can be part of a casework ticket id (letters, digits, "_"; 1-80). */
export function isExternalId(value: string): boolean {
  return EXTERNAL_ID.test(value);
}

/** casework's ticket id for a desk ticket: "zendesk-5158", so ids from two desks never collide. */
export function deskTicketId(desk: InboundDeskName, externalTicketId: string): string {
  return `${desk}-${externalTicketId}`;
}

/** The desk and its ticket id behind a casework ticket id, or undefined for tickets from POST /events. */
export function parseDeskTicketId(ticketId: string): { desk: InboundDeskName; externalTicketId: string } | undefined {
  const match = TICKET_ID.exec(ticketId);
  return match ? { desk: match[1] as InboundDeskName, externalTicketId: match[2]! } : undefined;
}

/** A ticket event before the customer is known: adapters build this, the lookup completes it. */
export type TicketEventDraft = Omit<TicketEvent, 'customerId'>;
