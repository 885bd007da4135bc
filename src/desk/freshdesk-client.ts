import { caseStateOf } from '../schemas/case-state';
import { idempotencyKey, markerLine, toHtml, type DeskClient, type DeskPost, type DeskPostResult } from './client';
import { basicAuth, deskFetch } from './http';
import { FRESHDESK_LIFECYCLE, type StatusTable } from './lifecycle';
import { readBack, replyMarkerNote, type ThreadEntry } from './read-back';

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

  return {
    desk: 'freshdesk',
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
