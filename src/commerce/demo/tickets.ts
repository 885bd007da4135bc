import type { Pool } from 'pg';
import { z } from 'zod';
import { withCustomer } from '../../db/pool';
import { firstRow, isoTimestamp } from '../../db/rows';
import type { PolicySource, TicketSource } from '../shop';

// The demo shop's earlier tickets and policies, from casework's own tables.

const TicketRow = z.object({
  ticket_id: z.string(),
  opened_at: isoTimestamp,
  status: z.string(),
  order_id: z.string().nullable(),
  subject: z.string(),
  body: z.string(),
});

const PolicyRow = z.object({ topic: z.string(), title: z.string(), body: z.string(), keywords: z.array(z.string()) });

/** The customer's earlier tickets, newest first. */
export function demoTickets(pool: Pool): TicketSource {
  return {
    name: 'demo',
    earlierTickets: (customerId, page) =>
      withCustomer(pool, customerId, async (client) => {
        const counted = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM support_tickets WHERE customer_id = $1', [customerId]);
        const { rows } = await client.query(
          `SELECT ticket_id, opened_at, status, order_id, subject, body FROM support_tickets
            WHERE customer_id = $1 ORDER BY opened_at DESC, ticket_id DESC LIMIT $2 OFFSET $3`,
          [customerId, page.limit, page.offset],
        );
        return {
          total: firstRow(counted.rows, 'count of tickets').n,
          items: rows.map((raw) => {
            const t = TicketRow.parse(raw);
            return { ticketId: t.ticket_id, openedAt: t.opened_at, status: t.status, orderId: t.order_id, subject: t.subject, body: t.body };
          }),
        };
      }),
  };
}

/** A scope no customer has: policies are nobody's, and the read may see no customer's rows. */
const NOBODY = '(policies)';

/** The shop's policies, read as the app (casework_app) in a scope that sees no customer's records. */
export function demoPolicies(pool: Pool): PolicySource {
  return {
    name: 'demo',
    policies: () =>
      withCustomer(pool, NOBODY, async (client) => {
        const { rows } = await client.query('SELECT topic, title, body, keywords FROM policies ORDER BY topic');
        return rows.map((row) => PolicyRow.parse(row));
      }),
  };
}
