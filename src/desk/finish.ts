import { InvalidEventError, parseTicketEvent } from '../schemas/event';
import type { CustomerLookup, Requester } from './customers';
import type { DeskRef, InboundDeskName, TicketEventDraft, WebhookResult } from './types';
import { reject } from './verify';

/**
 * The last step every inbound adapter shares: the requester becomes a customer id through the
 * lookup (or the delivery is refused, loudly, 422), and the draft is checked as casework checks
 * a POST /events body, so a webhook can never carry what /events would refuse.
 */
export function finishEvent(desk: InboundDeskName, draft: TicketEventDraft, requester: Requester, lookup: CustomerLookup, ref: DeskRef): WebhookResult {
  const customerId = lookup(requester);
  if (!customerId) {
    const who = requester.id ? `user ${requester.id}` : requester.email ? 'the requester (by email)' : 'the requester';
    return reject(desk, 'unmapped_requester', `${desk} ${who} is not mapped to a casework customer (add them to CASEWORK_DESK_CUSTOMERS)`);
  }
  try {
    return { outcome: 'accepted', event: parseTicketEvent({ ...draft, customerId }), ref };
  } catch (error) {
    if (error instanceof InvalidEventError) return reject(desk, 'malformed', error.issues.join('; '));
    throw error;
  }
}
