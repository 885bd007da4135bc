import { caseStateOf } from '../schemas/case-state';
import { fromHtml, idempotencyKey, markerLine, toHtml, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { deskFetch } from './http';
import { INTERCOM_LIFECYCLE, type IntercomState, type StatusTable } from './lifecycle';
import { readBack, replyMarkerNote, textOf, type ThreadEntry } from './read-back';
import { MAX_REQUESTER_TICKETS, newestFirst, openOrClosed, windowOf, type RequesterTicket, type RequesterTickets, type TicketWindow } from './requester-tickets';
import { deskTicketId } from './types';

// Intercom Conversations API (developers.intercom.com/docs/references/rest-api/api.intercom.io/
// conversations/replyconversation, .../manageconversation): POST /conversations/{id}/reply with
// {message_type: "comment" | "note", type: "admin", admin_id, body}; a note is internal. The
// state and the assignee change through "Manage a conversation", POST /conversations/{id}/parts
// {message_type: "close" | "open" | "snoozed" (with snoozed_until) | "assignment" (with assignee_id),
// type: "admin", admin_id}.
//
// Intercom has no idempotency key for replies and no private field on one, so the key lives in
// internal notes only (read-back.ts): a note ends with "ref: <key>"; a reply is announced by a
// note carrying its key, then posted without one. Before posting casework reads the conversation
// (GET /conversations/{id}, which returns its parts, up to Intercom's limit of 500).
//
// Earlier conversations (developers.intercom.com/docs/references/rest-api/api.intercom.io/
// conversations/searchconversations): the current conversation's contact, then POST
// /conversations/search {query: {field: "contact_ids", operator: "=", value}, pagination:
// {per_page: 150, starting_after}}, which answers {conversations, total_count, pages: {next:
// {starting_after}}}. Search results come in no documented order, so casework reads them all
// (within MAX_REQUESTER_TICKETS) and sorts them newest first. The order is the conversation's
// custom attribute configuration names.

/** What the Intercom client needs. */
export interface IntercomClientConfig {
  baseUrl: string;
  accessToken: string;
  /** The admin casework replies as. */
  adminId: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** State per case state; INTERCOM_LIFECYCLE by default. */
  states?: StatusTable<IntercomState>;
  /** How long a snoozed conversation sleeps, in seconds (it wakes sooner when the customer replies). */
  snoozeSeconds?: number;
  /** The admin a case handed to a person is assigned to; unset, the assignment stays as it is. */
  handOffAdminId?: string;
  now?: () => Date;
  /** The conversation's custom attribute holding the order id (CASEWORK_INTERCOM_ORDER_ATTRIBUTE); unset, earlier conversations name no order. */
  orderAttribute?: string;
}

/** Conversations a page of search answers hold: Intercom's maximum. */
export const INTERCOM_SEARCH_PAGE_SIZE = 150;

interface IntercomConversation {
  id?: string | number;
  created_at?: number;
  state?: string;
  title?: string | null;
  source?: { subject?: string | null; body?: string | null } | null;
  custom_attributes?: Record<string, unknown>;
  contacts?: { contacts?: { id?: string }[] };
}

interface IntercomPart {
  part_type?: string;
  body?: string | null;
  author?: { type?: string; id?: string | number };
}

/** A DeskClient for Intercom. */
export function createIntercomClient(config: IntercomClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const states = config.states ?? INTERCOM_LIFECYCLE;
  const now = config.now ?? (() => new Date());
  const headers = { authorization: `Bearer ${config.accessToken}`, 'intercom-version': '2.11' };
  const call = (method: 'GET' | 'POST', path: string, what: string, body?: unknown) =>
    deskFetch('intercom', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);
  const admin = { type: 'admin', admin_id: config.adminId };

  function earlierTicket(c: IntercomConversation): RequesterTicket {
    const field = config.orderAttribute ? c.custom_attributes?.[config.orderAttribute] : undefined;
    return {
      ticketId: deskTicketId('intercom', String(c.id)),
      openedAt: new Date((c.created_at ?? 0) * 1000).toISOString(),
      status: openOrClosed(c.state === 'closed'),
      subject: c.title || textOf(c.source?.subject ?? ''),
      body: fromHtml(c.source?.body ?? ''),
      orderId: typeof field === 'string' && field.trim() ? field.trim() : typeof field === 'number' ? String(field) : null,
    };
  }

  return {
    desk: 'intercom',
    async requesterTickets(externalTicketId: string, window: TicketWindow): Promise<RequesterTickets> {
      const what = `reading the earlier conversations of conversation ${externalTicketId}'s contact`;
      const current = (await call('GET', `/conversations/${encodeURIComponent(externalTicketId)}`, what)) as IntercomConversation | undefined;
      const contact = current?.contacts?.contacts?.[0]?.id;
      if (typeof contact !== 'string' || !contact) return { total: 0, items: [] };
      const found: RequesterTicket[] = [];
      let startingAfter: string | undefined;
      do {
        const got = (await call('POST', '/conversations/search', what, {
          query: { field: 'contact_ids', operator: '=', value: contact },
          pagination: { per_page: INTERCOM_SEARCH_PAGE_SIZE, ...(startingAfter ? { starting_after: startingAfter } : {}) },
        })) as { conversations?: IntercomConversation[]; pages?: { next?: { starting_after?: string } | null } } | undefined;
        for (const c of got?.conversations ?? []) if (String(c.id) !== externalTicketId) found.push(earlierTicket(c));
        startingAfter = got?.pages?.next?.starting_after ?? undefined;
      } while (startingAfter && found.length < MAX_REQUESTER_TICKETS);
      return windowOf(found.sort(newestFirst), window);
    },
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to conversation ${post.externalTicketId}`;
      const conversation = (await call('GET', `/conversations/${id}`, `checking conversation ${post.externalTicketId} before ${what}`)) as
        { state?: string; conversation_parts?: { conversation_parts?: IntercomPart[] } } | undefined;
      const entries: ThreadEntry[] = (conversation?.conversation_parts?.conversation_parts ?? []).map((part) => ({
        body: part.body ?? '',
        byCasework: part.author?.type === 'admin' && String(part.author.id) === config.adminId,
        isPublic: part.part_type === 'comment',
      }));
      const found = readBack(entries, post.kind, key, post.body);
      if (found === 'posted') return { outcome: 'already_posted', idempotencyKey: key };
      const reply = (messageType: 'comment' | 'note', text: string) =>
        call('POST', `/conversations/${id}/reply`, what, { message_type: messageType, ...admin, body: toHtml(text) });
      if (post.kind === 'note') await reply('note', `${post.body}\n\n${markerLine(key)}`);
      else {
        if (found === 'absent') await reply('note', replyMarkerNote(post.sequence, key));
        await reply('comment', post.body);
      }
      if (post.status) {
        const state = caseStateOf(post.status);
        const target = states[state];
        const manage = (body: Record<string, unknown>, doing: string) =>
          call('POST', `/conversations/${id}/parts`, `${doing} conversation ${post.externalTicketId}`, { ...body, ...admin });
        // Each change is harmless to repeat (closing a closed conversation, assigning to the same admin), so none needs a key of its own.
        if (state === 'with_person' && config.handOffAdminId) await manage({ message_type: 'assignment', assignee_id: config.handOffAdminId }, 'assigning');
        if (target === 'closed') await manage({ message_type: 'close' }, 'closing');
        else if (target === 'snoozed') await manage({ message_type: 'snoozed', snoozed_until: Math.floor(now().getTime() / 1000) + (config.snoozeSeconds ?? 86_400) }, 'snoozing');
        else if (conversation?.state !== 'open') await manage({ message_type: 'open' }, 'opening');
      }
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
