import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { defineTool } from './define';
import { withCustomer } from '../../db/pool';
import { excerpt } from '../../context/excerpt';
import { firstRow, isoTimestamp } from '../../db/rows';
import { pageWindow } from './shape';

/** Earlier tickets per page; review_tickets reads them all when a question needs every one. */
export const TICKETS_PAGE_SIZE = 5;

/** Characters of each ticket's excerpt: the customer's own words, not the quoted thread. */
export const TICKET_EXCERPT_CHARS = 200;

const TicketRow = z.object({
  ticket_id: z.string(),
  opened_at: isoTimestamp,
  status: z.string(),
  order_id: z.string().nullable(),
  subject: z.string(),
  body: z.string(),
});

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
export async function readTickets(client: PoolClient, customerId: string, page: number): Promise<TicketsResult> {
  const counted = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM support_tickets WHERE customer_id = $1', [customerId]);
  const window = pageWindow(firstRow(counted.rows, 'count of tickets').n, page, TICKETS_PAGE_SIZE, 'tickets');
  const { rows } = await client.query(
    `SELECT ticket_id, opened_at, status, order_id, subject, body FROM support_tickets
      WHERE customer_id = $1 ORDER BY opened_at DESC, ticket_id DESC LIMIT $2 OFFSET $3`,
    [customerId, window.limit, window.offset],
  );
  return {
    tickets: rows.map((raw) => {
      const t = TicketRow.parse(raw);
      return {
        ticket_id: t.ticket_id,
        opened_at: t.opened_at,
        status: t.status,
        order_id: t.order_id,
        subject: t.subject,
        excerpt: excerpt(customerWords(t.body), TICKET_EXCERPT_CHARS),
      };
    }),
    showing: window.showing,
    next_page: window.next_page,
  };
}

/** get_earlier_tickets over one pool. */
export function createTicketTools(deps: { pool: Pool }) {
  return {
    get_earlier_tickets: defineTool('get_earlier_tickets', ({ page }, context) =>
      withCustomer(deps.pool, context.customerId, (client) => readTickets(client, context.customerId, page)),
    ),
  };
}
