import { caseStateOf } from '../schemas/case-state';
import { idempotencyKey, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { basicAuth, deskFetch } from './http';
import { ZENDESK_LIFECYCLE, type StatusTable, type ZendeskStatus } from './lifecycle';
import { MAX_REQUESTER_TICKETS, newestFirst, openOrClosed, windowOf, type RequesterTicket, type RequesterTickets, type TicketWindow } from './requester-tickets';
import { deskTicketId } from './types';

// Zendesk Tickets API (developer.zendesk.com/api-reference/ticketing/tickets/tickets,
// .../ticket_comments): a comment is added by updating the ticket,
// PUT /api/v2/tickets/{id} {ticket: {comment: {body, public}}}; public:false is an internal note.
//
// Exactly once: the same update adds the tag "casework_<key>" (additional_tags adds without
// replacing the ticket's tags). Comment and tag land in one ticket update, atomically, so
// before posting casework reads the ticket: the tag there means an earlier attempt was applied
// (perhaps one whose answer timed out), and nothing is posted again. Customers never see tags.
// The same update sets the status the case state maps to (lifecycle.ts) and, for a case handed
// to a person, the group configured to take it.
//
// Earlier tickets (developer.zendesk.com/api-reference/ticketing/tickets/tickets/#list-tickets):
// the current ticket's requester_id, then GET /api/v2/users/{user_id}/tickets/requested with
// offset pagination (per_page at most 100, sort_by=created_at, sort_order=desc), which answers
// {tickets, next_page, previous_page, count}. The order a ticket is about is the value of the
// custom field configuration names (custom_fields: [{id, value}]).

/** What the Zendesk client needs. Credentials are held here and sent only in the Authorization header. */
export interface ZendeskClientConfig {
  /** https://<subdomain>.zendesk.com (or the stand-in's URL). */
  baseUrl: string;
  email: string;
  apiToken: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** Status per case state; ZENDESK_LIFECYCLE by default. */
  statuses?: StatusTable<ZendeskStatus>;
  /** The group a case handed to a person is assigned to (ticket.group_id); unset, the assignment stays as it is. */
  handOffGroupId?: number;
  /** The ticket field holding the order id (CASEWORK_ZENDESK_ORDER_FIELD_ID); unset, earlier tickets name no order. */
  orderFieldId?: number;
}

/** Tickets a page of the requested-tickets list holds: Zendesk's maximum. */
export const ZENDESK_PAGE_SIZE = 100;

interface ZendeskTicket {
  id?: number;
  requester_id?: number;
  subject?: string | null;
  description?: string | null;
  status?: string;
  created_at?: string;
  custom_fields?: { id?: number; value?: unknown }[];
}

/** Solved and closed tickets are done; new, open, pending and hold are still being worked. */
const ZENDESK_CLOSED = new Set(['solved', 'closed']);

/** The tag that marks a post as done on a Zendesk ticket. */
export function zendeskMarkerTag(key: string): string {
  return `casework_${key}`;
}

/** A DeskClient for Zendesk. */
export function createZendeskClient(config: ZendeskClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const statuses = config.statuses ?? ZENDESK_LIFECYCLE;
  const headers = { authorization: basicAuth(`${config.email}/token`, config.apiToken) };
  const call = (method: 'GET' | 'PUT', path: string, what: string, body?: unknown) =>
    deskFetch('zendesk', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);

  function earlierTicket(t: ZendeskTicket): RequesterTicket {
    const field = config.orderFieldId === undefined ? undefined : t.custom_fields?.find((f) => f.id === config.orderFieldId)?.value;
    return {
      ticketId: deskTicketId('zendesk', String(t.id)),
      openedAt: new Date(t.created_at ?? 0).toISOString(),
      status: openOrClosed(ZENDESK_CLOSED.has(t.status ?? '')),
      subject: t.subject ?? '',
      body: t.description ?? '',
      orderId: typeof field === 'string' && field.trim() ? field.trim() : typeof field === 'number' ? String(field) : null,
    };
  }

  return {
    desk: 'zendesk',
    async requesterTickets(externalTicketId: string, window: TicketWindow): Promise<RequesterTickets> {
      const what = `reading the earlier tickets of ticket ${externalTicketId}'s requester`;
      const current = (await call('GET', `/api/v2/tickets/${encodeURIComponent(externalTicketId)}.json`, what)) as { ticket?: ZendeskTicket } | undefined;
      const requester = current?.ticket?.requester_id;
      if (typeof requester !== 'number') return { total: 0, items: [] };
      const found: RequesterTicket[] = [];
      let count: number | undefined;
      // Enough pages for the window and one more ticket (the current one is among them), never past the bound.
      for (let page = 1; found.length < window.offset + window.limit && found.length < MAX_REQUESTER_TICKETS; page++) {
        const got = (await call('GET', `/api/v2/users/${requester}/tickets/requested.json?sort_by=created_at&sort_order=desc&per_page=${ZENDESK_PAGE_SIZE}&page=${page}`, what)) as
          { tickets?: ZendeskTicket[]; next_page?: string | null; count?: number } | undefined;
        count = got?.count;
        for (const t of got?.tickets ?? []) if (String(t.id) !== externalTicketId) found.push(earlierTicket(t));
        if (!got?.next_page) break;
      }
      // The count includes the current ticket, which is its requester's own.
      return windowOf(found.sort(newestFirst), window, count === undefined ? undefined : count - 1);
    },
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const tag = zendeskMarkerTag(key);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to ticket ${post.externalTicketId}`;
      const current = (await call('GET', `/api/v2/tickets/${id}.json`, `checking ticket ${post.externalTicketId} before ${what}`)) as { ticket?: { tags?: string[] } } | undefined;
      if (current?.ticket?.tags?.includes(tag)) return { outcome: 'already_posted', idempotencyKey: key };
      const ticket: Record<string, unknown> = {
        comment: { body: post.body, public: post.kind === 'reply' },
        additional_tags: [tag, ...(post.tags ?? [])],
      };
      if (post.status) {
        const state = caseStateOf(post.status);
        ticket.status = statuses[state];
        if (state === 'with_person' && config.handOffGroupId !== undefined) ticket.group_id = config.handOffGroupId;
      }
      await call('PUT', `/api/v2/tickets/${id}.json`, what, { ticket });
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
