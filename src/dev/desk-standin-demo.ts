import { toHtml } from '../desk/client';
import { TICKETS } from './demo-data/demo-shop';
import type { DeskStandin } from './desk-standin';
import type { FreshdeskStandin } from './freshdesk-standin';
import type { IntercomStandin } from './intercom-standin';

// A demo customer's earlier tickets put into a desk stand-in, as that desk holds them (opened
// when the demo's were, solved or still open, the order in a custom field), so an investigation
// of a ticket from that desk reads the same history from the desk as the demo reads from
// casework's own record.

/** The Zendesk ticket field the demo keeps the order in (CASEWORK_ZENDESK_ORDER_FIELD_ID). */
export const DEMO_ZENDESK_ORDER_FIELD_ID = 360_001_234_567;
/** The Freshdesk custom field the demo keeps the order in (CASEWORK_FRESHDESK_ORDER_FIELD). */
export const DEMO_FRESHDESK_ORDER_FIELD = 'cf_order_number';
/** The Intercom conversation attribute the demo keeps the order in (CASEWORK_INTERCOM_ORDER_ATTRIBUTE). */
export const DEMO_INTERCOM_ORDER_ATTRIBUTE = 'Order number';

/** The demo's earlier tickets of one customer, oldest first, so the desks number them in the order they came. */
function ticketsOf(customerId: string) {
  return TICKETS.filter((t) => t.customer_id === customerId).sort((a, b) => a.opened_at.localeCompare(b.opened_at));
}

/** Puts the customer's earlier tickets on the Zendesk stand-in as `requesterId`'s; answers how many. */
export function seedZendeskHistory(standin: DeskStandin, requesterId: number, customerId: string, requesterName?: string): number {
  const tickets = ticketsOf(customerId);
  for (const t of tickets) {
    standin.createTicket({
      requesterId,
      ...(requesterName ? { requesterName } : {}),
      subject: t.subject,
      body: t.body,
      createdAt: t.opened_at,
      status: t.status === 'closed' ? 'closed' : 'open',
      customFields: [{ id: DEMO_ZENDESK_ORDER_FIELD_ID, value: t.order_id }],
    });
  }
  return tickets.length;
}

/** Puts the customer's earlier tickets on the Freshdesk stand-in as `requesterId`'s; answers how many. */
export function seedFreshdeskHistory(standin: FreshdeskStandin, requesterId: number, customerId: string): number {
  const tickets = ticketsOf(customerId);
  for (const t of tickets) {
    standin.createTicket(requesterId, toHtml(t.body), {
      subject: t.subject,
      createdAt: t.opened_at,
      status: t.status === 'closed' ? 5 : 2,
      customFields: { [DEMO_FRESHDESK_ORDER_FIELD]: t.order_id },
    });
  }
  return tickets.length;
}

/** Puts the customer's earlier tickets on the Intercom stand-in as `contactId`'s conversations; answers how many. */
export function seedIntercomHistory(standin: IntercomStandin, contactId: string, customerId: string): number {
  const tickets = ticketsOf(customerId);
  for (const t of tickets) {
    standin.createConversation(contactId, toHtml(t.body), {
      title: t.subject,
      createdAt: t.opened_at,
      state: t.status === 'closed' ? 'closed' : 'open',
      customAttributes: { [DEMO_INTERCOM_ORDER_ATTRIBUTE]: t.order_id },
    });
  }
  return tickets.length;
}
