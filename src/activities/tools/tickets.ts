import type { Commerce, TicketSource } from '../../commerce/shop';
import { defineTool } from './define';
import { excerpt } from '../../context/excerpt';
import { pageWindow } from './shape';

/** Earlier tickets per page; review_tickets reads them all when a question needs every one. */
export const TICKETS_PAGE_SIZE = 5;

/** Characters of each ticket's excerpt: the customer's own words, not the quoted thread. */
export const TICKET_EXCERPT_CHARS = 200;

/** get_earlier_tickets' result. */
export interface TicketsResult {
  tickets: { ticket_id: string; opened_at: string; status: string; order_id: string | null; subject: string; excerpt: string }[];
  showing: string;
  next_page: number | null;
}

const GREETING = /^\s*(hi|hello|dear|hey)\b[^\n]*\n+/i;
const SIGN_OFF = /^\s*(thanks|thank you|many thanks|regards|kind regards|best|cheers|sent from|-{2,}|>|on .+ wrote:)/i;

/**
 * The customer's own words from a ticket body: after the greeting, before the sign-off, the
 * phone signature and the quoted thread, which are most of a body's length and none of its news.
 */
export function customerWords(body: string): string {
  const lines = body.replace(GREETING, '').split('\n');
  const end = lines.findIndex((line) => SIGN_OFF.test(line));
  const words = (end === -1 ? lines : lines.slice(0, end)).join('\n').trim();
  return words || body.trim();
}

/** get_earlier_tickets: page `page` of the customer's earlier tickets, newest first, each with an excerpt. */
export async function readTickets(tickets: TicketSource, customerId: string, page: number, ticketId?: string): Promise<TicketsResult> {
  const read = await tickets.earlierTickets(customerId, { offset: (page - 1) * TICKETS_PAGE_SIZE, limit: TICKETS_PAGE_SIZE }, ticketId);
  const window = pageWindow(read.total, page, TICKETS_PAGE_SIZE, 'tickets');
  return {
    tickets: read.items.slice(0, TICKETS_PAGE_SIZE).map((t) => ({
      ticket_id: t.ticketId,
      opened_at: t.openedAt,
      status: t.status,
      order_id: t.orderId,
      subject: t.subject,
      excerpt: excerpt(customerWords(t.body), TICKET_EXCERPT_CHARS),
    })),
    showing: window.showing,
    next_page: window.next_page,
  };
}

/** get_earlier_tickets, read through the shop's ticket source. */
export function createTicketTools(deps: { commerce: Commerce }) {
  return {
    get_earlier_tickets: defineTool('get_earlier_tickets', ({ page }, context) => readTickets(deps.commerce.tickets, context.customerId, page, context.ticketId)),
  };
}
