import type { DeskName } from './types';

// The requester's earlier tickets, read from the desk the current ticket came from: a support
// team's history lives there, not in casework. Each desk client lists them through its own
// documented API (Zendesk: a user's requested tickets; Freshdesk: tickets filtered by requester;
// Intercom: conversations searched by contact), finding the requester from the current ticket
// itself, so the desk's authenticated ids decide whose tickets are read, never anything typed.

/** One earlier ticket as a desk holds it, in the commerce port's words. */
export interface RequesterTicket {
  /** casework's id for it: "zendesk-5150", as every desk ticket is named. */
  ticketId: string;
  openedAt: string;
  /** "open" (still being worked: new, open, pending, on hold, snoozed) or "closed" (solved, resolved, closed). */
  status: 'open' | 'closed';
  subject: string;
  /** The requester's first message, as plain text. */
  body: string;
  /** The order the ticket is about, from the custom field configuration names; null without one. */
  orderId: string | null;
}

/** A window of the requester's other tickets, newest first; `total` counts them all (the current one left out). */
export interface RequesterTickets {
  total: number;
  items: RequesterTicket[];
}

/** Which of the newest-first list to answer. */
export interface TicketWindow {
  offset: number;
  limit: number;
}

/** A desk client that can list a ticket's requester's other tickets. */
export interface RequesterTicketReader {
  readonly desk: DeskName;
  /** The other tickets of the requester of `externalTicketId` (the desk's own id), newest first. */
  requesterTickets(externalTicketId: string, window: TicketWindow): Promise<RequesterTickets>;
}

/** Tickets a desk client reads at most for one answer: a bound, so a requester with thousands of tickets cannot hold the tool call. */
export const MAX_REQUESTER_TICKETS = 1_000;

/**
 * The window of `tickets` (already newest first, the current ticket left out), with `total`
 * when the desk counted them, else the number read.
 */
export function windowOf(tickets: readonly RequesterTicket[], window: TicketWindow, total?: number): RequesterTickets {
  return { total: Math.max(total ?? tickets.length, tickets.length), items: tickets.slice(window.offset, window.offset + window.limit) };
}

/** Newest first, then by id, so two tickets opened in the same second keep one order. */
export function newestFirst(a: RequesterTicket, b: RequesterTicket): number {
  return b.openedAt.localeCompare(a.openedAt) || b.ticketId.localeCompare(a.ticketId);
}

/** A desk's ticket status in the port's two words. */
export function openOrClosed(closed: boolean): RequesterTicket['status'] {
  return closed ? 'closed' : 'open';
}
