import type { InboundDeskName } from '../schemas/desk-ticket';
import type { TicketEvent } from '../schemas/event';
import type { Requester } from './customers';

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
  /** Who wrote it, as the desk identifies them (kept for parking what the ticket gate refuses). */
  requester: Requester;
  ref: DeskRef;
}

/**
 * A genuine delivery whose requester casework cannot map to a customer yet: the server looks for
 * a mapping a person made, and parks the delivery when there is none.
 */
export interface UnmappedWebhook {
  outcome: 'unmapped';
  desk: InboundDeskName;
  draft: TicketEventDraft;
  requester: Requester;
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
export type RejectionReason = 'bad_signature' | 'stale_timestamp' | 'malformed';

/** A delivery casework refuses; nothing is started. */
export interface RejectedWebhook {
  outcome: 'rejected';
  desk: InboundDeskName;
  reason: RejectionReason;
  /**
   * 401 for what did not come from the desk (signature, token, timestamp); 202 for a genuine
   * delivery casework cannot read (malformed): a desk's breaker counts 4xx answers, and no retry
   * of the same bytes could fix it. The body, the log line and the metric name the problem.
   */
  status: 202 | 401;
  /** Safe to send back and log: names the field or header, never a secret or the body. */
  message: string;
}

/** What an inbound adapter makes of one delivery. */
export type WebhookResult = AcceptedWebhook | UnmappedWebhook | IgnoredWebhook | RejectedWebhook;

/** One webhook delivery as the server received it: headers (any case) and the raw body bytes, unparsed. */
export interface WebhookDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export { deskTicketId, isExternalId, parseDeskTicketId } from '../schemas/desk-ticket';

/** A ticket event before the customer is known: adapters build this, the lookup completes it. */
export type TicketEventDraft = Omit<TicketEvent, 'customerId'>;
