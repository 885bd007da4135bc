import { idempotencyKey, markerLine, toHtml, type DeskClient, type DeskPost, type DeskPostResult, type DeskStatus } from './client';
import { basicAuth, deskFetch } from './http';

// Freshdesk API v2 (developers.freshdesk.com/api/#reply_ticket, #add_note_to_a_ticket,
// #list_all_ticket_notes, #update_ticket): POST /api/v2/tickets/{id}/reply {body};
// POST /api/v2/tickets/{id}/notes {body, private: true}; status by PUT /api/v2/tickets/{id}
// {status} (2 open, 3 pending, 4 resolved). Auth: the API key as the Basic user, "X" as password.
//
// Freshdesk has no idempotency key either: each post ends with "ref: <key>", and before
// posting casework lists the ticket's conversations and posts nothing if one carries it.

/** What the Freshdesk client needs. */
export interface FreshdeskClientConfig {
  /** https://<domain>.freshdesk.com */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

const STATUS: Record<DeskStatus, number> = { open: 2, pending: 3, solved: 4 };

/** A DeskClient for Freshdesk. */
export function createFreshdeskClient(config: FreshdeskClientConfig): DeskClient {
  const base = config.baseUrl.replace(/\/$/, '');
  const headers = { authorization: basicAuth(config.apiKey, 'X') };
  const call = (method: 'GET' | 'POST' | 'PUT', path: string, what: string, body?: unknown) =>
    deskFetch('freshdesk', { method, url: `${base}${path}`, headers, body, what, timeoutMs: config.timeoutMs }, config.fetch);

  return {
    desk: 'freshdesk',
    async post(post: DeskPost): Promise<DeskPostResult> {
      const key = idempotencyKey(post);
      const id = encodeURIComponent(post.externalTicketId);
      const what = `posting ${post.kind} ${post.sequence} to ticket ${post.externalTicketId}`;
      const conversations = (await call('GET', `/api/v2/tickets/${id}/conversations?per_page=100`, `checking ticket ${post.externalTicketId} before ${what}`)) as
        { body?: string; body_text?: string }[] | undefined;
      if ((conversations ?? []).some((c) => c.body_text?.includes(key) || c.body?.includes(key))) return { outcome: 'already_posted', idempotencyKey: key };
      const body = toHtml(`${post.body}\n\n${markerLine(key)}`);
      if (post.kind === 'reply') await call('POST', `/api/v2/tickets/${id}/reply`, what, { body });
      else await call('POST', `/api/v2/tickets/${id}/notes`, what, { body, private: true });
      // Setting the same status twice is harmless; Freshdesk's PUT replaces tags, so casework adds none.
      if (post.status) await call('PUT', `/api/v2/tickets/${id}`, `setting ticket ${post.externalTicketId} to ${post.status}`, { status: STATUS[post.status] });
      return { outcome: 'posted', idempotencyKey: key };
    },
  };
}
