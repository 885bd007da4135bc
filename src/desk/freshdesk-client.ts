import { caseStateOf } from '../schemas/case-state';
import { fromHtml, idempotencyKey, markerLine, toHtml, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { basicAuth, deskFetch } from './http';
import { FRESHDESK_LIFECYCLE, type StatusTable } from './lifecycle';
import { readBack, replyMarkerNote, type ThreadEntry } from './read-back';
import { MAX_REQUESTER_TICKETS, newestFirst, openOrClosed, windowOf, type RequesterTicket, type RequesterTickets, type TicketWindow } from './requester-tickets';
import { deskTicketId } from './types';

// Freshdesk API v2 (developers.freshdesk.com/api/#reply_ticket, #add_note_to_a_ticket,
// #list_all_ticket_notes, #update_ticket): POST /api/v2/tickets/{id}/reply {body};
// POST /api/v2/tickets/{id}/notes {body, private: true}; status (and the group of a case handed
// to a person) by PUT /api/v2/tickets/{id} {status, group_id}. Auth: the API key as the Basic
// user, "X" as password.
//
// Freshdesk has no idempotency key and a reply no private field, so the key lives in private
// notes only (read-back.ts): a note ends with "ref: <key>"; a reply is announced by a private
// note carrying its key, then posted without one. Before posting casework reads the ticket's
// conversations to the last page (Freshdesk pages them, 30 by default, at most 100 a page).
//
// Earlier tickets (developers.freshdesk.com/api/#list_all_tickets): the current ticket's
// requester_id, then GET /api/v2/tickets?requester_id=…&updated_since=…&order_by=created_at
// &order_type=desc&include=description, page by page. The list answers only tickets created in
// the last 30 days unless updated_since reaches further back, and has no count, so casework reads
// to the last page (a short one), within MAX_REQUESTER_TICKETS. The order is the custom field
// configuration names (custom_fields.cf_…).

/** What the Freshdesk client needs. */
export interface FreshdeskClientConfig {
  /** https://<domain>.freshdesk.com */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** Status per case state; FRESHDESK_LIFECYCLE by default. */
  statuses?: StatusTable<number>;
  /** The group a case handed to a person is assigned to; unset, the assignment stays as it is. */
  handOffGroupId?: number;
  /** The ticket's custom field holding the order id, e.g. "cf_order_number" (CASEWORK_FRESHDESK_ORDER_FIELD); unset, earlier tickets name no order. */
  orderField?: string;
}

/** Far enough back for every ticket a desk holds: without it Freshdesk lists only the last 30 days. */
const SINCE_EVER = '2000-01-01T00:00:00Z';

interface FreshdeskTicket {
  id?: number;
  requester_id?: number;
  subject?: string | null;
  description?: string | null;
  description_text?: string | null;
  status?: number;
  created_at?: string;
  custom_fields?: Record<string, unknown>;
}

/** Conversations per page casework asks for: Freshdesk's maximum. */
export const FRESHDESK_PAGE_SIZE = 100;
/** Pages read at most (10,000 conversations): a bound, so a desk that always answers a full page cannot hold the activity. */
const MAX_PAGES = 100;

interface FreshdeskConversation {
  body?: string;
  body_text?: string;
  private?: boolean;
  incoming?: boolean;
}

/** A DeskClient for Freshdesk. */
export function createFreshdeskClient(config: FreshdeskClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const statuses = config.statuses ?? FRESHDESK_LIFECYCLE;
  const headers = { authorization: basicAuth(config.apiKey, 'X') };
  const call = (method: 'GET' | 'POST' | 'PUT', path: string, what: string, body?: unknown) =>
    deskFetch('freshdesk', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);

  /** Every conversation of the ticket, oldest first, read page by page to the end. */
  async function thread(id: string, what: string): Promise<ThreadEntry[]> {
    const entries: ThreadEntry[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const got = (await call('GET', `/api/v2/tickets/${id}/conversations?per_page=${FRESHDESK_PAGE_SIZE}&page=${page}`, what)) as FreshdeskConversation[] | undefined;
      const list = Array.isArray(got) ? got : [];
      // Conversations written through the API by casework's agent are outgoing (incoming false).
      for (const c of list) entries.push({ body: c.body ?? c.body_text ?? '', byCasework: c.incoming === false, isPublic: c.private !== true });
      if (list.length < FRESHDESK_PAGE_SIZE) break;
    }
    return entries;
  }

  function earlierTicket(t: FreshdeskTicket): RequesterTicket {
    const field = config.orderField ? t.custom_fields?.[config.orderField] : undefined;
    return {
      ticketId: deskTicketId('freshdesk', String(t.id)),
      openedAt: new Date(t.created_at ?? 0).toISOString(),
      // 4 Resolved and 5 Closed are done; 2 Open, 3 Pending and custom statuses (6 and up) are still being worked.
      status: openOrClosed(t.status === 4 || t.status === 5),
      subject: t.subject ?? '',
      body: t.description ? fromHtml(t.description) : (t.description_text ?? ''),
      orderId: typeof field === 'string' && field.trim() ? field.trim() : typeof field === 'number' ? String(field) : null,
    };
  }

  return {
    desk: 'freshdesk',
    async requesterTickets(externalTicketId: string, window: TicketWindow): Promise<RequesterTickets> {
      const what = `reading the earlier tickets of ticket ${externalTicketId}'s requester`;
      const current = (await call('GET', `/api/v2/tickets/${encodeURIComponent(externalTicketId)}`, what)) as FreshdeskTicket | undefined;
      const requester = current?.requester_id;
      if (typeof requester !== 'number') return { total: 0, items: [] };
      const found: RequesterTicket[] = [];
      for (let page = 1; found.length < MAX_REQUESTER_TICKETS; page++) {
        const query = `requester_id=${requester}&updated_since=${encodeURIComponent(SINCE_EVER)}&order_by=created_at&order_type=desc&include=description&per_page=${FRESHDESK_PAGE_SIZE}&page=${page}`;
        const got = (await call('GET', `/api/v2/tickets?${query}`, what)) as FreshdeskTicket[] | undefined;
        const list = Array.isArray(got) ? got : [];
        for (const t of list) if (String(t.id) !== externalTicketId) found.push(earlierTicket(t));
        if (list.length < FRESHDESK_PAGE_SIZE) break;
      }
      return windowOf(found.sort(newestFirst), window);
    },
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to ticket ${post.externalTicketId}`;
      const found = readBack(await thread(id, `checking ticket ${post.externalTicketId} before ${what}`), post.kind, key, post.body);
      if (found === 'posted') return { outcome: 'already_posted', idempotencyKey: key };
      const note = (text: string) => call('POST', `/api/v2/tickets/${id}/notes`, what, { body: toHtml(text), private: true });
      if (post.kind === 'note') await note(`${post.body}\n\n${markerLine(key)}`);
      else {
        if (found === 'absent') await note(replyMarkerNote(post.sequence, key));
        await call('POST', `/api/v2/tickets/${id}/reply`, what, { body: toHtml(post.body) });
      }
      // Setting the same status twice is harmless; Freshdesk's PUT replaces tags, so casework adds none.
      if (post.status) {
        const state = caseStateOf(post.status);
        const update: Record<string, number> = { status: statuses[state] };
        if (state === 'with_person' && config.handOffGroupId !== undefined) update.group_id = config.handOffGroupId;
        await call('PUT', `/api/v2/tickets/${id}`, `setting ticket ${post.externalTicketId} to ${state}`, update);
      }
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
