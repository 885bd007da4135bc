import { InvalidEventError, parseTicketEvent } from '../schemas/event';
import type { CustomerLookup, Requester } from './customers';
import type { AcceptedWebhook, DeskRef, InboundDeskName, RejectedWebhook, TicketEventDraft, WebhookResult } from './types';
import { reject } from './verify';

/** Stands in for the customer id while an unmapped delivery is checked; never stored. */
const UNMAPPED = 'unmapped';

/**
 * The last step every inbound adapter shares: the requester becomes a customer id through the
 * configured lookup, and the draft is checked as casework checks a POST /events body, so a
 * webhook can never carry what /events would refuse. A requester the configuration does not map
 * is `unmapped`: the server then asks Postgres (a person may have mapped them) or parks it.
 */
export function finishEvent(desk: InboundDeskName, draft: TicketEventDraft, requester: Requester, lookup: CustomerLookup, ref: DeskRef): WebhookResult {
  const customerId = lookup(requester);
  if (customerId) return completeEvent(desk, draft, customerId, requester, ref);
  const checked = completeEvent(desk, draft, UNMAPPED, requester, ref);
  return checked.outcome === 'accepted' ? { outcome: 'unmapped', desk, draft, requester, ref } : checked;
}

/** The draft with its customer, checked as a POST /events body: accepted, or refused as malformed naming the field. */
export function completeEvent(desk: InboundDeskName, draft: TicketEventDraft, customerId: string, requester: Requester, ref: DeskRef): AcceptedWebhook | RejectedWebhook {
  try {
    return { outcome: 'accepted', event: parseTicketEvent({ ...draft, customerId }), requester, ref };
  } catch (error) {
    if (error instanceof InvalidEventError) return reject(desk, 'malformed', error.issues.join('; '));
    throw error;
  }
}
